/* Code 5.10 does not have: a local that is tested for NULL, and left by a
 * goto, before the return. */
static struct page *grow(struct kmem_cache *s, int node)
{
	struct page *page;

	page = get_pages(s, node);
	if (!page)
		goto failed;
	setup(s, page);
	return page;
failed:
	return NULL;
}
