/* The dropped parameter is the last one: user_next_entry(s, pos, page). */
unsigned long user_next_entry(struct kmem_cache *s, unsigned long *pos,
			      struct page *page);

static unsigned long user_walk(struct kmem_cache *s, struct page *page)
{
	unsigned long pos = 0;

	return user_next_entry(s, &pos, page);
}
