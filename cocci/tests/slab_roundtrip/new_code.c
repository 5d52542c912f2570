// New code (not in 5.10), outside mm/: a caller whose local was converted
// after the callee's parameter; virt_to_head_page() stays (no mm/slab.h).
static unsigned int slabconv_probe_use(const void *p)
{
	struct slab *slab = page_slab(virt_to_head_page(p));

	if (slab_page(slab)->inuse)
		return 0;
	return slab_free_count(page_slab(slab_page(slab)));
}
