/* Code 5.10 does not have: a page from an address, which is never NULL. */
static struct page *addr_slab(const void *x)
{
	if (!x)
		return NULL;
	return virt_to_head_page(x);
}
