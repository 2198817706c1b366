/*
 * fdsink.c - unit test of lib/common/fdsink.h: through a small buffer,
 * writes smaller and larger than it arrive whole and in order; a write
 * to a closed descriptor fails with errno set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdsink.h"

int main(void)
{
    int failures = 0;
    char path[] = "/tmp/mt-fdsink-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    unlink(path);
    mt_fdsink *s = mt_fdsink_new(fd, 16);
    unsigned char want[1000];
    for (size_t i = 0; i < sizeof want; i++)
        want[i] = (unsigned char)(i * 7);
    /* 1, 2, 3, ... bytes: some fit the buffer, some flush it, some bypass it */
    size_t off = 0;
    int rc = 0;
    for (size_t k = 1; off < sizeof want; k += 3) {
        size_t n = k < sizeof want - off ? k : sizeof want - off;
        rc |= mt_fdsink_write(s, want + off, n);
        off += n;
    }
    rc |= mt_fdsink_flush(s);
    unsigned char got[sizeof want + 1];
    ssize_t n = pread(fd, got, sizeof got, 0);
    int ok = s && rc == 0 && n == (ssize_t)sizeof want && !memcmp(got, want, sizeof want);
    printf("%s: 1000 bytes in writes of 1 to 43 through a 16-byte buffer arrive whole\n",
           ok ? "PASS" : "FAIL");
    failures += !ok;
    free(s);
    close(fd);
    errno = 0;
    ok = mt_write_full(fd, want, 10, NULL) == -1 && errno == EBADF;
    printf("%s: a closed descriptor: -1, EBADF\n", ok ? "PASS" : "FAIL");
    failures += !ok;
    return failures ? 1 : 0;
}
