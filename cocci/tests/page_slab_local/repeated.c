/* page_slab() of one page, more than once, after a NULL test or
 * virt_to_head_page(): a slab local.  A call the test of the page guards
 * just before its NULL test moves after it. */
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

static inline struct slab *alloc_slab_page(struct kmem_cache *s,
					   gfp_t flags, int node,
					   struct kmem_cache_order_objects oo)
{
	struct page *page;
	unsigned int order = oo_order(oo);

	if (node == NUMA_NO_NODE)
		page = alloc_pages(flags, order);
	else
		page = __alloc_pages_node(node, flags, order);

	if (page)
		account_slab(page_slab(page), order, s);

	if (!page)
		return NULL;
	__SetPageSlab(page);
	if (page_is_pfmemalloc(page))
		slab_set_pfmemalloc(page_slab(page));
	return page_slab(page);
}

int build_detached_freelist(struct kmem_cache *s, size_t size,
			    void **p, struct detached_freelist *df)
{
	size_t first_skipped_index = 0;
	void *object;
	struct page *page;

	if (!object)
		return 0;

	page = virt_to_head_page(object);
	if (!s) {
		if (unlikely(!PageSlab(page))) {
			__free_pages(page, compound_order(page));
			return size;
		}
		df->s = page_slab(page)->slab_cache;
	} else {
		df->s = cache_from_obj(s, object);
	}
	df->slab = page_slab(page);
	return first_skipped_index;
}
