/*
 * fuzz_profile.c - libFuzzer target for pprof profiles as input: any byte
 * string, gzipped or not, must decode into a profile (lib/analyze/
 * profile_read.c) or give an error, and a profile that decodes must load
 * as a folded model and answer a selection (lib/analyze/profile.c). No
 * crash, no sanitizer report, no hang, bounded memory.
 *
 *   make fuzz                        # builds build/fuzz/fuzz_profile (clang)
 *   mkdir -p /tmp/pcorpus && build/fuzz/fuzz_profile -max_total_time=600 \
 *       -rss_limit_mb=1024 /tmp/pcorpus SEED.pb.gz ...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../lib/analyze/load.h"
#include "memtrace/analyze.h"
#include "../lib/analyze/profile_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *err = NULL;
    mt_profile *pf = mtp_decode(data, size, &err);
    free(err);
    if (!pf)
        return 0;
    mtp_free(pf);
    /* decodable: through the model, from a file in memory */
    int fd = memfd_create("profile", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) == (ssize_t)size) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        mt_model_options o = {.fold = 1, .fold_live_at = MT_TIME_END,
                              .on_warning = NULL};
        mt_model *m = mt_model_load(path, &o, &err);
        free(err);
        if (m) {
            mt_selection *s = mt_select_sites(m, NULL, MT_TIME_END, NULL, &err);
            free(err);
            if (s)
                (void)mt_selection_total(s);
            mt_selection_free(s);
            mt_model_free(m);
        }
    }
    close(fd);
    return 0;
}
