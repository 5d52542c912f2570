/* the non-slab branch does not leave: the page may not be a slab below */
static size_t obj_size(const void *x)
{
	struct page *page;
	size_t size = 0;

	page = virt_to_head_page(x);
	if (!PageSlab(page))
		size = page_size(page);
	if (!size)
		size = page->slab_cache->object_size;
	return size;
}
