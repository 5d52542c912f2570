/* Not in 5.10: a new walker that still holds a page, converted when it is
 * the function named. */
static unsigned int count_one(struct page *page,
			      int (*get_count)(struct page *))
{
	return get_count(page);
}
