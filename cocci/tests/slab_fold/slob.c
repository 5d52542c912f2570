/* SLOB after its locals became slabs: the free-list flag and
 * virt_to_page() on an object. */
static void *slob_alloc(size_t size, gfp_t gfp, int align, int node)
{
	struct slab *sp;

	sp = page_slab(virt_to_page(b));
	if (PageSlobFree(slab_page(sp)))
		__ClearPageSlobFree(slab_page(sp));
	else
		__SetPageSlobFree(slab_page(sp));
	return b;
}
