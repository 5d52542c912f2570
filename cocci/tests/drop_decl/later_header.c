/* Not in 5.10: a later header, which declares it with extern and takes a
 * const page; the stub for !HARDENED_USERCOPY is on one line. */
#ifdef CONFIG_HARDENED_USERCOPY
extern void __check_heap_object(const void *ptr, unsigned long n,
				const struct page *page, bool to_user);
#else
static inline void __check_heap_object(const void *ptr, unsigned long n, const struct page *page, bool to_user) { }
#endif
extern void __check_object_size(const void *ptr, unsigned long n, bool to_user);
