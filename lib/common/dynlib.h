/*
 * dynlib.h - a shared library the CLI loads at its first use rather than
 * at start: dlopen of its versioned soname and dlsym of the functions its
 * user calls, once, with an error that names the library, what needs it
 * and the Debian package that holds it. libcurl (lib/push/sender.c) and
 * libmicrohttpd (viewer/server.c) come this way, so that the commands
 * that do not push or serve (run, every report) neither map nor relocate
 * them and the forty libraries behind them. The user keeps its own table
 * of typed function pointers (its library's header still gives the types)
 * and the mt_dynsym entries that fill it.
 * Header only; never included by the recorder.
 */
#ifndef MT_COMMON_DYNLIB_H
#define MT_COMMON_DYNLIB_H

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

/* One function: its name in the library and where its address goes. */
struct mt_dynsym {
    const char *name;
    void **slot;
};

struct mt_dynlib {
    const char *soname;   /* "libcurl.so.4": the ABI the header describes */
    const char *package;  /* the Debian package(s) that hold it */
    const char *needed;   /* what needs it, for the error: "sending profiles" */
    const struct mt_dynsym *syms;
    size_t nsyms;
    /* state: set by mt_dynlib_load */
    pthread_mutex_t mu;
    int state;            /* 0 not tried, 1 loaded, -1 failed (error says why) */
    char error[384];
};

#define MT_DYNLIB_INIT(soname, package, needed, syms)                                   \
    {(soname), (package), (needed), (syms), sizeof(syms) / sizeof *(syms),             \
     PTHREAD_MUTEX_INITIALIZER, 0, {0}}

/* Loads l and fills its slots at the first call; later calls give the same
 * answer. Returns NULL when every function is there, else the error (kept
 * in l, valid for the process's life). Thread-safe. */
static inline const char *mt_dynlib_load(struct mt_dynlib *l)
{
    pthread_mutex_lock(&l->mu);
    if (l->state == 0) {
        void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
        const char *missing = NULL;
        for (size_t i = 0; h && i < l->nsyms && !missing; i++)
            if (!(*l->syms[i].slot = dlsym(h, l->syms[i].name)))
                missing = l->syms[i].name;
        if (!h) {
            const char *why = dlerror();
            snprintf(l->error, sizeof l->error,
                     "cannot load %s, which %s needs (Debian package %s): %s", l->soname,
                     l->needed, l->package, why ? why : "not found");
        } else if (missing) {
            snprintf(l->error, sizeof l->error,
                     "%s has no %s, which %s needs: a different version than the one built "
                     "against (Debian package %s)", l->soname, missing, l->needed, l->package);
            for (size_t i = 0; i < l->nsyms; i++)
                *l->syms[i].slot = NULL;
            dlclose(h);
            h = NULL;
        }
        l->state = h ? 1 : -1;   /* a loaded library stays loaded */
    }
    const char *err = l->state > 0 ? NULL : l->error;
    pthread_mutex_unlock(&l->mu);
    return err;
}

#endif
