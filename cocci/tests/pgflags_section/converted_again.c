/* basic.res: code this rule has converted already, which it must leave alone */
static inline unsigned long pgflags_section(unsigned long pgflags)
{
	return (pgflags >> SECTIONS_PGSHIFT) & SECTIONS_MASK;
}

#define __page_to_pfn(pg)					\
({	const struct page *__pg = (pg);				\
	int __sec = pgflags_section(__pg->flags);			\
	(unsigned long)(__pg - __section_mem_map_addr(__nr_to_section(__sec)));	\
})

int page_to_nid(const struct page *page)
{
	return section_to_node_table[pgflags_section(page->flags)];
}

/* new code, not in 5.10: a caller passing an expression */
static int section_of_head(struct page *page)
{
	return pgflags_section(compound_head(page)->flags) + pgflags_section((&page[1])->flags);
}
