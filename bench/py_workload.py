# py_workload.py - a Python workload for bench/realprogs.sh: parses the
# standard library's modules with ast, walks the trees into summaries,
# serializes them with json and searches them with re, so that CPython
# allocates from many distinct sites (parser, compiler, objects, dicts).
import ast, glob, json, os, re, sys, collections

limit = int(sys.argv[1]) if len(sys.argv) > 1 else 120
root = os.path.dirname(os.__file__)
files = sorted(glob.glob(os.path.join(root, "*.py")))[:limit]
summary = {}
names = collections.Counter()
for path in files:
    with open(path, encoding="utf-8", errors="replace") as f:
        src = f.read()
    try:
        tree = ast.parse(src)
    except SyntaxError:
        continue
    kinds = collections.Counter(type(n).__name__ for n in ast.walk(tree))
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            names[n.id] += 1
    summary[os.path.basename(path)] = {"kinds": dict(kinds.most_common(10)),
                                       "lines": src.count("\n")}
text = json.dumps(summary, sort_keys=True)
calls = sum(len(re.findall(r"\b[A-Za-z_]\w*\(", open(p, encoding="utf-8", errors="replace").read())) for p in files[:40])
print(len(summary), "modules,", len(text), "bytes of json,", calls, "calls,",
      names.most_common(1)[0][0])
