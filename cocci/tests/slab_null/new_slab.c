/*
 * The shape of "mm/slub: Convert new_slab() to return a struct slab" as
 * generated for 5.10: new_slab() returns page_slab(allocate_slab(...)),
 * and allocate_slab() returns NULL when the page allocator fails.
 */
static inline struct page *alloc_slab_page(struct kmem_cache *s,
		gfp_t flags, int node, struct kmem_cache_order_objects oo)
{
	struct page *page;
	unsigned int order = oo_order(oo);

	if (node == NUMA_NO_NODE)
		page = alloc_pages(flags, order);
	else
		page = __alloc_pages_node(node, flags, order);

	if (page)
		account_slab(page_slab(page), order, s);

	return page;
}

static struct page *allocate_slab(struct kmem_cache *s, gfp_t flags, int node)
{
	struct page *page;
	struct kmem_cache_order_objects oo = s->oo;
	gfp_t alloc_gfp;

	flags &= gfp_allowed_mask;
	alloc_gfp = (flags | __GFP_NOWARN | __GFP_NORETRY) & ~__GFP_NOFAIL;

	page = alloc_slab_page(s, alloc_gfp, node, oo);
	if (unlikely(!page)) {
		oo = s->min;
		alloc_gfp = flags;
		page = alloc_slab_page(s, alloc_gfp, node, oo);
		if (unlikely(!page))
			goto out;
		stat(s, ORDER_FALLBACK);
	}

	page->objects = oo_objects(oo);
	shuffle_freelist(s, page_slab(page));

out:
	if (gfpflags_allow_blocking(flags))
		local_irq_disable();
	if (!page)
		return NULL;

	inc_slabs_node(s, page_to_nid(page), page->objects);

	return page;
}

static struct slab *new_slab(struct kmem_cache *s, gfp_t flags, int node)
{
	if (unlikely(flags & GFP_SLAB_BUG_MASK))
		flags = kmalloc_fix_flags(flags);

	return page_slab(allocate_slab(s, flags & (GFP_RECLAIM_MASK | GFP_CONSTRAINT_MASK), node));
}

/* its callers test what new_slab() returns: nothing to report there */
static void *new_slab_objects(struct kmem_cache *s, gfp_t flags, int node)
{
	struct slab *slab;
	struct page *page;

	slab = new_slab(s, flags, node);
	if (slab) {
		slab->freelist = NULL;
		return slab_address(slab);
	}
	page = slab_page(new_slab(s, flags, node));
	if (!page)
		return NULL;
	return slab_address(page_slab(page));
}
