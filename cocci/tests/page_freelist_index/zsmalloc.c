/* 5.10's mm/zsmalloc.c: the component pages of a zspage chained through ->freelist */
static struct page *get_next_page(struct page *page)
{
	if (unlikely(PageHugeObject(page)))
		return NULL;

	return page->freelist;
}

static void reset_page(struct page *page)
{
	ClearPagePrivate(page);
	page->freelist = NULL;
}

static void create_page_chain(struct size_class *class, struct zspage *zspage,
				struct page *pages[])
{
	int i;
	struct page *page;
	struct page *prev_page = NULL;

	for (i = 0; i < class->pages_per_zspage; i++) {
		page = pages[i];
		page->freelist = NULL;
		if (i)
			prev_page->freelist = page;
		prev_page = page;
	}
}

/* a freelist that is not a page's is left alone */
static void *pop(struct zspage *zspage)
{
	void *obj = zspage->freelist;

	zspage->freelist = NULL;
	return obj;
}
