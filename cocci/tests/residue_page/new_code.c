// Code that is not in 5.10: a const page helper, an out-parameter, an
// array of pages, a struct page by value, a SLOB page and SLAB's active.
struct slab_batch {
	struct page **pages;
	unsigned int nr;
};

static const struct page *first_page(const struct page *page)
{
	return page->next;
}

static int get_pages(struct kmem_cache *s, struct page **out, struct page *pages[])
{
	*out = pages[0];
	(*out)->slab_cache = s;
	return pages[1]->active + pages[1]->units;
}

static void copy_page_struct(struct page dst, struct slab_batch *b)
{
	dst.s_mem = NULL;
	b->pages[0]->pobjects = dst.pages;
}
