/* Not in 5.10: a new checker with the same head-page local, which also
 * reads a slab field of it. */
static bool object_in_slab_cache(const void *ptr, struct kmem_cache *s)
{
	struct page *page;

	page = compound_head(virt_to_page(ptr));
	if (!PageSlab(page))
		return false;
	if (page->slab_cache != s)
		return false;
	return __check_heap_object(ptr, 1, page, false), true;
}
