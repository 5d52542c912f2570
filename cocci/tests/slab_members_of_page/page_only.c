// A function of the same name elsewhere is not fn; and in fn, a page
// that reaches no slab member is left alone.
static void *slabconv_page_only(struct page *page)
{
	if (PageHighMem(page))
		return NULL;
	return page_address(page) + page->index;
}
