/*
 * names.c - reading demangled C++ function names: where the qualified name
 * sits between the return type and the argument list (for matching), and
 * a short display form (std::string for basic_string<char, ...>, default
 * template arguments dropped, long argument lists folded). C names and
 * OCaml names pass through unchanged. See docs/names.md.
 */
#include <string.h>

#include "memtrace/analyze.h"
#include "names.h"

static int is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$';
}

static int is_op_char(char c)
{
    return c && strchr("<>=!+-*/%^&|~,", c) != NULL;
}

/* At s[i] == 'o': is this the keyword "operator"? Returns the index just
 * after the operator's name (operator<<, operator(), operator new[], ...),
 * or 0 when it is not an operator. */
static size_t operator_end(const char *s, size_t i, size_t len)
{
    if (len - i < 8 || strncmp(s + i, "operator", 8) || (i > 0 && is_ident(s[i - 1])))
        return 0;
    size_t j = i + 8;
    if (j < len && is_ident(s[j]))
        return 0;               /* "operators", "operator_x" */
    if (j + 1 < len && ((s[j] == '(' && s[j + 1] == ')') || (s[j] == '[' && s[j + 1] == ']')))
        return j + 2;
    if (j < len && is_op_char(s[j])) {
        /* the longest operator token: operator+<char> is operator+ with
         * template arguments, operator<<<char> is operator<< */
        static const char *const ops[] = {"<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=",
                                          "==", "!=", "&&", "||", "++", "--", "+=", "-=",
                                          "*=", "/=", "%=", "^=", "&=", "|=", "->"};
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            size_t l = strlen(ops[k]);
            if (len - j >= l && !strncmp(s + j, ops[k], l))
                return j + l;
        }
        return j + 1;
    }
    if (j < len && s[j] == ' ') {
        size_t k = j + 1;
        const char *words[] = {"new[]", "delete[]", "new", "delete", "\"\" "};
        for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
            size_t wl = strlen(words[w]);
            if (len - k >= wl && !strncmp(s + k, words[w], wl) &&
                (k + wl == len || !is_ident(s[k + wl])))
                return k + wl;
        }
        /* a conversion operator: the type runs up to the argument list */
        int depth = 0;
        for (; k < len; k++) {
            if (s[k] == '<')
                depth++;
            else if (s[k] == '>')
                depth--;
            else if (s[k] == '(' && depth <= 0)
                break;
        }
        return k;
    }
    return 0;
}

static const char anon_ns[] = "(anonymous namespace)";

void mta_name_span(const char *name, size_t *start, size_t *len, size_t *args)
{
    size_t n = strlen(name), st = 0, i = 0;
    int depth = 0;
    *args = n;
    while (i < n) {
        char c = name[i];
        if (depth == 0 && c == 'o') {
            size_t e = operator_end(name, i, n);
            if (e) {
                if (e + 1 < n && name[e] == ' ' && name[e + 1] == '<')
                    e++; /* operator< <int>: template arguments follow */
                i = e;
                continue;
            }
        }
        if (c == '(' && !strncmp(name + i, anon_ns, sizeof anon_ns - 1)) {
            i += sizeof anon_ns - 1;
            continue;
        }
        /* OCaml's "M.f.(fun)", "Stdlib.(@)": a parenthesis after a dot is
         * part of the name, never a C++ argument list */
        if (c == '<' || c == '[' || c == '{' ||
            (c == '(' && (depth > 0 || (i > 0 && name[i - 1] == '.'))))
            depth++;
        else if ((c == '>' || c == ']' || c == '}' || c == ')') && depth > 0)
            depth--;
        else if (c == '(' && depth == 0) {
            *args = i;
            break;
        } else if (c == ' ' && depth == 0)
            st = i + 1;
        i++;
    }
    if (*args == n) {
        /* no argument list: a C or OCaml name; keep it whole except a
         * " [clone .cold]"-like suffix */
        const char *br = strstr(name, " [clone");
        *start = 0;
        *len = br ? (size_t)(br - name) : n;
        *args = *len;
        return;
    }
    *start = st;
    *len = *args - st;
}

/* Output buffer that never overflows (the length still counts). */
typedef struct obuf {
    char *p;
    size_t cap, n;
} obuf;

static void put(obuf *o, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++, o->n++)
        if (o->n + 1 < o->cap)
            o->p[o->n] = s[i];
}

static void puts_(obuf *o, const char *s) { put(o, s, strlen(s)); }

/* Template arguments that only repeat their class's defaults. */
static int default_arg(const char *a, size_t len)
{
    static const char *const d[] = {"std::allocator<", "std::char_traits<", "std::less<",
                                    "std::default_delete<", "std::hash<", "std::equal_to<",
                                    "std::__detail::_Mod_range_hashing",
                                    "std::__detail::_Default_ranged_hash",
                                    "std::__detail::_Prime_rehash_policy",
                                    "std::__detail::_Hashtable_traits<"};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        size_t l = strlen(d[i]);
        if (len >= l && !strncmp(a, d[i], l))
            return 1;
    }
    return 0;
}

/* std::basic_X<char> -> std::X, <wchar_t> -> std::wX. */
static int typedef_name(obuf *o, const char *id, size_t idlen, const char *arg, size_t alen)
{
    static const char *const bases[] = {"string",      "string_view", "ostream",
                                        "istream",     "iostream",    "stringstream",
                                        "ostringstream", "istringstream", "fstream",
                                        "ofstream",    "ifstream",    "streambuf",
                                        "stringbuf",   "filebuf",     "ios"};
    if (idlen < 11 || strncmp(id, "std::basic_", 11))
        return 0;
    const char *b = id + 11;
    size_t bl = idlen - 11;
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        if (strlen(bases[i]) != bl || strncmp(b, bases[i], bl))
            continue;
        const char *pre;
        if (alen == 4 && !strncmp(arg, "char", 4))
            pre = "";
        else if (alen == 7 && !strncmp(arg, "wchar_t", 7))
            pre = "w";
        else if (alen == 8 && !strncmp(arg, "char16_t", 8))
            pre = "u16";
        else if (alen == 8 && !strncmp(arg, "char32_t", 8))
            pre = "u32";
        else if (alen == 7 && !strncmp(arg, "char8_t", 7))
            pre = "u8";
        else
            return 0;
        if (bl != 6 && *pre && strcmp(pre, "w"))
            return 0;
        puts_(o, "std::");
        puts_(o, pre);
        put(o, b, bl);
        return 1;
    }
    return 0;
}

#define FOLD_TEMPLATE 24 /* longer template argument lists become <…> */

static void simplify(obuf *o, const char *s, size_t len, int depth);

/* s[0] == '<': the index of the matching '>' (or len). */
static size_t match_angle(const char *s, size_t len)
{
    int d = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == 'o') {
            size_t e = operator_end(s, i, len);
            if (e) {
                i = e - 1;
                continue;
            }
        }
        if (s[i] == '<' || s[i] == '(' || s[i] == '[' || s[i] == '{')
            d++;
        else if (s[i] == '>' || s[i] == ')' || s[i] == ']' || s[i] == '}') {
            if (--d == 0)
                return i;
        }
    }
    return len;
}

/* Template arguments s[0..len) (without the brackets), simplified, to o. */
static void template_args(obuf *o, const char *s, size_t len, int depth, const char *id,
                          size_t idlen)
{
    char tmp[1024];
    obuf t = {tmp, sizeof tmp, 0};
    size_t a = 0, nargs = 0;
    char first[64];
    size_t firstlen = 0;
    int d = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] == 'o') {
            size_t e = operator_end(s, i, len);
            if (e) {
                i = e - 1;
                continue;
            }
        }
        if (i < len && (s[i] == '<' || s[i] == '(' || s[i] == '[' || s[i] == '{'))
            d++;
        else if (i < len && (s[i] == '>' || s[i] == ')' || s[i] == ']' || s[i] == '}'))
            d--;
        else if (i == len || (s[i] == ',' && d == 0)) {
            size_t b = a, e = i;
            while (b < e && s[b] == ' ')
                b++;
            while (e > b && s[e - 1] == ' ')
                e--;
            char one[1024];
            obuf ob = {one, sizeof one, 0};
            simplify(&ob, s + b, e - b, depth + 1);
            size_t ol = ob.n < sizeof one ? ob.n : sizeof one - 1;
            if (nargs > 0 && default_arg(one, ol)) {
                a = i + 1;
                continue;
            }
            if (nargs == 0) {
                firstlen = ol < sizeof first ? ol : 0;
                memcpy(first, one, firstlen);
            }
            if (nargs++)
                puts_(&t, ", ");
            put(&t, one, ol);
            a = i + 1;
        }
    }
    if (nargs == 1 && typedef_name(o, id, idlen, first, firstlen))
        return;
    put(o, id, idlen);
    if (t.n > FOLD_TEMPLATE && depth == 0) {
        puts_(o, "<…>");
        return;
    }
    puts_(o, "<");
    put(o, tmp, t.n < sizeof tmp ? t.n : sizeof tmp - 1);
    puts_(o, ">");
}

/* A qualified name or a type s[0..len), simplified, to o. */
static void simplify(obuf *o, const char *s, size_t len, int depth)
{
    if (depth > 8) {
        puts_(o, "…");
        return;
    }
    size_t i = 0;
    while (i < len) {
        char c = s[i];
        if (c == 'o') {
            size_t e = operator_end(s, i, len);
            if (e) {
                size_t t = e + (e + 1 < len && s[e] == ' ' && s[e + 1] == '<');
                if (t < len && s[t] == '<') {
                    /* operator+<char, ...>: template arguments */
                    size_t close = t + match_angle(s + t, len - t);
                    template_args(o, s + t + 1, close - t - 1, depth, s + i, t - i);
                    i = close < len ? close + 1 : len;
                } else {
                    put(o, s + i, e - i);
                    i = e;
                }
                continue;
            }
        }
        if (c == '(' && len - i >= sizeof anon_ns - 1 &&
            !strncmp(s + i, anon_ns, sizeof anon_ns - 1)) {
            puts_(o, "(anon)");
            i += sizeof anon_ns - 1;
            continue;
        }
        if (is_ident(c) || c == ':') {
            size_t j = i;
            while (j < len && (is_ident(s[j]) || s[j] == ':')) {
                if (s[j] == 'o' && j > i && s[j - 1] == ':' && operator_end(s, j, len))
                    break; /* std::operator+: the operator is handled on its own */
                j++;
            }
            /* the identifier s[i..j), with its template arguments if any */
            const char *id = s + i;
            size_t idlen = j - i;
            /* std::__cxx11::basic_string -> std::basic_string */
            char idbuf[512];
            size_t il = 0;
            for (size_t k = 0; k < idlen && il + 1 < sizeof idbuf; k++) {
                if (idlen - k >= 9 && !strncmp(id + k, "__cxx11::", 9)) {
                    k += 8;
                    continue;
                }
                idbuf[il++] = id[k];
            }
            if (j < len && s[j] == '<') {
                size_t close = j + match_angle(s + j, len - j);
                template_args(o, s + j + 1, close - j - 1, depth, idbuf, il);
                i = close < len ? close + 1 : len;
            } else {
                put(o, idbuf, il);
                i = j;
            }
            continue;
        }
        if (c == '{') {
            /* {lambda(int)#1}: keep "lambda#1" */
            size_t e = i, d = 0;
            for (; e < len; e++) {
                if (s[e] == '{')
                    d++;
                else if (s[e] == '}' && --d == 0)
                    break;
            }
            if (len - i > 7 && !strncmp(s + i, "{lambda(", 8)) {
                const char *hash = memchr(s + i, '#', e - i);
                puts_(o, "{lambda");
                if (hash)
                    put(o, hash, (size_t)(s + e - hash));
                puts_(o, "}");
            } else
                put(o, s + i, (e < len ? e + 1 : len) - i);
            i = e < len ? e + 1 : len;
            continue;
        }
        put(o, &c, 1);
        i++;
    }
}

/* std::string::basic_string<std::allocator<char>> -> std::string::string:
 * constructors and destructors of the classes typedef_name renames. */
static void rename_ctor(obuf *o)
{
    static const char *const from[] = {"std::string::basic_string<std::allocator<char>>",
                                       "std::string::basic_string", "std::string::~basic_string",
                                       "std::ostream::basic_ostream", "std::istream::basic_istream"};
    static const char *const to[] = {"std::string::string", "std::string::string",
                                     "std::string::~string", "std::ostream::ostream",
                                     "std::istream::istream"};
    if (o->n >= o->cap)
        return;
    for (size_t i = 0; i < sizeof from / sizeof from[0]; i++) {
        size_t fl = strlen(from[i]), tl = strlen(to[i]);
        if (o->n >= fl && !strncmp(o->p + o->n - fl, from[i], fl)) {
            o->n -= fl;
            put(o, to[i], tl);
            return;
        }
    }
}

size_t mt_name_simplify(const char *name, char *out, size_t cap)
{
    obuf o = {out, cap, 0};
    size_t st, len, args;
    mta_name_span(name, &st, &len, &args);
    simplify(&o, name + st, len, 0);
    rename_ctor(&o);
    size_t n = strlen(name);
    if (args < n && name[args] == '(') {
        /* the argument list: "()" or "(…)" */
        size_t k = args + 1;
        while (k < n && name[k] == ' ')
            k++;
        puts_(&o, k < n && name[k] == ')' ? "()" : "(…)");
    }
    if (cap)
        out[o.n < cap ? o.n : cap - 1] = 0;
    return o.n;
}

size_t mt_name_qualified(const char *name, char *out, size_t cap)
{
    size_t st, len, args;
    mta_name_span(name, &st, &len, &args);
    if (cap) {
        size_t k = len < cap ? len : cap - 1;
        memcpy(out, name + st, k);
        out[k] = 0;
    }
    return len;
}
