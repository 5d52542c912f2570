/*
 * A user's file that no entry lists calls obj_to_index(), whose struct
 * page parameter (position 1) became a struct slab: new code, not in 5.10.
 */
static unsigned int user_index(struct kmem_cache *s, const void *x)
{
	struct page *page = virt_to_head_page(x);

	return obj_to_index(s, page, (void *)x);
}

static unsigned int user_index_of_slab(struct kmem_cache *s, struct slab *slab, void *x)
{
	return obj_to_index(s, slab_page(slab), x);
}

/* its own prototype of the function */
unsigned int obj_to_index(const struct kmem_cache *cache, struct page *page,
			  void *obj);

/* a call with the page at another position is the caller of another function */
static int user_other(struct kmem_cache *s, struct page *page)
{
	return obj_to_other(s, page, NULL);
}

#define USER_INDEX(s, p, x) obj_to_index(s, p, x)

static void *user_fnptr = obj_to_index;
