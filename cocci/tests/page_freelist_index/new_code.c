/* new code, not in 5.10: a driver that tags its pages through ->freelist */
static void tag_page(struct page *page, unsigned long tag)
{
	page->freelist = (void *)tag;
}

static bool page_tagged(struct page *page, unsigned long tag)
{
	return (unsigned long)page->freelist == tag;
}

static struct page *next_in_chain(struct page *page)
{
	return page->freelist;
}
