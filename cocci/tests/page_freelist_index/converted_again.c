/* bootmem.res: code this rule has converted already, which it must leave alone */
/* 5.10's get_page_bootmem()/put_page_bootmem() and x86's free_pagetable() */
void get_page_bootmem(unsigned long info,  struct page *page,
		      unsigned long type)
{
	page->index = type;
	SetPagePrivate(page);
}

void put_page_bootmem(struct page *page)
{
	unsigned long type;

	type = page->index;
	if (page_ref_dec_return(page) == 1)
		page->index = 0;
}

static void __meminit free_pagetable(struct page *page, int order)
{
	unsigned long magic;

	if (PageReserved(page)) {
		magic = page->index;
		if (magic == SECTION_INFO)
			put_page_bootmem(page);
	}
}
