#!/bin/sh
# gen_c.sh N - writes to stdout a C file of about 12*N lines: N functions
# over structs, arrays, switch statements and loops, for bench/realprogs.sh
# to compile (a compiler allocating from many distinct sites).
n=${1:-1500}
awk -v n="$n" 'BEGIN {
    print "#include <stddef.h>"
    print "struct node { int key; double w; struct node *next; char tag[16]; };"
    for (i = 0; i < n; i++) {
        printf "static int table_%d[%d] = { %d, %d, %d };\n", i, 3 + i % 5, i, i * 3, i * 7
        printf "int fn_%d(struct node *p, int x) {\n", i
        printf "    int acc = %d;\n", i
        printf "    for (int k = 0; k < x %% %d + 3; k++) {\n", 5 + i % 11
        printf "        switch ((k + x) %% 4) {\n"
        printf "        case 0: acc += table_%d[k %% 3] * (p ? p->key : %d); break;\n", i, i
        printf "        case 1: acc ^= (int)(p ? p->w * %d.5 : %d); break;\n", i % 9, i
        printf "        case 2: if (p && p->next) acc -= fn_%d(p->next, x - 1); break;\n", (i > 0 ? i - 1 : 0)
        printf "        default: acc = acc * %d + (int)sizeof(struct node); break;\n", 3 + i % 7
        printf "        }\n    }\n"
        printf "    return acc + (x > %d ? fn_%d(p, x / 2) : 0);\n}\n", 100 + i, (i > 0 ? i - 1 : 0)
    }
}'
