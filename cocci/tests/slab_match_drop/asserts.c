/* The assertions under struct slab, after the slab members left struct page. */
#define SLAB_MATCH(pg, sl)						\
	static_assert(offsetof(struct page, pg) == offsetof(struct slab, sl))
SLAB_MATCH(flags, flags);
SLAB_MATCH(compound_head, slab_list);	/* Ensure bit 0 is clear */
SLAB_MATCH(slab_list, slab_list);
SLAB_MATCH(rcu_head, rcu_head);
SLAB_MATCH(slab_cache, slab_cache);
SLAB_MATCH(s_mem, s_mem);
SLAB_MATCH(active, active);
SLAB_MATCH(_refcount, _refcount);
#ifdef CONFIG_MEMCG
SLAB_MATCH(obj_cgroups, memcg_data);
#endif
SLAB_MATCH(units, units);
/* a member that stays in struct page: its assertion stays */
SLAB_MATCH(private, slab_private);
#undef SLAB_MATCH
static_assert(sizeof(struct slab) <= sizeof(struct page));
