/*
 * dwarf.c - module offset -> locations, with libdw (elfutils), outside the
 * profiled process.
 *
 * Each module is reported to a Dwfl of its own, from its path on disk;
 * libdw finds separate debug information (/usr/lib/debug by build-id or
 * debuglink). For an address with DWARF: the line table gives file:line of
 * the innermost location; the scope DIEs around the address give the
 * function, and each DW_TAG_inlined_subroutine on the way out adds the
 * location of its call site in the enclosing function. Function names are
 * linkage names demangled with the C++ runtime's __cxa_demangle (loaded on
 * first need), else the DWARF name. Without DWARF: the ELF symbol with the
 * module as file name and no line, found by bisection in a table of the
 * module's function symbols sorted once (libdw's dwfl_module_addrinfo scans
 * the whole symbol table at each call). Without a symbol either: nothing (the
 * raw frame stays).
 *
 * Return addresses point after the call instruction: lookups use addr - 1.
 */
#include <dlfcn.h>
#include <gelf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../trace/rawframe.h"
#include "dwarf.h"

struct sym {
    GElf_Addr lo, hi;    /* [lo, hi) in the Dwfl's addresses; hi = lo when unsized */
    const char *name;    /* owned by libdw */
    int rank;            /* binding preference: global 0, weak 1, local 2 */
};

struct module {
    struct sym *syms;    /* function symbols sorted by lo; built on first need */
    size_t nsyms;
    int syms_built;
    char *path;
    Dwfl *dwfl;
    Dwfl_Module *mod;
    Dwarf_Addr bias;   /* address in the Dwfl = offset + bias */
    uint32_t fp;       /* fingerprint of the file on disk */
    int usable;
};

struct mts_dwarf {
    struct module *mods;
    size_t n, cap;
    Dwfl_Callbacks cb;
    char *debuginfo_path;
    char *(*demangle)(const char *, char *, size_t *, int *);
    int demangle_tried;
};

mts_dwarf *mts_dwarf_new(void)
{
    mts_dwarf *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->cb.find_elf = dwfl_build_id_find_elf;
    d->cb.find_debuginfo = dwfl_standard_find_debuginfo;
    d->cb.section_address = dwfl_offline_section_address;
    d->cb.debuginfo_path = &d->debuginfo_path;
    return d;
}

void mts_dwarf_free(mts_dwarf *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        if (d->mods[i].dwfl)
            dwfl_end(d->mods[i].dwfl);
        free(d->mods[i].path);
        free(d->mods[i].syms);
    }
    free(d->mods);
    free(d);
}

static struct module *open_module(mts_dwarf *d, const char *path)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->mods[i].path, path) == 0)
            return &d->mods[i];
    if (d->n == d->cap) {
        size_t nc = d->cap ? 2 * d->cap : 16;
        struct module *m = realloc(d->mods, nc * sizeof *m);
        if (!m)
            return NULL;
        d->mods = m;
        d->cap = nc;
    }
    struct module *m = &d->mods[d->n];
    memset(m, 0, sizeof *m);
    m->path = strdup(path);
    if (!m->path)
        return NULL;
    d->n++;
    /* Only regular files: a trace names paths, and a FIFO or a device named
     * by a damaged or hostile trace must not block or feed us forever. */
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return m;
    m->dwfl = dwfl_begin(&d->cb);
    if (!m->dwfl)
        return m;
    dwfl_report_begin(m->dwfl);
    const char *base = strrchr(path, '/');
    m->mod = dwfl_report_elf(m->dwfl, base ? base + 1 : path, path, -1, 0, false);
    dwfl_report_end(m->dwfl, NULL, NULL);
    if (!m->mod || !dwfl_module_getelf(m->mod, &m->bias))
        return m;
    const unsigned char *bits;
    GElf_Addr vaddr;
    int len = dwfl_module_build_id(m->mod, &bits, &vaddr);
    if (len > 0)
        m->fp = mt_raw_fingerprint(bits, (size_t)len, 0);
    else if (stat(path, &st) == 0)
        m->fp = mt_raw_fingerprint(NULL, 0, (uint64_t)st.st_size);
    m->usable = 1;
    return m;
}

static char *name_of(mts_dwarf *d, const char *raw)
{
    if (!raw)
        return strdup("??");
    if (raw[0] == '_' && raw[1] == 'Z') {
        if (!d->demangle_tried) {
            d->demangle_tried = 1;
            void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
            if (h)
                d->demangle = (char *(*)(const char *, char *, size_t *, int *))
                    dlsym(h, "__cxa_demangle");
        }
        if (d->demangle) {
            int status = -1;
            char *s = d->demangle(raw, NULL, NULL, &status);
            if (s && status == 0)
                return s;
            free(s);
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

static void add(mts_dwarf *d, mt_location *out, size_t *n, size_t max, const char *file,
                int line, const char *fn)
{
    if (*n >= max)
        return;
    out[*n].filename = strdup(file ? file : "??");
    out[*n].defname = name_of(d, fn);
    out[*n].line = line > 0 ? (uint32_t)line : 0;
    out[*n].start_char = 0;
    out[*n].end_char = 0;
    (*n)++;
}

static int by_address(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return (x->hi > y->hi) - (x->hi < y->hi);
}

static void build_symbols(struct module *m)
{
    m->syms_built = 1;
    int n = dwfl_module_getsymtab(m->mod);
    if (n <= 0)
        return;
    m->syms = malloc((size_t)n * sizeof *m->syms);
    if (!m->syms)
        return;
    for (int i = 0; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!name || !*name || sym.st_shndx == SHN_UNDEF ||
            (type != STT_FUNC && type != STT_GNU_IFUNC))
            continue;
        int bind = GELF_ST_BIND(sym.st_info);
        m->syms[m->nsyms++] = (struct sym){
            addr, addr + sym.st_size, name,
            bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2};
    }
    qsort(m->syms, m->nsyms, sizeof *m->syms, by_address);
    /* One entry per address: the preferred name (sorted first) stays. */
    size_t k = 0;
    for (size_t i = 0; i < m->nsyms; i++)
        if (k == 0 || m->syms[k - 1].lo != m->syms[i].lo)
            m->syms[k++] = m->syms[i];
        else if (m->syms[i].hi > m->syms[k - 1].hi)
            m->syms[k - 1].hi = m->syms[i].hi;
    m->nsyms = k;
}

/* The function symbol whose range holds pc; an unsized symbol holds
 * everything up to the next symbol. */
static const char *symbol_at(struct module *m, GElf_Addr pc)
{
    if (!m->syms_built)
        build_symbols(m);
    size_t lo = 0, hi = m->nsyms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->syms[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct sym *s = &m->syms[lo - 1];
    if (pc < s->hi || (s->hi == s->lo && (lo == m->nsyms || pc < m->syms[lo].lo)))
        return s->name;
    return NULL;
}

/* Locations for pc (already minus 1), innermost first; returns count. */
static size_t lookup(mts_dwarf *d, struct module *m, Dwarf_Addr pc, mt_location *out,
                     size_t max)
{
    size_t n = 0;
    Dwfl_Module *mod = m->mod;
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
            add(d, out, &n, max, file, line, die_name(&chain[j]));
            if (dwarf_tag(&chain[j]) != DW_TAG_inlined_subroutine)
                break;
            file = call_file(&chain[j]);
            line = call_line(&chain[j]);
        }
        free(chain);
    } else if (fi >= 0) {
        add(d, out, &n, max, file, line, die_name(&scopes[fi]));
    }
    free(scopes);
    if (n > 0)
        return n;

    /* No DWARF function: the symbol table. */
    const char *symname = symbol_at(m, pc);
    if (symname)
        add(d, out, &n, max, file ? file : m->path, file ? line : 0, symname);
    return n;
}

int mts_dwarf_lookup(mts_dwarf *d, const char *path, uint32_t fingerprint, uint64_t offset,
                     mt_location *out, size_t max)
{
    struct module *m = open_module(d, path);
    if (!m || !m->usable)
        return MTS_NO_MODULE;
    if (fingerprint && m->fp != fingerprint)
        return MTS_CHANGED;
    if (max == 0 || offset == 0)
        return MTS_NO_SYMBOL;
    mt_location tmp[max];
    size_t k = lookup(d, m, (Dwarf_Addr)(offset + m->bias - 1), tmp, max);
    if (k == 0)
        return MTS_NO_SYMBOL;
    for (size_t i = 0; i < k; i++)   /* outermost first */
        out[i] = tmp[k - 1 - i];
    return (int)k;
}
