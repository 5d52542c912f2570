/* Not in 5.10: a new helper reading the object count of a page it was
 * handed, converted when it is the function named. */
static unsigned int objects_of(struct page *page)
{
	return page->objects;
}
