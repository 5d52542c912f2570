/* 5.10's get_page_bootmem()/put_page_bootmem() and x86's free_pagetable() */
void get_page_bootmem(unsigned long info,  struct page *page,
		      unsigned long type)
{
	page->freelist = (void *)type;
	SetPagePrivate(page);
}

void put_page_bootmem(struct page *page)
{
	unsigned long type;

	type = (unsigned long) page->freelist;
	if (page_ref_dec_return(page) == 1)
		page->freelist = NULL;
}

static void __meminit free_pagetable(struct page *page, int order)
{
	unsigned long magic;

	if (PageReserved(page)) {
		magic = (unsigned long)page->freelist;
		if (magic == SECTION_INFO)
			put_page_bootmem(page);
	}
}
