static u16 section_to_node_table[NR_MEM_SECTIONS] __cacheline_aligned;

int page_to_nid(const struct page *page)
{
	return section_to_node_table[pgflags_section(page->flags)];
}
EXPORT_SYMBOL(page_to_nid);

/* not a node lookup: left alone */
int page_to_zone_nr(const struct page *page)
{
	return section_to_node_table[pgflags_section(page->flags)];
}
