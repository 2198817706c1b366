/*
 * merge.h - what merge.c (several traces read as one) offers the other
 * files of lib/analyze. Internal.
 */
#ifndef MTA_MERGE_H
#define MTA_MERGE_H

/* Is path a resident-memory sidecar (TRACE.rss), not a trace? (A glob
 * such as app.ctf.* picks them up beside the traces.) */
int mta_is_rss_sidecar(const char *path);

#endif
