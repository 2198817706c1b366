/*
 * highfd.h - the recorder's own descriptors live at 200 and above, out of
 * the way of the numbers a program opens, dup2s onto or closes in a loop
 * from 3 up (a daemon's start).
 */
#ifndef MT_RECORD_HIGHFD_H
#define MT_RECORD_HIGHFD_H

#include <fcntl.h>
#include <unistd.h>

#define MTR_FD_FLOOR 200

/* fd moved to the lowest free number >= MTR_FD_FLOOR, close-on-exec (the
 * old number closed); fd itself if there is none. Status flags
 * (O_NONBLOCK) belong to the open file and stay. */
static inline int mtr_high_fd(int fd)
{
    if (fd < 0 || fd >= MTR_FD_FLOOR)
        return fd;
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, MTR_FD_FLOOR);
    if (hi < 0)
        return fd;
    close(fd);
    return hi;
}

#endif
