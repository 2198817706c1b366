/*
 * safefile.c - unit test of mt_outfile_open (lib/common/safefile.c) in a
 * directory every user may write to (1777, as /tmp), run as root: another
 * user's FIFO, regular file and symbolic link at the output's name are
 * refused and nothing is written into them; the caller's own FIFO is
 * written in place, the caller's own file replaced through a temporary
 * name. Skips (77) unless run as root (it makes files of another uid).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safefile.h"
#include "../check.h"

#define OTHER 65534 /* nobody */

static char dir[4096];

/* dir/name, in a buffer the next call reuses. */
static const char *at(const char *name)
{
    static char buf[4200];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

/* Opens name as an output; 0 if it opened (o kept open), -1 if refused. */
static int try_open(const char *name, mt_outfile *o, const char **why)
{
    *why = NULL;
    return mt_outfile_open(o, at(name), 0644, why);
}

int main(void)
{
    if (geteuid() != 0) {
        printf("makes files of another user: run as root\n");
        return 77;
    }
    const char *tmp = getenv("MT_TMP") ? getenv("MT_TMP") : "/tmp";
    snprintf(dir, sizeof dir, "%s/safefile-XXXXXX", tmp);
    if (!mkdtemp(dir) || chmod(dir, 01777) != 0) {
        printf("FAIL: a shared directory in %s: %s\n", tmp, strerror(errno));
        return 1;
    }
    mt_outfile o;
    const char *why;

    /* Another user's FIFO, with a reader waiting on it: opening it to write
     * would succeed at once, so only the rule refuses it. */
    int made = mkfifo(at("theirs.fifo"), 0666) == 0 && chown(at("theirs.fifo"), OTHER, OTHER) == 0;
    int reader = made ? open(at("theirs.fifo"), O_RDONLY | O_NONBLOCK) : -1;
    CHECK(made && reader >= 0, "a FIFO of uid %d with a reader, in a 1777 directory", OTHER);
    int rc = try_open("theirs.fifo", &o, &why);
    if (rc == 0) {
        (void)!write(o.fd, "root's output\n", 14);
        mt_outfile_abort(&o);
    }
    char buf[64];
    ssize_t got = reader >= 0 ? read(reader, buf, sizeof buf) : -1;
    CHECK(rc == -1 && why && strstr(why, "not a regular file"),
          "another user's FIFO is refused (%s)", rc ? (why ? why : "?") : "opened");
    CHECK(got <= 0, "nothing was written into another user's FIFO (%zd bytes)", got);
    if (reader >= 0)
        close(reader);

    /* The caller's own FIFO: written in place. */
    made = mkfifo(at("mine.fifo"), 0600) == 0;
    reader = made ? open(at("mine.fifo"), O_RDONLY | O_NONBLOCK) : -1;
    rc = try_open("mine.fifo", &o, &why);
    got = -1;
    if (rc == 0) {
        CHECK(o.tmp == NULL, "the caller's own FIFO is written in place");
        (void)!write(o.fd, "mine\n", 5);
        got = read(reader, buf, sizeof buf);
        mt_outfile_abort(&o);
    }
    CHECK(rc == 0 && got == 5, "the caller's own FIFO is opened and receives the output (%zd bytes; %s)",
          got, rc ? (why ? why : "?") : "ok");
    if (reader >= 0)
        close(reader);

    /* Another user's regular file: refused, left as it was. */
    int fd = open(at("theirs.txt"), O_WRONLY | O_CREAT | O_EXCL, 0666);
    made = fd >= 0 && write(fd, "theirs\n", 7) == 7 && fchown(fd, OTHER, OTHER) == 0;
    if (fd >= 0)
        close(fd);
    rc = try_open("theirs.txt", &o, &why);
    if (rc == 0)
        mt_outfile_abort(&o);
    struct stat st;
    CHECK(made && rc == -1 && why && strstr(why, "another user") &&
              stat(at("theirs.txt"), &st) == 0 && st.st_size == 7 && st.st_uid == OTHER,
          "another user's regular file is refused and left as it was (%s)",
          rc ? (why ? why : "?") : "opened");

    /* Another user's symbolic link: not followed. */
    fd = open(at("secret"), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0)
        close(fd);
    char target[4200];
    snprintf(target, sizeof target, "%s", at("secret"));
    made = symlink(target, at("theirs.link")) == 0 &&
           lchown(at("theirs.link"), OTHER, OTHER) == 0;
    rc = try_open("theirs.link", &o, &why);
    if (rc == 0)
        mt_outfile_abort(&o);
    CHECK(made && rc == -1 && why && strstr(why, "symbolic link of another user") &&
              stat(target, &st) == 0 && st.st_size == 0,
          "another user's symbolic link is not followed (%s)", rc ? (why ? why : "?") : "opened");

    /* The caller's own regular file: a new version under a temporary name,
     * renamed over it. */
    fd = open(at("mine.txt"), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0)
        close(fd);
    rc = try_open("mine.txt", &o, &why);
    int tmp_name = rc == 0 && o.tmp != NULL;
    if (rc == 0) {
        (void)!write(o.fd, "new\n", 4);
        rc = mt_outfile_commit(&o, &why);
    }
    CHECK(tmp_name && rc == 0 && stat(at("mine.txt"), &st) == 0 && st.st_size == 4,
          "the caller's own file is replaced through a temporary name (%s)",
          rc ? (why ? why : "?") : "ok");

    const char *names[] = {"theirs.fifo", "mine.fifo", "theirs.txt", "secret", "theirs.link",
                           "mine.txt"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unlink(at(names[i]));
    rmdir(dir);
    return failures ? 1 : 0;
}
