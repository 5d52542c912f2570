/* Uses of the slab members of struct page, and look-alikes that are not. */
struct zspage_like {
	void *freelist;
	int units;
};

static void *f(struct page *page, struct kmem_cache *s, struct zspage_like *z)
{
	struct page *next = page->next;
	struct page head;

	page->freelist = NULL;
	head.units = 1;
	s = virt_to_head_page(s)->slab_cache;
	z->freelist = NULL;		/* not a struct page */
	z->units = s->inuse;		/* not a struct page either */
	return list_first_entry(&n->partial, struct page, slab_list)->s_mem;
}

/* new code: a caller that did not exist when the series was written */
static int g(const void *obj)
{
	return pfn_to_page(obj_pfn(obj))->objects;
}
