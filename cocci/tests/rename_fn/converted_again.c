/* print_page_info.res: code this rule has converted already, which it must leave alone */
/* 5.10, and a new caller (not in 5.10). */
static void print_slab_info(struct page *page);

static void print_slab_info(struct page *page)
{
	pr_err("INFO: Slab 0x%p\n", page);
}

static void new_report(struct page *page)
{
	print_slab_info(page);
	print_page_info_other(page);
}
