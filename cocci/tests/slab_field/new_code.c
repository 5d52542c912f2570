/* new code, not in 5.10: a bulk-free cursor remembering the current slab */
struct free_cursor {
	struct kmem_cache *s;
	struct page *page;
	unsigned int inuse;
};

/* a structure of the same shape with another name is left alone */
struct page_cursor {
	struct page *page;
};

static void cursor_start(struct free_cursor *fc, struct page_cursor *pc, void *object)
{
	fc->page = virt_to_head_page(object);
	fc->inuse = fc->page->inuse;
	pc->page = virt_to_head_page(object);
}

static bool cursor_same(struct free_cursor *fc, struct slab *slab)
{
	if (fc->page == NULL)
		return false;
	return fc->page != slab_page(slab);
}
