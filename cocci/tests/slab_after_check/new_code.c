/* new code, not in 5.10: a debug helper that checks the page first */
static void dump_object_slab(const void *x)
{
	struct page *page;

	page = virt_to_head_page(x);
	if (!PageSlab(page))
		return;
	pr_info("%s: %u/%u objects in use, node %d\n", page->slab_cache->name,
		page->inuse, page->objects, page_to_nid(page));
}
