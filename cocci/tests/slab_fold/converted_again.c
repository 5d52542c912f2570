/* call_sites.res: code this rule has converted already, which it must leave alone */
/* Call sites: slab_page(X) is folded only where the callee, defined in this
 * file, takes a struct slab at that argument position. */
static void takes_slab(struct kmem_cache *s, struct slab *slab);
static void takes_page(struct kmem_cache *s, struct page *page);
static bool takes_const(const struct slab *slab, int n);

static void caller(struct kmem_cache *s, struct slab *slab, struct slab *other)
{
	takes_slab(s, slab);
	takes_page(s, slab_page(slab));
	if (takes_const(other, 1))
		takes_slab(s, other);
	/* the wrong position: takes_slab()'s first argument is the cache */
	takes_slab(slab_page(slab), NULL);
	/* defined elsewhere: nothing is known about it */
	unknown_fn(s, slab_page(slab));
}

static void takes_slab(struct kmem_cache *s, struct slab *slab)
{
}

static void takes_page(struct kmem_cache *s, struct page *page)
{
}

static bool takes_const(const struct slab *slab, int n)
{
	return n;
}
