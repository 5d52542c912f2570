/* slabconv template: page_slab() and slab_page().
 * _Generic selections are not SmPL, so these macros come from here; they
 * are inserted before PageTail() in page-flags.h, after compound_head().
 * 5.10's compound_head() takes a non-const page, hence the cast in the
 * const branch.  The type names of the associations are written
 * `struct page * :`: checkpatch.pl reads `*:` as an operator next to a
 * ':' and reports two SPACING errors per line (upstream's own page_slab()
 * has them); with the space it has none.
 */
/**
 * page_slab - Converts from page to slab.
 * @p: The page.
 *
 * This function cannot be called on a NULL pointer.  It can be called
 * on a non-slab page; the caller should check slab_test_cache() to be sure
 * that the slab really is a slab.
 *
 * Return: The slab which contains this page.
 */
#define page_slab(p)		(_Generic((p),				\
	const struct page * :	(const struct slab *)compound_head((struct page *)(p)), \
	struct page * :		(struct slab *)compound_head(p)))

/**
 * slab_page - The first struct page allocated for a slab
 * @s: The slab.
 *
 * Slabs are allocated as one-or-more pages.  It is occasionally necessary
 * to convert back to a struct page in order to communicate with the rest
 * of the mm.  Please use this helper function instead of casting yourself,
 * as the implementation may change in the future.
 */
#define slab_page(s)		(_Generic((s),				\
	const struct slab * :	(const struct page *)(s),		\
	struct slab * :		(struct page *)(s)))
