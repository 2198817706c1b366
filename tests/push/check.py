#!/usr/bin/env python3
"""check.py - decodes the requests server.py saved, independently of
memtrace's encoders, and checks what each engine enforces.

usage: check.py FORMAT REQDIR OUTDIR

pyroscope  POST .../push.v1.PusherService/Push, application/json, Connect's
           JSON mapping of PushRequest: series[0].labels [{name, value}]
           with __name__=memory and service_name, samples[0].rawProfile
           (base64 of a gzipped pprof profile)
parca      POST .../profiles/writeraw, application/json, grpc-gateway's
           mapping of WriteRawRequest: series[0].labels.labels, the same
           samples, normalized false
pyroscope-ingest  POST .../ingest?name=SERVICE{K=V,...}&from=&until=
           &format=pprof&spyName=..., application/octet-stream, the body a
           gzipped pprof profile; from <= until, Unix seconds
otlp       POST .../v1development/profiles, application/x-protobuf, gzip:
           decoded with python3-protobuf from otlp_profiles.proto (compiled
           here by protoc) and checked with profcheck's rules: the zero
           value at index 0 of every dictionary table, every index in
           bounds, one value per sample (one sample type per profile),
           timestamps inside [time, time + duration), memory_start <=
           memory_limit; plus a build-id attribute on every mapping,
           service.name, process.pid and process.executable.name on the
           resource, scope "memory", the four heap profiles, period space/bytes

Every request answered 2xx is checked (the others are retried copies).
Prints "FAIL: ..." for each violation; writes OUTDIR/NNNN.pb.gz (the pprof
payloads) and OUTDIR/summary.tsv: request, status, service, inuse_space,
alloc_space, time_ns, duration_ns, labels (k=v,...) (/ingest: from and
until, in seconds, as time and duration).
"""
import base64
import glob
import gzip
import json
import os
import re
import subprocess
import sys
import urllib.parse

fmt, reqdir, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
here = os.path.dirname(os.path.abspath(__file__))
fails = 0


def fail(msg):
    global fails
    fails += 1
    print("FAIL: " + msg)


def pprof_payload(name, series):
    samples = series.get("samples", [])
    if len(samples) != 1 or "rawProfile" not in samples[0]:
        fail("%s: expected one sample with rawProfile" % name)
        return
    raw = base64.b64decode(samples[0]["rawProfile"], validate=True)
    if raw[:2] != b"\x1f\x8b":
        fail("%s: rawProfile is not gzipped" % name)
    gzip.decompress(raw)
    with open(os.path.join(outdir, name + ".pb.gz"), "wb") as f:
        f.write(raw)


def check_json(name, meta, body):
    want = "/push.v1.PusherService/Push" if fmt == "pyroscope" else "/profiles/writeraw"
    if not meta["path"].endswith(want):
        fail("%s: path %s, want .../%s" % (name, meta["path"], want))
    if meta["headers"].get("Content-Type") != "application/json":
        fail("%s: Content-Type %s" % (name, meta["headers"].get("Content-Type")))
    req = json.loads(body)
    if len(req.get("series", [])) != 1:
        fail("%s: expected one series" % name)
        return None
    s = req["series"][0]
    if fmt == "parca":
        if req.get("normalized") is not False:
            fail("%s: normalized is not false" % name)
        labels = s.get("labels", {}).get("labels", [])
    else:
        labels = s.get("labels", [])
    kv = {}
    for lab in labels:
        if set(lab) != {"name", "value"}:
            fail("%s: label %r" % (name, lab))
        if lab["name"] in kv:
            fail("%s: label %s twice" % (name, lab["name"]))
        kv[lab["name"]] = lab["value"]
    if kv.get("__name__") != "memory":
        fail("%s: __name__ is %r, want memory" % (name, kv.get("__name__")))
    if not kv.get("service_name"):
        fail("%s: no service_name" % name)
    pprof_payload(name, s)
    return kv


def check_ingest(name, meta, body):
    u = urllib.parse.urlsplit(meta["path"])
    if not u.path.endswith("/ingest"):
        fail("%s: path %s, want .../ingest" % (name, u.path))
    if meta["headers"].get("Content-Type") != "application/octet-stream":
        fail("%s: Content-Type %s" % (name, meta["headers"].get("Content-Type")))
    q = urllib.parse.parse_qs(u.query, keep_blank_values=True, strict_parsing=True)
    for k in ("name", "from", "until", "format", "spyName"):
        if len(q.get(k, [])) != 1:
            fail("%s: query parameter %s: %r" % (name, k, q.get(k)))
            return None
    if q["format"][0] != "pprof":
        fail("%s: format=%s, want pprof" % (name, q["format"][0]))
    # (with format=pprof, Pyroscope takes SERVICE as service_name verbatim:
    # no ".memory" suffix)
    m = re.fullmatch(r"([^{}=,]+)\{([^{}]*)\}", q["name"][0])
    if not m or m.group(1).endswith(".memory"):
        fail("%s: name %r is not SERVICE{K=V,...}" % (name, q["name"][0]))
        return None
    kv = {"service_name": m.group(1)}
    for pair in filter(None, m.group(2).split(",")):
        k, eq, v = pair.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) or k in kv:
            fail("%s: label %r" % (name, pair))
        kv[k] = v
    t0, t1 = int(q["from"][0]), int(q["until"][0])
    if not (1.5e9 < t0 <= t1 < 1e10):
        fail("%s: from %d until %d: not a span of Unix seconds" % (name, t0, t1))
    if body[:2] != b"\x1f\x8b":
        fail("%s: the body is not gzipped" % name)
    gzip.decompress(body)
    with open(os.path.join(outdir, name + ".pb.gz"), "wb") as f:
        f.write(body)
    return kv, t0, t1


def otlp_module():
    subprocess.check_call(["protoc", "--proto_path=" + here, "--python_out=" + outdir,
                           "otlp_profiles.proto"])
    sys.path.insert(0, outdir)
    import otlp_profiles_pb2
    return otlp_profiles_pb2


def check_otlp(pb, name, meta, body):
    h = meta["headers"]
    if not meta["path"].endswith("/v1development/profiles"):
        fail("%s: path %s" % (name, meta["path"]))
    if h.get("Content-Type") != "application/x-protobuf" or h.get("Content-Encoding") != "gzip":
        fail("%s: headers %r" % (name, h))
    req = pb.ExportProfilesServiceRequest()
    req.ParseFromString(gzip.decompress(body))
    if not req.HasField("dictionary"):
        fail("%s: no dictionary" % name)
    d = req.dictionary
    tables = [("mapping_table", pb.Mapping), ("location_table", pb.Location),
              ("function_table", pb.Function), ("link_table", pb.Link),
              ("attribute_table", pb.KeyValueAndUnit), ("stack_table", pb.Stack)]
    for t, cls in tables:
        tab = getattr(d, t)
        if not len(tab) or tab[0] != cls():
            fail("%s: %s[0] is not the zero value" % (name, t))
    if not len(d.string_table) or d.string_table[0] != "":
        fail("%s: string_table[0] is not empty" % name)
    ns = len(d.string_table)

    def idx(what, i, n):
        if not (0 <= i < n):
            fail("%s: %s index %d out of [0, %d)" % (name, what, i, n))

    for a in d.attribute_table:
        idx("attribute key", a.key_strindex, ns)
        idx("attribute unit", a.unit_strindex, ns)
    attr = {}
    build_ids = []
    for i, a in enumerate(d.attribute_table):
        attr[i] = (d.string_table[a.key_strindex] if a.key_strindex < ns else None, a.value)
    for i, m in enumerate(d.mapping_table):
        idx("mapping filename", m.filename_strindex, ns)
        for a in m.attribute_indices:
            idx("mapping attribute", a, len(d.attribute_table))
        if m.memory_limit and m.memory_start >= m.memory_limit:
            fail("%s: mapping %d: memory_start >= memory_limit" % (name, i))
        if m.memory_start > m.memory_limit:
            fail("%s: mapping %d: memory_start > memory_limit" % (name, i))
        keys = [attr.get(a, (None,))[0] for a in m.attribute_indices]
        for a in m.attribute_indices:
            if attr.get(a, (None,))[0] == "process.executable.build_id.gnu":
                build_ids.append(attr[a][1].string_value)
        if i and not any(k and k.startswith("process.executable.build_id.") for k in keys):
            fail("%s: mapping %d has no build-id attribute" % (name, i))
    for loc in d.location_table:
        idx("location mapping", loc.mapping_index, len(d.mapping_table))
        for ln in loc.lines:
            idx("line function", ln.function_index, len(d.function_table))
        for a in loc.attribute_indices:
            idx("location attribute", a, len(d.attribute_table))
    for fn in d.function_table:
        for f in (fn.name_strindex, fn.system_name_strindex, fn.filename_strindex):
            idx("function string", f, ns)
    for st in d.stack_table:
        for li in st.location_indices:
            idx("stack location", li, len(d.location_table))
    for ln in d.link_table:
        if ln.trace_id and len(ln.trace_id) != 16 or ln.span_id and len(ln.span_id) != 8:
            fail("%s: link ids of the wrong length" % name)
    if len(req.resource_profiles) != 1:
        fail("%s: %d resources" % (name, len(req.resource_profiles)))
        return None
    rp = req.resource_profiles[0]
    res = {}
    for kv in rp.resource.attributes:
        res[kv.key] = getattr(kv.value, kv.value.WhichOneof("value"))
    for k in ("service.name", "process.pid", "process.executable.name"):
        if k not in res:
            fail("%s: resource has no %s" % (name, k))
    if not isinstance(res.get("process.pid"), int) or res.get("process.pid", 0) <= 0:
        fail("%s: process.pid %r" % (name, res.get("process.pid")))
    if len(rp.scope_profiles) != 1 or rp.scope_profiles[0].scope.name != "memory":
        fail("%s: want one scope named memory" % name)
        return None
    got = {}
    want = [("inuse_space", "bytes"), ("inuse_objects", "count"),
            ("alloc_space", "bytes"), ("alloc_objects", "count")]
    span = None
    for p in rp.scope_profiles[0].profiles:
        idx("sample type", p.sample_type.type_strindex, ns)
        idx("sample unit", p.sample_type.unit_strindex, ns)
        t = (d.string_table[p.sample_type.type_strindex], d.string_table[p.sample_type.unit_strindex])
        pt = (d.string_table[p.period_type.type_strindex], d.string_table[p.period_type.unit_strindex])
        if pt != ("space", "bytes") or p.period <= 0:
            fail("%s: %s: period %r %d" % (name, t, pt, p.period))
        if p.time_unix_nano == 0:
            fail("%s: %s: no time" % (name, t))
        span = (p.time_unix_nano, p.duration_nano)
        total = 0
        for s in p.samples:
            idx("sample stack", s.stack_index, len(d.stack_table))
            if len(s.values) != 1:
                fail("%s: %s: a sample with %d values (one sample type per profile)"
                     % (name, t, len(s.values)))
            if any(v < 0 for v in s.values):
                fail("%s: %s: negative value" % (name, t))
            for a in s.attribute_indices:
                idx("sample attribute", a, len(d.attribute_table))
            idx("sample link", s.link_index, len(d.link_table))
            for ts in s.timestamps_unix_nano:
                if not (p.time_unix_nano <= ts < p.time_unix_nano + p.duration_nano):
                    fail("%s: %s: timestamp outside the profile's span" % (name, t))
            total += sum(s.values)
        got[t] = total
    if sorted(got) != sorted(want):
        fail("%s: profiles %r, want %r" % (name, sorted(got), want))
    labels = dict((k, v) for k, v in res.items())
    labels["service_name"] = res.get("service.name")
    labels["build_id"] = ",".join(build_ids)
    return labels, got.get(("inuse_space", "bytes"), 0), got.get(("alloc_space", "bytes"), 0), span


pb = otlp_module() if fmt == "otlp" else None
rows = []
for meta_path in sorted(glob.glob(os.path.join(reqdir, "[0-9]*.json"))):
    name = os.path.basename(meta_path)[:-5]
    with open(meta_path) as f:
        meta = json.load(f)
    if not 200 <= meta["status"] < 300:
        continue
    with open(os.path.join(reqdir, name + ".body"), "rb") as f:
        body = f.read()
    try:
        if fmt == "otlp":
            r = check_otlp(pb, name, meta, body)
            if r:
                kv, inuse, alloc, span = r
                rows.append([name, meta["status"], kv.get("service_name"), inuse, alloc,
                             span[0], span[1], kv])
        elif fmt == "pyroscope-ingest":
            r = check_ingest(name, meta, body)
            if r:
                kv, t0, t1 = r
                rows.append([name, meta["status"], kv.get("service_name"), "", "", t0, t1 - t0, kv])
        else:
            kv = check_json(name, meta, body)
            if kv is not None:
                rows.append([name, meta["status"], kv.get("service_name"), "", "", "", "", kv])
    except Exception as e:   # a body that does not decode is a failure, not a crash
        fail("%s: %s: %s" % (name, type(e).__name__, e))
with open(os.path.join(outdir, "summary.tsv"), "w") as f:
    for r in rows:
        kv = ",".join("%s=%s" % (k, v) for k, v in sorted(r[7].items()))
        f.write("\t".join(str(x) for x in r[:7]) + "\t" + kv + "\n")
print("checked %d requests, %d failures" % (len(rows), fails))
sys.exit(1 if fails else 0)
