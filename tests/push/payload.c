/*
 * payload.c - lib/push/payload.c with known answers: base64 against RFC
 * 4648's test vectors, the formats guessed from URLs and the endpoints
 * built from them, Pyroscope /ingest's query, label names, the JSON bodies of Pyroscope and Parca
 * (parsed back by structure: labels in order, escaping, the payload's
 * base64), the auth file's rules, and the summary line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "push/push.h"

static int streq_free(char *got, const char *want)
{
    int ok = got && !strcmp(got, want);
    if (!ok)
        printf("  got '%s', want '%s'\n", got ? got : "(null)", want);
    free(got);
    return ok;
}

int main(void)
{
    /* RFC 4648 section 10 */
    static const char *const b64[][2] = {
        { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
        { "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
    };
    for (size_t i = 0; i < sizeof b64 / sizeof b64[0]; i++)
        CHECK(streq_free(mt_push_base64((const uint8_t *)b64[i][0], strlen(b64[i][0])), b64[i][1]),
              "base64('%s') = '%s'", b64[i][0], b64[i][1]);
    static const uint8_t bin[] = { 0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe };
    CHECK(streq_free(mt_push_base64(bin, sizeof bin), "H4sIAP/+"), "base64 of bytes >= 0x80: + and /");

    CHECK(mt_push_format_of_url("http://h:4040/push.v1.PusherService/Push") == MT_PUSH_PYROSCOPE,
          "Push path: pyroscope");
    CHECK(mt_push_format_of_url("https://h/a/profiles/writeraw/") == MT_PUSH_PARCA,
          "writeraw path (trailing /): parca");
    CHECK(mt_push_format_of_url("http://h:4318/v1development/profiles?x=1") == MT_PUSH_OTLP,
          "OTLP path (a query after it): otlp");
    CHECK(mt_push_format_of_url("http://h:4040/") == MT_PUSH_NONE, "no path: no guess");
    CHECK(mt_push_format_of_url("http://h:4040/ingest") == MT_PUSH_PYROSCOPE_INGEST,
          "/ingest: pyroscope-ingest");
    CHECK(mt_push_format_named("pyroscope-ingest") == MT_PUSH_PYROSCOPE_INGEST,
          "pyroscope-ingest by name");
    CHECK(streq_free(mt_push_endpoint("http://h:4040", MT_PUSH_PYROSCOPE_INGEST),
                     "http://h:4040/ingest"), "ingest endpoint appended to a bare URL");
    {
        /* /ingest's query: the key SERVICE{K=V,...} with the key
         * syntax's characters replaced, then percent-encoded */
        mt_push_label l[] = { { "__name__", "memory" }, { "service_name", "my svc" },
                              { "env", "a=b,c" }, { "region", "eu-west~1" } };
        CHECK(streq_free(mt_push_ingest_query(l, 4, 1700000000, 1700000060),
                         "name=my_svc%7Benv%3Da_b_c%2Cregion%3Deu-west~1%7D"
                         "&from=1700000000&until=1700000060&format=pprof&spyName=memtrace"),
              "ingest query: name, from, until, format, spyName");
        CHECK(streq_free(mt_push_ingest_query(l, 1, 5, 6),
                         "name=unknown_service%7B%7D&from=5&until=6&format=pprof"
                         "&spyName=memtrace"), "ingest query without service_name");
    }
    CHECK(mt_push_format_of_url("http://h/v1development/profiles.bak") == MT_PUSH_NONE,
          "a path that only starts like one: no guess");
    CHECK(mt_push_format_of_url("http://profiles/writeraw.example") == MT_PUSH_NONE,
          "a host that looks like a path: no guess");
    CHECK(streq_free(mt_push_endpoint("http://h:4040", MT_PUSH_PYROSCOPE),
                     "http://h:4040/push.v1.PusherService/Push"), "endpoint appended to a bare host");
    CHECK(streq_free(mt_push_endpoint("http://h:7070/?t=1", MT_PUSH_PARCA),
                     "http://h:7070/profiles/writeraw?t=1"), "endpoint appended before the query");
    CHECK(streq_free(mt_push_endpoint("http://h:4318/v1/profiles", MT_PUSH_OTLP),
                     "http://h:4318/v1/profiles"), "a URL with a path of its own is kept");
    CHECK(streq_free(mt_push_endpoint("http://h/v1development/profiles", MT_PUSH_OTLP),
                     "http://h/v1development/profiles"), "a URL that names it already is kept");
    CHECK(mt_push_format_named("otlp") == MT_PUSH_OTLP && !mt_push_format_named("OTLP") &&
          !mt_push_format_named("ingest"), "format names");

    CHECK(mt_push_label_name_ok("service_name") && mt_push_label_name_ok("_x9"), "label names ok");
    CHECK(!mt_push_label_name_ok("9x") && !mt_push_label_name_ok("a-b") &&
          !mt_push_label_name_ok("") && !mt_push_label_name_ok("a.b"), "label names refused");

    mt_push_label l[] = { { "__name__", "memory" }, { "service_name", "svc" },
                          { "note", "a \"q\"\n\\" } };
    static const uint8_t gz[] = { 0x1f, 0x8b, 0x08 };
    char *py = mt_push_pyroscope_body(l, 3, gz, sizeof gz);
    CHECK(py && !strcmp(py, "{\"series\":[{\"labels\":[{\"name\":\"__name__\",\"value\":\"memory\"},"
                            "{\"name\":\"service_name\",\"value\":\"svc\"},{\"name\":\"note\","
                            "\"value\":\"a \\\"q\\\"\\n\\\\\"}],\"samples\":[{\"rawProfile\":"
                            "\"H4sI\"}]}]}"),
          "pyroscope body: labels in order, escaped; the payload in base64 (%s)", py ? py : "");
    free(py);
    char *pa = mt_push_parca_body(l, 2, gz, sizeof gz);
    CHECK(pa && !strcmp(pa, "{\"series\":[{\"labels\":{\"labels\":[{\"name\":\"__name__\",\"value\":"
                            "\"memory\"},{\"name\":\"service_name\",\"value\":\"svc\"}]},"
                            "\"samples\":[{\"rawProfile\":\"H4sI\"}]}],\"normalized\":false}"),
          "parca body: a LabelSet, normalized false (%s)", pa ? pa : "");
    free(pa);

    /* the auth file */
    const char *dir = getenv("MT_TMP") ? getenv("MT_TMP") : "/tmp";
    char path[4096], buf[256];
    const char *why = NULL;
    snprintf(path, sizeof path, "%s/push-auth", dir);
    unlink(path);   /* (a 0400 file a run before left) */
    FILE *f = fopen(path, "w");
    fputs("Bearer abc.def\r\nsecond line ignored\n", f);
    fclose(f);
    chmod(path, 0600);
    CHECK(streq_free(mt_push_read_auth(path, buf, sizeof buf, &why), "Bearer abc.def"),
          "a 0600 bearer file: its first line");
    chmod(path, 0640);
    why = NULL;
    char *r = mt_push_read_auth(path, buf, sizeof buf, &why);
    CHECK(!r && why && strstr(why, "readable by others"), "a group-readable file: refused (%s)",
          why ? why : "");
    free(r);
    unlink(path);
    f = fopen(path, "w");
    fputs("justatoken\n", f);
    fclose(f);
    chmod(path, 0600);
    why = NULL;
    r = mt_push_read_auth(path, buf, sizeof buf, &why);
    CHECK(!r && why && strstr(why, "Bearer TOKEN"), "a line of neither form: refused (%s)",
          why ? why : "");
    free(r);
    /* a link to a good file (Kubernetes' secrets) is followed */
    char link[4200];
    snprintf(link, sizeof link, "%s/push-auth-link", dir);
    unlink(path);
    f = fopen(path, "w");
    fputs("u:p\n", f);
    fclose(f);
    chmod(path, 0400);
    unlink(link);
    why = NULL;
    CHECK(symlink(path, link) == 0 &&
          streq_free(mt_push_read_auth(link, buf, sizeof buf, &why), "u:p"),
          "a link to a 0400 file: followed (%s)", why ? why : "");
    if (geteuid() == 0) {   /* another user's link (a shared directory): not followed */
        why = NULL;
        r = lchown(link, 4321, 4321) == 0 ? mt_push_read_auth(link, buf, sizeof buf, &why) : NULL;
        CHECK(!r && why && strstr(why, "link of another user"),
              "another user's link to root's 0400 file: refused (%s)", why ? why : "");
        free(r);
    }
    unlink(link);
    why = NULL;
    snprintf(path, sizeof path, "%s/no-such-auth", dir);
    r = mt_push_read_auth(path, buf, sizeof buf, &why);
    CHECK(!r && why && strstr(why, "No such file"), "a missing file: refused (%s)", why ? why : "");
    free(r);

    mt_push_stats st = { .sent = 5, .dropped_full = 1, .dropped_gave_up = 2, .retried = 7 };
    snprintf(st.last_error, sizeof st.last_error, "HTTP 503");
    char line[256];
    mt_push_summary(&st, line, sizeof line);
    CHECK(!strcmp(line, "push: 5 sent, 3 dropped (1 queue full, 2 retries exhausted; last: "
                        "HTTP 503), 7 retries"), "summary with drops: %s", line);
    mt_push_stats ok = { .sent = 3 };
    mt_push_summary(&ok, line, sizeof line);
    CHECK(!strcmp(line, "push: 3 sent, 0 dropped"), "summary without: %s", line);
    return failures != 0;
}
