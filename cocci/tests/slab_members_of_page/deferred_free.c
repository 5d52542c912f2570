// A branch's deferred free of slab pages: the pages are linked through
// their lru into a list of the branch's own (a use as a page) and their
// cache is read (a use as a slab).  The slab member is reached through
// page_slab(); the list linkage stays the page's.
static LIST_HEAD(slabconv_deferred_pages);

static void slabconv_deferred_flush(void)
{
	struct page *page, *next;

	list_for_each_entry_safe(page, next, &slabconv_deferred_pages, lru) {
		list_del(&page->lru);
		kmem_cache_free(page->slab_cache, page->freelist);
	}
}
