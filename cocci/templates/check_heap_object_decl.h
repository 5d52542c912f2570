/* slabconv template: __check_heap_object() declared in mm/slab.h.
 * A declaration under #ifdef with a static inline fallback is not SmPL
 * added code; inserted at the end of mm/slab.h.
 */
#ifdef CONFIG_HAVE_HARDENED_USERCOPY_ALLOCATOR
void __check_heap_object(const void *ptr, unsigned long n,
			 const struct slab *slab, bool to_user);
#else
static inline
void __check_heap_object(const void *ptr, unsigned long n,
			 const struct slab *slab, bool to_user)
{
}
#endif
