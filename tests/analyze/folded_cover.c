/*
 * folded_cover.c - mta_folded_cover (lib/analyze/fold.c), which a folded
 * model calls as its trie grows: covering one node more at a time, as a
 * pprof profile's samples do, costs a number of reallocations logarithmic
 * in the nodes (it grew to exactly n each time: a copy of every cost per
 * node, quadratic, over 120 s under ASan for a large profile). The bound
 * is on work done (how often the table moved), not on time. New nodes
 * read zero costs and no first allocation, and old ones keep theirs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/analyze.h"
#include "analyze/fold.h"
#include "../check.h"

int main(void)
{
    mta_folded *f = mta_folded_new();
    CHECK(f != NULL, "a folded part");
    if (!f)
        return 1;
    const size_t n = 2000000;
    size_t grown = 0, cap = f->node_cap;
    int fresh = 1, kept = 1;
    for (size_t i = 1; i <= n; i++) {
        if (mta_folded_cover(f, i) < 0) {
            CHECK(0, "cover %zu nodes", i);
            break;
        }
        if (f->node_cap != cap) {
            grown++;
            cap = f->node_cap;
        }
        /* the node just covered starts empty; node 0 keeps what it was given */
        if (f->node_cost[i - 1].samples != 0 || f->node_first[i - 1] != UINT64_MAX)
            fresh = 0;
        if (i == 1) {
            f->node_cost[0].samples = 7;
            f->node_first[0] = 3;
        }
        if (f->node_cost[0].samples != 7 || f->node_first[0] != 3)
            kept = 0;
    }
    CHECK(f->node_cap >= n, "2,000,000 nodes covered (%zu)", f->node_cap);
    CHECK(grown <= 64, "covering one node at a time moved the table %zu times (at most 64: "
          "geometric growth, not once per node)", grown);
    CHECK(fresh, "every node covered reads no cost and no first allocation");
    CHECK(kept, "an earlier node keeps its cost and first allocation as the table grows");
    CHECK(f->node_cap <= 2 * n, "the table holds at most twice the nodes (%zu for %zu)",
          f->node_cap, n);
    mta_folded_free(f);
    return failures ? 1 : 0;
}
