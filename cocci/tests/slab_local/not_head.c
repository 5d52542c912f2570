/* a local that is not assigned from compound_head() may be a tail page: untouched */
static inline void check_heap_object(const void *ptr, unsigned long n,
				     bool to_user)
{
	struct page *page;

	page = kmap_to_page((void *)ptr);
	if (PageSlab(page))
		__check_heap_object(ptr, n, page, to_user);
}
