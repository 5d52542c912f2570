/* put_cpu_partial()'s counter of cpu partial slabs; another function's
 * `pages` is left alone. */
static void put_cpu_partial(struct kmem_cache *s, struct slab *slab, int drain)
{
	int pages;

	pages = 0;
	if (oldslab)
		pages = oldslab->slabs;
	pages++;
	slab->slabs = pages;
}

static void __free_slab(struct kmem_cache *s, struct slab *slab)
{
	int pages = 1 << slab_order(slab);

	current->reclaim_state->reclaimed_slab += pages;
}
