/*
 * escape.c - the one escaper (lib/present/escape.c) on the byte sequences
 * that got through before: its UTF-8 validator takes no overlong form, no
 * surrogate, nothing past U+10FFFF and nothing cut short; the terminal,
 * JSON, XML and workflow-command forms of hostile text; and a buffer too
 * small cuts the text at a whole character or escape, never to nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/present.h"

static int fails;

static void expect(const char *what, const char *got, const char *want)
{
    int ok = strcmp(got, want) == 0;
    printf("%s: %s", ok ? "PASS" : "FAIL", what);
    if (!ok)
        printf(" (got \"%s\", want \"%s\")", got, want);
    printf("\n");
    fails += !ok;
}

/* What fn writes for s, as a string. */
static char *with(void (*fn)(FILE *, const char *), const char *s)
{
    static char *buf;
    size_t len = 0;
    free(buf);
    buf = NULL;
    FILE *f = open_memstream(&buf, &len);
    fn(f, s);
    fclose(f);
    return buf;
}

int main(void)
{
    static const struct { const char *bytes; size_t len; const char *what; } bad[] = {
        {"\xc0\xaf", 2, "overlong 2-byte '/'"},
        {"\xc1\xbf", 2, "overlong 2-byte"},
        {"\xe0\x80\xaf", 3, "overlong 3-byte '/'"},
        {"\xe0\x9f\xbf", 3, "overlong 3-byte U+07FF"},
        {"\xf0\x8f\xbf\xbf", 4, "overlong 4-byte U+FFFF"},
        {"\xed\xa0\x80", 3, "surrogate U+D800"},
        {"\xed\xbf\xbf", 3, "surrogate U+DFFF"},
        {"\xf4\x90\x80\x80", 4, "U+110000"},
        {"\xf5\x80\x80\x80", 4, "lead byte F5"},
        {"\xff", 1, "byte FF"},
        {"\x80", 1, "a lone continuation byte"},
        {"\xe2\x82", 2, "a character cut short"},
        {"\xe2\x82" "A", 3, "a 3-byte character whose last byte is not a continuation (E2 82 41)"},
        {"\xe2" "A" "\xac", 3, "a 3-byte character whose second byte is not a continuation"},
        {"\xf0\x9f\x98" "A", 4, "a 4-byte character whose last byte is not a continuation"},
        {"\xf0\x9f" "A" "\x80", 4, "a 4-byte character whose third byte is not a continuation"},
        {"\xe2\x82\xc0", 3, "a 3-byte character ending in a lead byte"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int ok = mt_utf8_char(bad[i].bytes, bad[i].len) == 0;
        printf("%s: not UTF-8: %s\n", ok ? "PASS" : "FAIL", bad[i].what);
        fails += !ok;
    }
    static const struct { const char *bytes; size_t len; } good[] = {
        {"A", 1}, {"\xc2\x80", 2}, {"\xdf\xbf", 2}, {"\xe0\xa0\x80", 3}, {"\xed\x9f\xbf", 3},
        {"\xee\x80\x80", 3}, {"\xef\xbf\xbd", 3}, {"\xf0\x90\x80\x80", 4}, {"\xf4\x8f\xbf\xbf", 4},
    };
    int all = 1;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        all &= mt_utf8_char(good[i].bytes, good[i].len) == good[i].len;
    printf("%s: UTF-8 up to U+10FFFF accepted, whole\n", all ? "PASS" : "FAIL");
    fails += !all;
    /* a valid character stops where it ends; an invalid one is one byte
     * of \xHH and the next character starts after it */
    static const struct { const char *bytes; size_t len, want; } first[] = {
        {"\xe2\x82\xac" "A", 4, 3}, {"\xf0\x9f\x98\x80" "A", 5, 4},
        {"\xe2\x82" "A", 3, 0}, {"\xf0\x9f\x98" "A", 4, 0}, {"A" "\xe2", 2, 1},
    };
    all = 1;
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
        all &= mt_utf8_char(first[i].bytes, first[i].len) == first[i].want;
    printf("%s: the length of the first character: 3 for the euro sign, 4 for U+1F600, 0 when cut by 'A'\n",
           all ? "PASS" : "FAIL");
    fails += !all;
    expect("terminal: E2 82 then 'A' is two bytes that are not UTF-8 and an 'A'",
           with(mt_text_put, "\xe2\x82" "A \xe2\x82\xac"), "\\xe2\\x82A \xe2\x82\xac");

    const char *evil = "\033]0;x\007 \xc2\x9b \xed\xa0\x80 caf\xc3\xa9 \x7f";
    expect("terminal: C0, C1, DEL, a surrogate as \\xHH; UTF-8 kept", with(mt_text_put, evil),
           "\\x1b]0;x\\x07 \\xc2\\x9b \\xed\\xa0\\x80 caf\xc3\xa9 \\x7f");
    expect("terminal: '::' at the start is no workflow command",
           with(mt_text_put, "  ::error title=x::y"), "  \\x3a:error title=x::y");
    expect("terminal: '::' inside a C++ name stays", with(mt_text_put, "std::vector<int>::push_back"),
           "std::vector<int>::push_back");
    expect("terminal: '##[' is no workflow command", with(mt_text_put, "a##[error]b"),
           "a\\x23#[error]b");
    expect("JSON: controls as \\u00XX, bytes that are not UTF-8 as \\ufffd", with(mt_json_string, evil),
           "\"\\u001b]0;x\\u0007 \\u009b \\ufffd\\ufffd\\ufffd caf\xc3\xa9 \\u007f\"");
    expect("JSON: overlong, past U+10FFFF", with(mt_json_string, "\xc0\xaf\xf4\x90\x80\x80\"\\"),
           "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\\"\\\\\"");
    expect("XML: entities, line ends as references, the rest as \\xHH",
           with(mt_xml_put, "<a&'\"b>\t\r\n\033\xc2\x9b\xef\xbf\xbe\xff caf\xc3\xa9"),
           "&lt;a&amp;&apos;&quot;b&gt;&#x9;&#xd;&#xa;\\x1b\\xc2\\x9b\\xef\\xbf\\xbe\\xff caf\xc3\xa9");
    expect("workflow command message: %, CR, LF encoded",
           with(mt_ci_data_put, "50% a\rb\nc::error::d\033"), "50%25 a%0Db%0Ac::error::d\\x1b");

    char buf[16];
    size_t n = mt_text_escape(buf, sizeof buf, "a_long_plain_name_of_many_bytes");
    expect("a small buffer cuts plain text at its end, not to nothing", buf, "a_long_plain_na");
    printf("%s: its length is returned (%zu)\n", n == 15 ? "PASS" : "FAIL", n);
    fails += n != 15;
    mt_text_escape(buf, 8, "abcde\033fg");
    expect("a small buffer never cuts an escape", buf, "abcde");
    mt_text_escape(buf, 8, "abcdef\xc3\xa9");
    expect("a small buffer never cuts a character", buf, "abcdef");
    size_t jl = mt_json_escaped_len("a\033\xff\"", 4);
    printf("%s: mt_json_escaped_len counts what is written (%zu)\n", jl == 15 ? "PASS" : "FAIL", jl);
    fails += jl != 15;
    return fails != 0;
}
