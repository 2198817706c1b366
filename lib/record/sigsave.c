/*
 * sigsave.c - saving and restoring a signal's disposition through the
 * rt_sigaction system call itself (see sigsave.h).
 */
#include <sys/syscall.h>
#include <unistd.h>

#include "sigsave.h"

int mtr_sig_save(int sig, struct mtr_sigsave *s)
{
    return syscall(SYS_rt_sigaction, sig, NULL, s, sizeof s->mask) == 0 ? 0 : -1;
}

int mtr_sig_restore(int sig, const struct mtr_sigsave *s)
{
    return syscall(SYS_rt_sigaction, sig, s, NULL, sizeof s->mask) == 0 ? 0 : -1;
}
