/*
 * sampled.c - the table of sampled blocks and its filter (see sampled.h).
 *
 * Each shard is a linear-probing array of {address, token, generation}
 * with backward-shift deletion (no tombstones), grown to twice its size at
 * three quarters full. The slot comes from a multiplicative hash of the
 * address, the shard from one of the address's filter slot (its granule,
 * sampled.h): every block whose granule shares a filter bit lives in one
 * shard, so that the shard's lock also guards that bit's count and mask of
 * lines, and the filter needs no lock of its own.
 *
 * The shards' locks are lock.h's: a short spin, then a futex.
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lock.h"
#include "own.h"
#include "sampled.h"

#define SHARD_BITS 4
#define NSHARDS (1u << SHARD_BITS)
#define MIN_CAP 256

struct entry {
    uintptr_t key;      /* block address; 0 = empty */
    uintptr_t token;
    uint32_t gen;
};

struct shard {
    int lock;           /* 0 free, 1 held, 2 held with sleepers */
    size_t n, cap;      /* cap: a power of two, or 0 before the first block */
    struct entry *v;
    uint64_t lookups;   /* takes that searched this shard (under the lock) */
    uint64_t found;     /* ... and found the block */
    uint64_t marked;    /* frees behind a set filter bit, folded in from mtr_tls.marked */
} __attribute__((aligned(64)));

uint64_t mtr_filter[((size_t)1 << MTR_FILTER_BITS) / 64];
uint16_t mtr_filter_lines[(size_t)1 << MTR_FILTER_BITS];
uint8_t mtr_filter_count[(size_t)1 << MTR_FILTER_BITS];
static struct shard shards[NSHARDS];

static uint64_t hash(uintptr_t p)
{
    return (uint64_t)p * 0x9e3779b97f4a7c15ULL;
}

/* The shard of p: a hash of p's filter slot, so that one lock guards the
 * slot's count, lines and bit (filter_add, filter_del). */
static struct shard *shard_of(const void *p)
{
    uint64_t h = (uint64_t)mtr_filter_slot(p) * 0x9e3779b97f4a7c15ULL;
    return &shards[h >> (64 - SHARD_BITS)];
}

static size_t slot_of(uint64_t h, size_t cap)
{
    return (size_t)(h >> 28) & (cap - 1);
}

static void lock(struct shard *s)
{
    MT_ASSERT(mtr_tls.in_table >= 0 && mtr_tls.in_table <= (int)NSHARDS);
    mtr_tls.in_table++;
    mtr_lock(&s->lock);
}

static void unlock(struct shard *s)
{
    MT_ASSERT(mtr_tls.in_table > 0);
    mtr_unlock(&s->lock);
    mtr_tls.in_table--;
}

static struct entry *map_entries(size_t cap)
{
    void *p = (void *)syscall(SYS_mmap, NULL, cap * sizeof(struct entry), PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    mtr_own_add(p, cap * sizeof(struct entry));
    return p;
}

static void put(struct entry *v, size_t cap, struct entry e)
{
    MT_ASSERT(e.key != 0 && cap != 0 && (cap & (cap - 1)) == 0);
    size_t i = slot_of(hash(e.key), cap);
    while (v[i].key)
        i = (i + 1) & (cap - 1);
    v[i] = e;
}

static int grow(struct shard *s)
{
    MT_ASSERT(mtr_lock_held(&s->lock));
    size_t cap = s->cap ? s->cap * 2 : MIN_CAP;
    struct entry *v = map_entries(cap);
    if (!v)
        return -1;
    for (size_t i = 0; i < s->cap; i++)
        if (s->v[i].key)
            put(v, cap, s->v[i]);
    if (s->v) {
        mtr_own_del(s->v);
        syscall(SYS_munmap, s->v, s->cap * sizeof(struct entry));
    }
    s->v = v;
    s->cap = cap;
    return 0;
}

/* Index of p in s, or s->cap. */
static size_t find(const struct shard *s, uintptr_t p, uint64_t h)
{
    MT_ASSERT(mtr_lock_held(&s->lock));
    if (!s->cap)
        return 0;
    MT_ASSERT(s->n < s->cap);   /* an empty slot ends every probe */
    size_t i = slot_of(h, s->cap);
    while (s->v[i].key) {
        if (s->v[i].key == p)
            return i;
        i = (i + 1) & (s->cap - 1);
    }
    return s->cap;
}

/* p's block enters the table: its filter slot's count, line and bit,
 * under the lock of p's shard (the slot's only writer; mtr_filter_pin takes
 * it too). free() reads the line and the bit from other threads: a word is
 * written only when a bit of it changes, so that a sample whose granule or
 * line is marked already leaves the cache lines those frees read alone. */
static void filter_add(struct shard *s, const void *p)
{
    size_t slot = mtr_filter_slot(p);
    uint16_t line = mtr_filter_line_bit(p);
    uint64_t bit = (uint64_t)1 << (slot & 63);

    MT_ASSERT(mtr_lock_held(&s->lock) && s == shard_of(p));
    uint8_t c = __atomic_load_n(&mtr_filter_count[slot], __ATOMIC_RELAXED);
    if (c != 255)   /* 255: saturated or pinned (a boot block), for good */
        __atomic_store_n(&mtr_filter_count[slot], (uint8_t)(c + 1), __ATOMIC_RELAXED);
    uint16_t lines = __atomic_load_n(&mtr_filter_lines[slot], __ATOMIC_RELAXED);
    if (!(lines & line))
        __atomic_store_n(&mtr_filter_lines[slot], (uint16_t)(lines | line), __ATOMIC_RELAXED);
    if (!(__atomic_load_n(&mtr_filter[slot >> 6], __ATOMIC_RELAXED) & bit))
        __atomic_fetch_or(&mtr_filter[slot >> 6], bit, __ATOMIC_RELAXED);
}

/* p's block leaves the table. A line's bit stays set until its granule's count
 * drops to 0 (a line may start several blocks): a stale one costs a table
 * lookup, never a miss. */
static void filter_del(struct shard *s, const void *p)
{
    size_t slot = mtr_filter_slot(p);

    MT_ASSERT(mtr_lock_held(&s->lock) && s == shard_of(p));
    uint8_t c = __atomic_load_n(&mtr_filter_count[slot], __ATOMIC_RELAXED);
    MT_ASSERT(c > 0);   /* the block was counted when it entered */
    if (c == 255 || c == 0)
        return;
    __atomic_store_n(&mtr_filter_count[slot], (uint8_t)(c - 1), __ATOMIC_RELAXED);
    if (c == 1) {
        __atomic_fetch_and(&mtr_filter[slot >> 6], ~((uint64_t)1 << (slot & 63)),
                           __ATOMIC_RELAXED);
        __atomic_store_n(&mtr_filter_lines[slot], 0, __ATOMIC_RELAXED);
    }
}

void mtr_filter_pin(const void *p)
{
    size_t slot = mtr_filter_slot(p);
    struct shard *s = shard_of(p);
    /* A signal handler that interrupted this thread inside the table takes
     * no second lock: boot blocks come before any sampled block, so no
     * other writer of the slot is about then. */
    int locked = !mtr_tls.in_table;

    if (locked)
        lock(s);
    __atomic_store_n(&mtr_filter_count[slot], 255, __ATOMIC_RELAXED);
    __atomic_store_n(&mtr_filter_lines[slot], (uint16_t)0xffff, __ATOMIC_RELAXED);
    __atomic_fetch_or(&mtr_filter[slot >> 6], (uint64_t)1 << (slot & 63), __ATOMIC_RELAXED);
    if (locked)
        unlock(s);
}

int mtr_sampled_add(const void *p, uintptr_t token, uint32_t gen, uintptr_t *old_token,
                    uint32_t *old_gen)
{
    uint64_t h = hash((uintptr_t)p);
    struct shard *s = shard_of(p);
    int rc = 0;

    lock(s);
    size_t i = find(s, (uintptr_t)p, h);
    if (s->cap && i < s->cap) {
        *old_token = s->v[i].token;
        *old_gen = s->v[i].gen;
        s->v[i].token = token;
        s->v[i].gen = gen;
        rc = 1;
    } else if ((s->n + 1) * 4 > s->cap * 3 && grow(s) != 0) {
        rc = -1;
    } else {
        /* The filter first: a free() of p can only follow malloc's return,
         * which follows this. */
        filter_add(s, p);
        struct entry e = { (uintptr_t)p, token, gen };
        put(s->v, s->cap, e);
        s->n++;
        MT_ASSERT(s->n * 4 <= s->cap * 3);   /* grown at three quarters */
    }
    unlock(s);
    return rc;
}

int mtr_sampled_take(const void *p, uintptr_t *token, uint32_t *gen)
{
    if (mtr_tls.in_table)
        return -1;
    uint64_t h = hash((uintptr_t)p);
    struct shard *s = shard_of(p);

    lock(s);
    s->lookups++;
    s->marked += mtr_tls.marked;   /* this thread's count, into a line it holds now */
    mtr_tls.marked = 0;
    size_t i = find(s, (uintptr_t)p, h);
    if (!s->cap || i == s->cap) {
        unlock(s);
        return 0;
    }
    s->found++;
    *token = s->v[i].token;
    *gen = s->v[i].gen;
    /* Backward-shift deletion: move later entries of the run into the hole
     * when their home slot does not lie cyclically in (hole, j]. */
    size_t mask = s->cap - 1, hole = i, j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!s->v[j].key)
            break;
        size_t home = slot_of(hash(s->v[j].key), s->cap);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            s->v[hole] = s->v[j];
            hole = j;
        }
    }
    s->v[hole].key = 0;
    MT_ASSERT(s->n > 0);
    s->n--;
    filter_del(s, p);
    unlock(s);
    return 1;
}

void mt_memprof_free_stats(uint64_t *lookups, uint64_t *found)
{
    uint64_t l = 0, f = 0;
    for (unsigned i = 0; i < NSHARDS; i++) {
        l += __atomic_load_n(&shards[i].lookups, __ATOMIC_RELAXED);
        f += __atomic_load_n(&shards[i].found, __ATOMIC_RELAXED);
    }
    *lookups = l;
    *found = f;
}

uint64_t mt_memprof_free_marked(void)
{
    uint64_t m = 0;
    if (!mtr_tls.in_table) {   /* not a signal handler inside the table: fold ours in */
        lock(&shards[0]);
        shards[0].marked += mtr_tls.marked;
        mtr_tls.marked = 0;
        unlock(&shards[0]);
    }
    for (unsigned i = 0; i < NSHARDS; i++)
        m += __atomic_load_n(&shards[i].marked, __ATOMIC_RELAXED);
    return m + mtr_tls.marked;
}

void mtr_sampled_lock_all(void)
{
    for (unsigned i = 0; i < NSHARDS; i++)
        lock(&shards[i]);
}

void mtr_sampled_unlock_all(void)
{
    for (unsigned i = NSHARDS; i-- > 0;)
        unlock(&shards[i]);
}

void mtr_sampled_reset_locks(void)
{
    for (unsigned i = 0; i < NSHARDS; i++)
        __atomic_store_n(&shards[i].lock, 0, __ATOMIC_RELEASE);
    mtr_tls.in_table = 0;
}

void mtr_sampled_each(void (*fn)(void *ctx, uintptr_t addr, uintptr_t token),
                      void (*range)(void *ctx, uintptr_t lo, uintptr_t hi), void *ctx)
{
    for (unsigned k = 0; k < NSHARDS; k++) {
        struct shard *s = &shards[k];
        if (!s->cap)
            continue;
        range(ctx, (uintptr_t)s->v, (uintptr_t)(s->v + s->cap));
        if (__atomic_load_n(&s->lock, __ATOMIC_ACQUIRE))
            continue;
        for (size_t i = 0; i < s->cap; i++)
            if (s->v[i].key)
                fn(ctx, s->v[i].key, s->v[i].token);
    }
}
