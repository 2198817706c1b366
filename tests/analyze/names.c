/*
 * names.c - unit test of C++ display names (mt_name_simplify,
 * mt_name_qualified) and of the allocation plumbing list
 * (mt_plumbing_match): names as the recorder writes them, demangled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/analyze.h"

static int failures;

static void simp(const char *name, const char *want)
{
    char buf[1024];
    mt_name_simplify(name, buf, sizeof buf);
    if (strcmp(buf, want)) {
        printf("FAIL: simplify '%s'\n   got  '%s'\n   want '%s'\n", name, buf, want);
        failures++;
    } else
        printf("PASS: '%s' shows as '%s'\n", name, want);
}

static void qual(const char *name, const char *want)
{
    char buf[1024];
    mt_name_qualified(name, buf, sizeof buf);
    if (strcmp(buf, want)) {
        printf("FAIL: qualified '%s'\n   got  '%s'\n   want '%s'\n", name, buf, want);
        failures++;
    } else
        printf("PASS: qualified name of '%s' is '%s'\n", name, want);
}

static void plumb(const mt_plumbing *p, const char *name, int want)
{
    int got = mt_plumbing_match(p, name);
    if (got != want) {
        printf("FAIL: '%s' is %splumbing, want %splumbing\n", name, got ? "" : "not ",
               want ? "" : "not ");
        failures++;
    } else
        printf("PASS: '%s' is %splumbing\n", name, want ? "" : "not ");
}

#define STR "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >"

/* docs/names.md lists the built-in plumbing patterns in a table under
 * "### The built-in list": the same set as mt_plumbing_builtin(). */
static void docs_list(void)
{
    FILE *f = fopen("docs/names.md", "r");
    if (!f) {
        printf("PASS: (docs/names.md not found from here: list not compared)\n");
        return;
    }
    char line[4096], *doc[512];
    size_t nd = 0;
    int in = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "### ", 4))
            in = !strncmp(line, "### The built-in list", 21);
        char *cell = in && line[0] == '|' ? strchr(line + 1, '|') : NULL;
        for (char *p = cell; p && (p = strchr(p, '`')) != NULL;) {
            char *e = strchr(p + 1, '`');
            if (!e || nd == 512)
                break;
            doc[nd++] = strndup(p + 1, (size_t)(e - p - 1));
            p = e + 1;
        }
    }
    fclose(f);
    const char *const *b = mt_plumbing_builtin();
    size_t nb = 0, missing = 0;
    for (; b[nb]; nb++) {
        size_t k = 0;
        while (k < nd && strcmp(doc[k], b[nb]))
            k++;
        if (k == nd) {
            printf("FAIL: built-in plumbing pattern '%s' is not in docs/names.md\n", b[nb]);
            missing++;
        }
    }
    for (size_t k = 0; k < nd; k++) {
        size_t i = 0;
        while (b[i] && strcmp(doc[k], b[i]))
            i++;
        if (!b[i]) {
            printf("FAIL: docs/names.md lists '%s', which is not built in\n", doc[k]);
            missing++;
        }
        free(doc[k]);
    }
    if (missing)
        failures++;
    else
        printf("PASS: docs/names.md lists the %zu built-in plumbing patterns\n", nb);
}

int main(void)
{
    docs_list();
    /* C and OCaml names are left alone */
    simp("parse_message", "parse_message");
    simp("Stdlib__List.map", "Stdlib__List.map");
    simp("Dune__exe__Leak.churn.(fun)", "Dune__exe__Leak.churn.(fun)");
    simp("Stdlib.(@)", "Stdlib.(@)");
    simp("0x55d0c0de1234", "0x55d0c0de1234");
    simp("main", "main");
    simp("[truncated]", "[truncated]");   /* the depth-limit marker frame */
    simp("libstdc++.so.6+0xd44a3", "libstdc++.so.6+0xd44a3");
    /* std::string, default template arguments, folded argument lists */
    simp(STR "::_M_create(unsigned long&, unsigned long)", "std::string::_M_create(…)");
    simp("std::__new_allocator<char>::allocate(unsigned long, void const*)",
         "std::__new_allocator<char>::allocate(…)");
    simp("std::vector<double, std::allocator<double> >* shapes::make_many<double>(int)",
         "shapes::make_many<double>(…)");
    simp("std::vector<" STR ", std::allocator<" STR " > >::push_back(" STR " const&)",
         "std::vector<std::string>::push_back(…)");
    simp("std::map<int, " STR ", std::less<int>, std::allocator<std::pair<int const, " STR
         " > > >::operator[](int const&)",
         "std::map<int, std::string>::operator[](…)");
    simp("std::map<" STR ", std::vector<" STR ", std::allocator<" STR " > >, std::less<" STR
         ">, std::allocator<std::pair<" STR " const, std::vector<" STR ", std::allocator<" STR
         " > > > > >::operator[](" STR " const&)",
         "std::map<…>::operator[](…)");
    simp(STR " std::operator+<char, std::char_traits<char>, std::allocator<char> >(" STR "&&, "
         "char const*)",
         "std::operator+<char>(…)");
    simp(STR "::basic_string<std::allocator<char> >(char const*, std::allocator<char> const&)",
         "std::string::string(…)");
    simp("std::unique_ptr<Node, std::default_delete<Node> >::reset(Node*)",
         "std::unique_ptr<Node>::reset(…)");
    simp("void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>("
         "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)",
         "std::vector<int>::_M_realloc_insert<int const&>(…)");
    simp("operator new(unsigned long)", "operator new(…)");
    simp("bool operator< <int>(Foo<int> const&, Foo<int> const&)", "operator< <int>(…)");
    simp("std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >("
         "std::basic_ostream<char, std::char_traits<char> >&, char const*)",
         "std::operator<< <std::char_traits<char>>(…)");
    simp("(anonymous namespace)::Pool::grow()", "(anon)::Pool::grow()");
    simp("main::{lambda(int)#1}::operator()(int) const", "main::{lambda#1}::operator()(…)");
    simp("worker(int) [clone .cold]", "worker(…)");
    qual("void std::vector<int, std::allocator<int> >::_M_realloc_insert<int>(int&&)",
         "std::vector<int, std::allocator<int> >::_M_realloc_insert<int>");
    qual("operator new[](unsigned long)", "operator new[]");
    qual("xmalloc", "xmalloc");
    qual("(anonymous namespace)::f(int)", "(anonymous namespace)::f");
    /* a tiny buffer never overflows and still returns the full length */
    char small[8];
    size_t n = mt_name_simplify(STR "::_M_create(unsigned long&)", small, sizeof small);
    if (strlen(small) != 7 || n != strlen("std::string::_M_create(…)")) {
        printf("FAIL: small buffer: '%s' %zu\n", small, n);
        failures++;
    } else
        printf("PASS: a small buffer holds the start and the full length is returned\n");

    /* hostile names: random brackets, operators and spaces, a huge one;
     * the output stays within the buffer and every call ends quickly */
    {
        static const char alphabet[] = "<>()[]{}:, o#abperatn&*~=-";
        char name[301], out[256];
        unsigned seed = 12345;
        int bad = 0;
        for (int k = 0; k < 200000 && !bad; k++) {
            size_t len = (seed = seed * 1103515245u + 12345u) >> 16 & 255;
            for (size_t i = 0; i < len; i++) {
                seed = seed * 1103515245u + 12345u;
                name[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
            }
            name[len] = 0;
            mt_name_simplify(name, out, sizeof out);
            mt_name_qualified(name, out, sizeof out);
            if (strlen(out) >= sizeof out)
                bad = 1;
        }
        size_t big = 1 << 20;
        char *huge = malloc(big + 1);
        for (size_t i = 0; i < big; i++)
            huge[i] = "std::a<b<(c, "[i % 13];
        huge[big] = 0;
        mt_name_simplify(huge, out, sizeof out);
        memset(huge, '<', big);
        mt_name_simplify(huge, out, sizeof out);
        free(huge);
        if (bad) {
            printf("FAIL: random names overflow the output\n");
            failures++;
        } else
            printf("PASS: 200000 random names and two 1 MiB names simplified within bounds\n");
    }

    mt_plumbing *p = mt_plumbing_new(1);
    plumb(p, "std::__new_allocator<char>::allocate(unsigned long, void const*)", 1);
    plumb(p, "void " STR "::_M_construct<char*>(char*, char*, std::forward_iterator_tag)", 1);
    plumb(p, "operator new(unsigned long)", 1);
    plumb(p, "operator new[](unsigned long)", 1);
    plumb(p, "xmalloc", 1);
    plumb(p, "g_malloc0", 1);
    plumb(p, "PyMem_RawMalloc", 1);
    plumb(p, "sqlite3Malloc", 1);
    plumb(p, "sqlite3DbMallocRawNN", 1);
    /* common wrappers of well-known programs: Redis, x264, FFmpeg */
    plumb(p, "zmalloc", 1);
    plumb(p, "zcalloc", 1);
    plumb(p, "zrealloc_usable", 1);
    plumb(p, "ztrymalloc_usable_internal", 1);
    plumb(p, "zstrdup", 1);
    plumb(p, "zmalloc_get_rss", 0);
    plumb(p, "x264_malloc", 1);
    plumb(p, "av_malloc", 1);
    plumb(p, "av_buffer_realloc", 1);
    /* PostgreSQL, Perl, APR, nginx, talloc, CPython, Ruby, Lua, libxml2, git */
    plumb(p, "palloc", 1);
    plumb(p, "palloc0", 1);
    plumb(p, "repalloc", 1);
    plumb(p, "pstrdup", 1);
    plumb(p, "MemoryContextAllocZero", 1);
    plumb(p, "MemoryContextAllocExtended", 1);
    plumb(p, "AllocSetAlloc", 1);
    plumb(p, "AllocSetAllocLarge", 1);
    plumb(p, "AllocSetRealloc", 1);
    plumb(p, "MemoryContextReset", 0);
    plumb(p, "AllocSetContextCreateInternal", 0);
    plumb(p, "pallocate_tuple", 0);
    plumb(p, "Perl_safesysmalloc", 1);
    plumb(p, "Perl_safesysrealloc", 1);
    plumb(p, "Perl_sv_grow", 0);
    plumb(p, "apr_palloc", 1);
    plumb(p, "apr_pool_create_ex", 0);
    plumb(p, "ngx_palloc", 1);
    plumb(p, "ngx_pnalloc", 1);
    plumb(p, "ngx_pcalloc", 1);
    plumb(p, "ngx_create_pool", 0);
    plumb(p, "_talloc_zero", 1);
    plumb(p, "talloc_strdup", 1);
    plumb(p, "pymalloc_alloc", 1);
    plumb(p, "_PyObject_GC_New", 1);
    plumb(p, "PyList_New", 0);
    plumb(p, "ruby_xmalloc2", 1);
    plumb(p, "luaM_malloc_", 1);
    plumb(p, "luaH_new", 0);
    plumb(p, "xmlStrdup", 1);
    plumb(p, "CRYPTO_malloc", 1);
    plumb(p, "xmallocz", 1);
    plumb(p, "std::vector<double, std::allocator<double> >* shapes::make_many<double>(int)", 0);
    plumb(p, "new_session", 0);
    plumb(p, "xmallocate_session", 0);
    plumb(p, "main", 0);
    plumb(p, "[truncated]", 0);
    plumb(p, "mystd::alloc()", 0);
    mt_plumbing_add(p, "mypool_*");
    mt_plumbing_add(p, "!std::make_unique*");
    plumb(p, "mypool_alloc", 1);
    plumb(p, "std::unique_ptr<Foo, std::default_delete<Foo> > std::make_unique<Foo>()", 0);
    mt_plumbing_free(p);
    mt_plumbing *none = mt_plumbing_new(0);
    plumb(none, "xmalloc", 0);
    mt_plumbing_free(none);
    return failures ? 1 : 0;
}
