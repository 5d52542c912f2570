/* 5.10: the page is passed but never read. */
static void *next_freelist_entry(struct kmem_cache *s, struct page *page,
				unsigned long *pos, void *start,
				unsigned long page_limit,
				unsigned long freelist_count)
{
	unsigned int idx;

	idx = s->random_seq[*pos];
	return (char *)start + idx;
}

static bool shuffle_freelist(struct kmem_cache *s, struct page *page)
{
	cur = next_freelist_entry(s, page, &pos, start, page_limit,
				freelist_count);
	return true;
}
