/* Not in 5.10: a caller that already holds a slab. */
static inline struct page *alloc_slab_page(struct kmem_cache *s, gfp_t flags)
{
	struct page *page = alloc_pages(flags, 0);

	return page;
}

static struct slab *allocate_small_slab(struct kmem_cache *s, gfp_t flags)
{
	struct slab *slab = page_slab(alloc_slab_page(s, flags));

	__SetPageSlab(slab_page(slab));
	if (page_is_pfmemalloc(slab_page(slab)))
		slab_set_pfmemalloc(slab);
	return slab;
}
