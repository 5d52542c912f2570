/* new_old.res: code this rule has converted already, which it must leave alone */
/* 5.10's scratch copies of a slab's words, and (not in 5.10) a new
 * function that builds one. Pointers are left alone. */
static void deactivate(struct kmem_cache *s, struct slab *slab)
{
	struct slab new;
	struct slab old;
	struct page *other;

	old.freelist = slab->freelist;
	old.counters = slab->counters;
	new.counters = old.counters;
	new.frozen = 0;
	cmpxchg_double_slab(s, slab, old.freelist, old.counters,
			    new.freelist, new.counters, "deactivate");
}

static bool try_freeze(struct kmem_cache *s, struct slab *slab)
{
	struct slab new;

	new.counters = slab->counters;
	new.frozen = 1;
	return __cmpxchg_double_slab(s, slab, slab->freelist, slab->counters,
				     slab->freelist, new.counters, "freeze");
}
