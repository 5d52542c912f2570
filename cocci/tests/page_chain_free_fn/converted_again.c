/* free_fns.res: code this rule has converted already, which it must leave alone */


/* Not a chain: stays. */
static void free_one(struct page *page)
{
	__free_page(page);
}
