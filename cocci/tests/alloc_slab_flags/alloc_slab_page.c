/* 5.10's alloc_slab_page() before it returns a slab, and its caller. */
static inline struct page *alloc_slab_page(struct kmem_cache *s,
		gfp_t flags, int node, struct kmem_cache_order_objects oo)
{
	struct page *page;
	unsigned int order = oo_order(oo);

	page = alloc_pages(flags, order);
	if (page)
		account_slab_page(page, order, s);

	return page;
}

static struct page *allocate_slab(struct kmem_cache *s, gfp_t flags, int node)
{
	struct page *page;

	page = alloc_slab_page(s, flags, node, s->oo);
	page->slab_cache = s;
	__SetPageSlab(page);
	if (page_is_pfmemalloc(page))
		SetPageSlabPfmemalloc(page);
	kasan_poison_slab(page);
	return page;
}
