/* asserts.res: code this rule has converted already, which it must leave alone */
/* The assertions under struct slab, after the slab members left struct page. */
#define SLAB_MATCH(pg, sl)						\
	static_assert(offsetof(struct page, pg) == offsetof(struct slab, sl))
SLAB_MATCH(flags, flags);
SLAB_MATCH(compound_head, slab_list);	/* Ensure bit 0 is clear */
SLAB_MATCH(rcu_head, rcu_head);
SLAB_MATCH(_refcount, _refcount);
#ifdef CONFIG_MEMCG
SLAB_MATCH(obj_cgroups, memcg_data);
#endif
/* a member that stays in struct page: its assertion stays */
SLAB_MATCH(private, slab_private);
#undef SLAB_MATCH
static_assert(sizeof(struct slab) <= sizeof(struct page));
