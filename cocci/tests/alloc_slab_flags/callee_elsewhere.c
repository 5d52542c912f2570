/*
 * Left alone: alloc_slab_page() is only declared here (its definition is
 * in another file the step does not touch), so the caller keeps setting
 * PG_slab and pfmemalloc itself; the flags must not get lost.
 */
struct page *alloc_slab_page(struct kmem_cache *s, gfp_t flags, int node,
			     struct kmem_cache_order_objects oo);

static struct page *allocate_slab(struct kmem_cache *s, gfp_t flags, int node)
{
	struct page *page;

	page = alloc_slab_page(s, flags, node, s->oo);
	page->slab_cache = s;
	__SetPageSlab(page);
	if (page_is_pfmemalloc(page))
		SetPageSlabPfmemalloc(page);
	return page;
}
