/* Functions that return a page and take a page but build no chain. */
static struct page *pick(struct page *a, struct page *b)
{
	return a ? a : b;
}

static struct page *next_in_slab(struct kmem_cache *s, struct page *page)
{
	page->objects = s->oo;
	return page;
}
