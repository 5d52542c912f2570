static inline unsigned long page_to_section(const struct page *page)
{
	return (page->flags >> SECTIONS_PGSHIFT) & SECTIONS_MASK;
}

#define __page_to_pfn(pg)					\
({	const struct page *__pg = (pg);				\
	int __sec = page_to_section(__pg);			\
	(unsigned long)(__pg - __section_mem_map_addr(__nr_to_section(__sec)));	\
})

int page_to_nid(const struct page *page)
{
	return section_to_node_table[page_to_section(page)];
}

/* new code, not in 5.10: a caller passing an expression */
static int section_of_head(struct page *page)
{
	return page_to_section(compound_head(page)) + page_to_section(&page[1]);
}
