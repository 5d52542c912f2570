// SPDX-License-Identifier: GPL-2.0-only
/// Drop the SLAB_MATCH() assertions about struct page members that no
/// longer exist.
///
/// "mm: Remove slab from struct page": once the slab members are gone from
/// struct page, SLAB_MATCH(pg, sl) (static_assert(offsetof(struct page, pg)
/// == offsetof(struct slab, sl))) can only be stated for the members the two
/// still share: flags, compound_head (bit 0 clear), rcu_head, _refcount and
/// the memcg word.  The assertions on the removed members go.  The list is
/// the members the series removes (as regen/members.py does in the same
/// patch); an assertion on any other member stays.
//
// Confidence: High
// Options: --no-includes

virtual patch

@depends on patch@
declarer name SLAB_MATCH;
identifier PG = {slab_list, next, pages, pobjects, slab_cache, freelist, s_mem,
                 counters, inuse, objects, frozen, active, units};
identifier SL;
@@
- SLAB_MATCH(PG, SL);
