/*
 * symbolize.c - return address -> locations, with libdw (elfutils).
 *
 * For an address in a module with DWARF: the line table gives file:line of
 * the innermost location; the scope DIEs around the address give the
 * function, and each DW_TAG_inlined_subroutine on the way out adds the
 * location of its call site in the enclosing function. Function names are
 * linkage names demangled with the C++ runtime's __cxa_demangle when the
 * process has one, else the DWARF name.
 * Without DWARF: the ELF symbol (demangled) with the module as file name,
 * or "module+0xoffset" when there is no symbol either.
 *
 * Return addresses point after the call instruction: lookups use addr - 1.
 * Results are cached per address (the writer asks again whenever a code
 * falls out of its backtrace cache).
 */
#include <dlfcn.h>
#include <link.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolize.h"

#define MAX_INLINE 64

struct entry {
    mt_location_code code;   /* 0 = empty slot */
    mt_location *locs;
    size_t n;
    int known;
};

struct mtr_symbolizer {
    Dwfl *dwfl;
    Dwfl_Callbacks cb;
    char *debuginfo_path;
    struct entry *table;
    size_t cap, used;
    struct timespec last_report;
    unsigned long long loads;      /* dlpi_adds + dlpi_subs at the last report */
    char *(*demangle)(const char *, char *, size_t *, int *);
    int demangle_tried;
};

/* How many times objects were loaded or unloaded so far (glibc counts). */
static int count_loads(struct dl_phdr_info *info, size_t size, void *data)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *(unsigned long long *)data = info->dlpi_adds + info->dlpi_subs;
    return 1;
}

static unsigned long long loads_now(void)
{
    unsigned long long n = 0;
    dl_iterate_phdr(count_loads, &n);
    return n;
}

static void report(mtr_symbolizer *s)
{
    s->loads = loads_now();
    dwfl_report_begin(s->dwfl);
    dwfl_linux_proc_report(s->dwfl, getpid());
    dwfl_report_end(s->dwfl, NULL, NULL);
    clock_gettime(CLOCK_MONOTONIC, &s->last_report);
}

mtr_symbolizer *mtr_sym_new(void)
{
    mtr_symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cb.find_elf = dwfl_linux_proc_find_elf;
    s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
    s->cb.debuginfo_path = &s->debuginfo_path;
    s->dwfl = dwfl_begin(&s->cb);
    if (!s->dwfl) {
        free(s);
        return NULL;
    }
    report(s);
    s->demangle = (char *(*)(const char *, char *, size_t *, int *))
        dlsym(RTLD_DEFAULT, "__cxa_demangle");
    return s;
}

static char *name_of(mtr_symbolizer *s, const char *raw)
{
    if (!raw)
        return strdup("??");
    if (raw[0] == '_' && raw[1] == 'Z') {
        if (!s->demangle && !s->demangle_tried) {
            /* A C program that dlopen'ed C++ code: find the runtime. */
            s->demangle_tried = 1;
            void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
            if (h)
                s->demangle = (char *(*)(const char *, char *, size_t *, int *))
                    dlsym(h, "__cxa_demangle");
        }
        if (s->demangle) {
            int status = -1;
            char *d = s->demangle(raw, NULL, NULL, &status);
            if (d && status == 0)
                return d;
            free(d);
        }
    }
    return strdup(raw);
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *n = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
        n = dwarf_formstring(&a);
    return n ? n : dwarf_diename(die);
}

static int is_function(Dwarf_Die *die)
{
    int tag = dwarf_tag(die);
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
           tag == DW_TAG_entry_point;
}

/* File name of the call site of an inlined subroutine. */
static const char *call_file(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    Dwarf_Word idx;
    Dwarf_Die cu;
    Dwarf_Files *files;
    size_t nfiles;
    if (!dwarf_attr(die, DW_AT_call_file, &a) || dwarf_formudata(&a, &idx) != 0)
        return NULL;
    if (!dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 ||
        idx >= nfiles)
        return NULL;
    return dwarf_filesrc(files, idx, NULL, NULL);
}

static int call_line(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    Dwarf_Word line;
    if (!dwarf_attr(die, DW_AT_call_line, &a) || dwarf_formudata(&a, &line) != 0)
        return 0;
    return (int)line;
}

static void add(mtr_symbolizer *s, mt_location *out, size_t *n, const char *file, int line,
                const char *fn)
{
    if (*n >= MAX_INLINE)
        return;
    out[*n].filename = strdup(file ? file : "??");
    out[*n].defname = name_of(s, fn);
    out[*n].line = line > 0 ? (uint32_t)line : 0;
    out[*n].start_char = 0;
    out[*n].end_char = 0;
    (*n)++;
}

/* Locations for pc (already minus 1), innermost first; returns count. */
static size_t lookup(mtr_symbolizer *s, Dwarf_Addr pc, mt_location *out)
{
    size_t n = 0;
    Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
    if (!mod) {
        /* A library loaded since the last look at the process's mappings? */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (loads_now() != s->loads || now.tv_sec - s->last_report.tv_sec >= 2) {
            report(s);
            mod = dwfl_addrmodule(s->dwfl, pc);
        }
        if (!mod)
            return 0;
    }
    const char *file = NULL;
    int line = 0;
    Dwfl_Line *l = dwfl_module_getsrc(mod, pc);
    if (l)
        file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);

    Dwarf_Addr bias;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias);
    Dwarf_Die *scopes = NULL;
    int ns = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
    int fi = -1;
    for (int i = 0; i < ns; i++)
        if (is_function(&scopes[i])) {
            fi = i;
            break;
        }
    if (fi >= 0 && dwarf_tag(&scopes[fi]) == DW_TAG_inlined_subroutine) {
        Dwarf_Die *chain = NULL;
        int nc = dwarf_getscopes_die(&scopes[fi], &chain);
        for (int j = 0; j < nc; j++) {
            if (!is_function(&chain[j]))
                continue;
            add(s, out, &n, file, line, die_name(&chain[j]));
            if (dwarf_tag(&chain[j]) != DW_TAG_inlined_subroutine)
                break;
            file = call_file(&chain[j]);
            line = call_line(&chain[j]);
        }
        free(chain);
    } else if (fi >= 0) {
        add(s, out, &n, file, line, die_name(&scopes[fi]));
    }
    free(scopes);
    if (n > 0)
        return n;

    /* No DWARF function: the symbol table. */
    Dwarf_Addr start = 0;
    const char *modname = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
    GElf_Off off;
    GElf_Sym sym;
    const char *symname = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
    if (!modname)
        modname = "??";
    if (file) {
        add(s, out, &n, file, line, symname);
    } else if (symname) {
        add(s, out, &n, modname, 0, symname);
    } else {
        const char *base = strrchr(modname, '/');
        char buf[512];
        snprintf(buf, sizeof buf, "%s+0x%llx", base ? base + 1 : modname,
                 (unsigned long long)(pc + 1 - start));
        add(s, out, &n, modname, 0, buf);
    }
    return n;
}

static struct entry *slot(mtr_symbolizer *s, mt_location_code code)
{
    size_t i = (size_t)((code * 0x9e3779b97f4a7c15ULL) >> 20) & (s->cap - 1);
    while (s->table[i].code && s->table[i].code != code)
        i = (i + 1) & (s->cap - 1);
    return &s->table[i];
}

static int grow(mtr_symbolizer *s)
{
    size_t ocap = s->cap;
    struct entry *old = s->table;
    size_t ncap = ocap ? ocap * 2 : 1024;
    struct entry *t = calloc(ncap, sizeof *t);
    if (!t)
        return -1;
    s->table = t;
    s->cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].code)
            *slot(s, old[i].code) = old[i];
    free(old);
    return 0;
}

int mtr_sym_resolve(void *ctx, mt_location_code code, const mt_location **locs, size_t *n)
{
    mtr_symbolizer *s = ctx;
    if (!s || code == 0)
        return -1;
    if ((s->used + 1) * 2 > s->cap && grow(s) != 0)
        return -1;
    struct entry *e = slot(s, code);
    if (!e->code) {
        mt_location tmp[MAX_INLINE];
        size_t k = lookup(s, (Dwarf_Addr)code - 1, tmp);
        e->code = code;
        e->n = k;
        e->known = k > 0;
        e->locs = NULL;
        if (k) {
            e->locs = malloc(k * sizeof *e->locs);
            if (!e->locs) {
                e->n = 0;
                e->known = 0;
            } else {
                for (size_t i = 0; i < k; i++)   /* outermost first */
                    e->locs[i] = tmp[k - 1 - i];
            }
        }
        s->used++;
    }
    if (!e->known)
        return -1;
    *locs = e->locs;
    *n = e->n;
    return 0;
}
