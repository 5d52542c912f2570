/* Not in 5.10: a new function that walks the cpu partial slabs with a
 * page cursor and reads page->inuse and page->objects. */
static unsigned int count_cpu_partial_free(struct kmem_cache_cpu *c)
{
	struct page *page = READ_ONCE(c->partial);
	unsigned int free = 0;

	while (page) {
		free += page->objects - page->inuse;
		page = page->next;
	}
	return free;
}
