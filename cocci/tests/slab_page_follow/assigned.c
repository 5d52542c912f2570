/* A slab local the function assigns, taken slab_page() of more than twice
 * while it holds one value: a page follows it. */
static void *slab_alloc_slow(struct kmem_cache *s, gfp_t gfpflags, int node,
			     struct kmem_cache_cpu *c)
{
	void *freelist;
	struct slab *slab;
	unsigned long flags;

reread_slab:

	slab = READ_ONCE(c->slab);
	if (!slab)
		goto new_slab;
redo:
	if (unlikely(!node_match(slab_page(slab), node)))
		goto deactivate_slab;
	if (unlikely(!pfmemalloc_match_unsafe(slab_page(slab), gfpflags)))
		goto deactivate_slab;
	freelist = get_freelist(s, slab_page(slab));
	if (freelist)
		return freelist;
deactivate_slab:
	deactivate_slab(s, slab_page(slab), freelist, c);
new_slab:
	if (slub_percpu_partial(c)) {
		slab = c->slab = slub_percpu_partial(c);
		slub_set_percpu_partial(c, slab);
		goto redo;
	}
	freelist = get_partial(s, gfpflags, node, &slab);
	if (freelist)
		goto check_new_slab;
	slab = new_slab(s, gfpflags, node);
	if (unlikely(!slab))
		return NULL;
	freelist = slab->freelist;
	slab->freelist = NULL;
check_new_slab:
	if (!alloc_debug_processing(s, slab_page(slab), freelist))
		goto new_slab;
	if (unlikely(!pfmemalloc_match(slab_page(slab), gfpflags)))
		goto return_single;
	c->slab = slab;
	return freelist;
return_single:
	deactivate_slab(s, slab_page(slab), get_freepointer(s, freelist), c);
	return freelist;
}

/* set in its declaration and never again: the page local follows the
 * declaration */
static void drop(void *object)
{
	struct slab *slab = virt_to_slab(object);
	int order = 0;

	__ClearPageSlab(slab_page(slab));
	page_mapcount_reset(slab_page(slab));
	__free_pages(slab_page(slab), order);
}
