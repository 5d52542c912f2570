/*
 * Left alone: a page_to_nid() that does not compute the node from the flags
 * word (the node by pfn), and page_zonenum(), which has the shift and mask
 * shape of page_to_nid() but is another function.
 */
static inline int page_to_nid(const struct page *page)
{
	return pfn_to_nid(page_to_pfn(page));
}

static inline enum zone_type page_zonenum(const struct page *page)
{
	return (page->flags >> ZONES_PGSHIFT) & ZONES_MASK;
}
