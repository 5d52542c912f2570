/* Code 5.10 does not have: the result of a function of another file,
 * which may be NULL, returned as it is: refused with its place. */
static struct page *grab_other(struct kmem_cache *s)
{
	return alloc_pages(s->gfp, s->order);
}

static struct page *addr_slab(const void *x)
{
	if (!x)
		return NULL;
	return virt_to_head_page(x);
}
