/* kmem_getpages.res: code this rule has converted already, which it must leave alone */
/* 5.10's kmem_getpages() once it returns a slab. */
static struct slab *kmem_getpages(struct kmem_cache *cachep, gfp_t flags,
								int nodeid)
{
	struct page *page;

	flags |= cachep->allocflags;

	page = __alloc_pages_node(nodeid, flags, cachep->gfporder);
	if (!page) {
		slab_out_of_memory(cachep, flags, nodeid);
		return NULL;
	}

	account_slab(page_slab(page), cachep->gfporder, cachep);
	__SetPageSlab(page);
	/* Record if ALLOC_NO_WATERMARKS was set when allocating the slab */
	if (sk_memalloc_socks() && page_is_pfmemalloc(page))
		slab_set_pfmemalloc(page_slab(page));

	return page_slab(page);
}

/* another function is left alone */
static void other(struct page *page)
{
	if (PageSlabPfmemalloc(page))
		ClearPageSlabPfmemalloc(page);
}
