/* Nothing to fold: a page used as a page, a slab's page handed to a page
 * function, and a member struct slab does not have. */
static void keep(struct page *page, struct slab *slab)
{
	put_page(page);
	__free_pages(slab_page(slab), 0);
	slab_page(slab)->mapping = NULL;
	page_slab(page)->inuse = 0;
}
