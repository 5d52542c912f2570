/* An #ifdef'd stub is changed with the real definition; not in 5.10: a
 * new caller. */
#ifdef CONFIG_SLUB_DEBUG
static void setup_object_debug(struct kmem_cache *s, struct page *page,
								void *object)
{
	init_object(s, object, SLUB_RED_INACTIVE);
}
#else
static inline void setup_object_debug(struct kmem_cache *s,
			struct page *page, void *object) {}
#endif

static void *setup_new_object(struct kmem_cache *s, struct page *page, void *object)
{
	setup_object_debug(s, page, object);
	return object;
}
