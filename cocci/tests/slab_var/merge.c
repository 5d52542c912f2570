/* A slab local that holds page_slab(page), set once after the page's last
 * new value: the page becomes that slab. */
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

	page->objects = 1;
	start = page_address(page);
	setup_slab_debug(s, slab, start);

out:
	if (!page)
		return NULL;
	return slab;
}

/* the same names in another function: left alone */
static struct slab *other(struct kmem_cache *s)
{
	struct page *page;
	struct slab *slab;

	page = get(s);
	slab = page_slab(page);
	return slab;
}
