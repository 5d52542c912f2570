/* Code 5.10 does not have: returns of a page that can be NULL.  Each one
 * is refused with its place, never wrapped in page_slab(). */
static struct page *grab_slab(struct kmem_cache *s, int node)
{
	struct page *page = alloc_pages_node(node, s->gfp, s->order);

	if (page)
		account(page);
	return page;
}

static struct page *grab_other(struct kmem_cache *s)
{
	return alloc_pages(s->gfp, s->order);
}
