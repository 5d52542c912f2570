/* A page that follows a slab, after a callee was made to take the slab:
 * page_slab(page) is the slab. */

/* node_match() takes the slab: still three uses of the first value */
static void *still(struct kmem_cache *s, int node, struct kmem_cache_cpu *c)
{
	void *freelist;
	struct slab *slab;
	struct page *page;

	slab = READ_ONCE(c->slab);
	page = slab_page(slab);
	if (unlikely(!node_match(page_slab(page), node)))
		return NULL;
	if (unlikely(!pfmemalloc_match_unsafe(page, 0)))
		return NULL;
	freelist = get_freelist(s, page);
	deactivate_slab(s, page, freelist, c);
	freelist = get_partial(s, 0, node, &slab);
	page = slab_page(slab);
	deactivate_slab(s, page, freelist, c);
	return freelist;
}

/* deactivate_slab() takes the slab: two uses of a value at most, the page
 * goes */
static void *gone(struct kmem_cache *s, int node, struct kmem_cache_cpu *c)
{
	void *freelist;
	struct slab *slab;
	struct page *page;
	unsigned long flags;

	slab = READ_ONCE(c->slab);
	page = slab_page(slab);
	if (unlikely(!pfmemalloc_match_unsafe(page, 0)))
		return NULL;
	freelist = get_freelist(s, page);
	deactivate_slab(s, page_slab(page), freelist, c);
	freelist = get_partial(s, 0, node, &slab);
	page = slab_page(slab);
	if (!alloc_debug_processing(s, page, freelist))
		return NULL;
	deactivate_slab(s, page_slab(page), freelist, c);
	return freelist;
}

/* the page has a value of its own once: not a page that follows the slab,
 * left alone */
static void *own(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	struct slab *slab;
	struct page *page;

	slab = READ_ONCE(c->slab);
	page = slab_page(slab);
	put(page_slab(page));
	page = virt_to_head_page(s);
	put(page_slab(page));
	return page;
}

/* a new value of the slab that the page does not follow: left alone */
static void *stale(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	struct slab *slab;
	struct page *page;

	slab = READ_ONCE(c->slab);
	page = slab_page(slab);
	put(page_slab(page));
	slab = c->partial;
	put(page_slab(page));
	return page;
}
