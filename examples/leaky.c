/*
 * leaky.c - the example `make demo` profiles: a toy request server with a
 * memory leak. Each request parses a message, renders a reply and caches
 * the parsed message "for later"; the cache is never trimmed, so memory
 * grows with every request while the rest is freed properly.
 *
 *   memtrace run -o leaky.ctf -- build/examples/leaky
 *   memtrace top leaky.ctf
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct message {
    char *header;
    char *body;
    size_t body_len;
};

struct cache {
    struct message **items;
    size_t n, cap;
};

static struct message *parse_message(int id)
{
    struct message *m = malloc(sizeof *m);
    m->header = malloc(64);
    snprintf(m->header, 64, "request %d", id);
    m->body_len = 256 + (size_t)(id % 7) * 512;
    m->body = malloc(m->body_len);
    memset(m->body, 'a' + id % 26, m->body_len);
    return m;
}

static void free_message(struct message *m)
{
    free(m->header);
    free(m->body);
    free(m);
}

static char *render_reply(const struct message *m)
{
    size_t len = strlen(m->header) + m->body_len + 32;
    char *reply = malloc(len);
    snprintf(reply, len, "%s: %zu bytes", m->header, m->body_len);
    return reply;
}

/* The leak: every parsed message is kept, the cache only grows. */
static void remember(struct cache *c, struct message *m)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->items = realloc(c->items, c->cap * sizeof *c->items);
    }
    c->items[c->n++] = m;
}

static size_t handle_request(struct cache *c, int id)
{
    struct message *m = parse_message(id);
    char *reply = render_reply(m);
    size_t len = strlen(reply);
    free(reply);
    if (id % 4 == 0)
        remember(c, m);     /* oops: kept forever */
    else
        free_message(m);
    return len;
}

int main(int argc, char **argv)
{
    int requests = argc > 1 ? atoi(argv[1]) : 200000;
    struct cache cache = { 0 };
    size_t total = 0;
    for (int i = 0; i < requests; i++)
        total += handle_request(&cache, i);
    printf("handled %d requests (%zu reply bytes), cache holds %zu messages\n", requests,
           total, cache.n);
    return 0;
}
