/* After the series: slab code uses struct slab, other code its own fields. */
static void *f(struct slab *slab, struct zspage *zspage, struct page *page)
{
	slab->freelist = NULL;
	zspage->freelist = 0;
	page->index = 0;
	return slab_address(slab) + slab->units + virt_to_slab(page)->inuse;
}
