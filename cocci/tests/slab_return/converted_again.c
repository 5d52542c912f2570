/* new_code.res: code this rule has converted already, which it must leave alone */
/* Code 5.10 does not have: a prototype, and a new caller that passes the
 * result straight on. Another function returning a page is left alone. */
static struct slab *new_slab(struct kmem_cache *s, gfp_t flags, int node);

static void *refill_from_new(struct kmem_cache *s, gfp_t flags, int node)
{
	return get_freelist_of(new_slab(s, flags, node));
}

static struct page *alloc_slab_page(struct kmem_cache *s, gfp_t flags)
{
	return alloc_pages(flags, 0);
}
