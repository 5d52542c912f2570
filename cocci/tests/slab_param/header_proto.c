/* a prototype in a header, definition elsewhere */
void __check_heap_object(const void *ptr, unsigned long n, struct page *page,
			bool to_user);
