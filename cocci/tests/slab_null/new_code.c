/*
 * New code, not in 5.10: names of later kernels (folios, frozen slabs,
 * node-partial flags), found by what the code does, not by its names.
 */
static struct slab *alloc_frozen_slab(struct kmem_cache *s, gfp_t gfp, int node)
{
	struct folio *folio;

	folio = (struct folio *)__alloc_pages_node(node, gfp, oo_order(s->oo));
	if (!folio)
		return NULL;
	return folio_slab(folio);
}

static struct slab *get_any_partial_slab(struct kmem_cache *s, struct kmem_cache_node *n)
{
	struct slab *slab, *slab2;

	list_for_each_entry_safe(slab, slab2, &n->partial, slab_list) {
		if (slab_test_node_partial(slab))
			return slab;
	}
	return NULL;
}

static struct page *get_slab_page(struct kmem_cache *s, int node)
{
	return slab_page(alloc_frozen_slab(s, GFP_NOWAIT, node));
}

static void *slab_alloc_new(struct kmem_cache *s, struct kmem_cache_node *n, gfp_t gfp)
{
	struct slab *slab = alloc_frozen_slab(s, gfp, NUMA_NO_NODE);

	if (slab_test_node_partial(slab))
		return NULL;
	__slab_clear_node_partial(get_any_partial_slab(s, n));
	return slab_address(page_slab(get_slab_page(s, 0)));
}

/* the same, tested: nothing to report */
static void *slab_alloc_new_checked(struct kmem_cache *s, struct kmem_cache_node *n, gfp_t gfp)
{
	struct slab *slab = alloc_frozen_slab(s, gfp, NUMA_NO_NODE);

	if (!slab)
		return NULL;
	if (slab_test_node_partial(slab))
		return NULL;
	slab = get_any_partial_slab(s, n);
	if (slab)
		__slab_clear_node_partial(slab);
	return slab_page(get_any_partial_slab(s, n));
}
