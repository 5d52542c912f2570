/* The parameter is used: nothing changes. */
static void *setup_object(struct kmem_cache *s, struct page *page, void *object)
{
	setup_object_debug(s, page, object);
	return object;
}

static void f(struct kmem_cache *s, struct page *page, void *p)
{
	setup_object(s, page, p);
}
