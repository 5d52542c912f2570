/*
 * A user's file that no entry lists calls user_setup_object(), whose
 * unused struct page parameter (position 1) an entry dropped: new code,
 * not in 5.10.
 */
static void *user_setup_object(struct kmem_cache *s, struct page *page,
			       void *object);

static void *user_alloc_one(struct kmem_cache *s, struct page *page, void *p)
{
	return user_setup_object(s, page, p);
}

static void *user_alloc_first(struct kmem_cache *s, void *p)
{
	return user_setup_object(s, virt_to_head_page(p),
				 p);
}

/* the page at another position is another function's */
static void *user_other(struct kmem_cache *s, struct page *page, void *p)
{
	return user_setup_other(s, page, p);
}
