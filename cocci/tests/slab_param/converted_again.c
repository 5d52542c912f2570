/* check_heap_object.res: code this rule has converted already, which it must leave alone */
void __check_heap_object(const void *ptr, unsigned long n,
			 const struct slab *slab,
			 bool to_user)
{
	struct kmem_cache *s;
	unsigned int offset;

	s = slab->slab_cache;
	if (ptr < slab_address(slab))
		usercopy_abort("SLUB object not in SLUB page?!", NULL, to_user, 0, n);
	offset = (ptr - slab_address(slab)) % s->size;
	objnr = obj_to_index(s, slab_page(slab), (void *)ptr);
}
