// New code (not in 5.10): pages used only as pages, or as pages and as
// page_slab() arguments but reaching no slab member, are not reported.
#include "slab.h"

static void *slabconv_map_page(struct page *page)
{
	return page_address(page);
}

static void *slabconv_pool_take(struct slabconv_pool *p, struct page *page)
{
	get_page(page);
	return p->freelist;
}

static void slabconv_note_page(struct page *page)
{
	get_page(page);
	slabconv_note_slab(page_slab(page));
}
