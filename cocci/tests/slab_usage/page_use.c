// New code (not in 5.10): pages used as pages stay pages; a page used
#include "slab.h"

// both ways is reported as mixed (the safe form keeps it a page).
static void *map(struct page *page)
{
	return page_address(page);
}

static int mixed(struct page *page)
{
	if (PageSlab(page))
		return page->inuse;
	return page_count(page);
}

struct pool {
	void *freelist;
};

static void *pool_take(struct pool *p, struct page *page)
{
	get_page(page);
	return p->freelist;
}
