void __check_heap_object(const void *ptr, unsigned long n, struct page *page,
			 bool to_user)
{
	struct kmem_cache *s;
	unsigned int offset;

	s = page->slab_cache;
	if (ptr < page_address(page))
		usercopy_abort("SLUB object not in SLUB page?!", NULL, to_user, 0, n);
	offset = (ptr - page_address(page)) % s->size;
	objnr = obj_to_index(s, page, (void *)ptr);
}
