/* A slab local an earlier conversion set: a later page_slab(page) after it
 * is the slab. */
static struct slab *allocate_slab(struct kmem_cache *s, gfp_t flags, int node)
{
	struct page *page;
	struct slab *slab;
	void *start;

	page = alloc_slab_page(s, flags, node, s->oo);
	if (unlikely(!page)) {
		page = alloc_slab_page(s, flags, node, s->min);
		if (unlikely(!page))
			goto out;
	}
	slab = page_slab(page);

	start = page_address(page);
	setup_slab_debug(s, page_slab(page), start);
	shuffle_freelist(s, slab);

out:
	if (!page)
		return NULL;
	return slab;
}

/* the page changes after the slab was taken: left alone */
static struct slab *changes(struct kmem_cache *s)
{
	struct page *page;
	struct slab *slab;

	page = get(s);
	if (!page)
		return NULL;
	slab = page_slab(page);
	put(slab);
	page = get(s);
	return page_slab(page);
}
