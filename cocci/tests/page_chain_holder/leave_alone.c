/* A struct page * local that is not a chain: no chain-freeing function. */
static void release(struct page *page)
{
	struct page *head = NULL;

	head = compound_head(page);
	if (!head)
		return;
	put_page(head);
}
