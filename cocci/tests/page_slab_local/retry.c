/* The page is known not to be NULL after a NULL test whose branch gets
 * the page again and jumps to a label when that fails too: the slab is
 * taken there.  A use after the label is reached only through it (every
 * goto to the label is a NULL test's failure, and a NULL test that returns
 * follows the label). */
static struct slab *allocate_slab(struct kmem_cache *s, gfp_t flags, int node)
{
	struct page *page;
	struct kmem_cache_order_objects oo = s->oo;
	void *start;
	bool shuffle;

	page = alloc_slab_page(s, flags, node, oo);
	if (unlikely(!page)) {
		oo = s->min;
		page = alloc_slab_page(s, flags, node, oo);
		if (unlikely(!page))
			goto out;
		stat(s, ORDER_FALLBACK);
	}

	page->objects = oo_objects(oo);
	start = page_address(page);

	setup_slab_debug(s, page_slab(page), start);

	shuffle = shuffle_freelist(s, page_slab(page));

	page->inuse = page->objects;

out:
	if (gfpflags_allow_blocking(flags))
		local_irq_disable();
	if (!page)
		return NULL;

	inc_slabs_node(s, page_to_nid(page), page->objects);

	return page_slab(page);
}

/* a goto to the label that is not a NULL test's failure: left alone (the
 * use after the label may be reached with the slab not taken) */
static struct slab *other_goto(struct kmem_cache *s, gfp_t flags, int node)
{
	struct page *page;

	page = alloc_slab_page(s, flags, node, s->oo);
	if (unlikely(!page)) {
		page = alloc_slab_page(s, flags, node, s->min);
		if (unlikely(!page))
			goto out;
	}

	if (shuffle_freelist(s, page_slab(page)))
		goto out;
	setup_slab_debug(s, page_slab(page), NULL);

out:
	if (!page)
		return NULL;
	return page_slab(page);
}

/* the branch falls through with the page it may not have got: left alone */
static struct slab *no_test(struct kmem_cache *s, gfp_t flags, int node)
{
	struct page *page;

	page = alloc_slab_page(s, flags, node, s->oo);
	if (unlikely(!page)) {
		page = alloc_slab_page(s, flags, node, s->min);
		stat(s, ORDER_FALLBACK);
	}

	setup_slab_debug(s, page_slab(page), NULL);
	return page_slab(page);
}
