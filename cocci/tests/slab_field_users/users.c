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

/* new code: a walk of a slab list with a struct page cursor, and an entry
 * of one named by its member */
static unsigned long h(struct kmem_cache_node *n, struct list_head *lh)
{
	struct page *page, *t;
	struct zspage_like *z;
	unsigned long x = 0;

	list_for_each_entry(page, &n->partial, slab_list)
		x++;
	list_for_each_entry_safe(page, t, &n->partial, slab_list)
		x++;
	list_for_each_entry(page, &n->partial, lru)		/* a page's own linkage */
		x++;
	list_for_each_entry(z, lh, slab_list)			/* not a struct page */
		x++;
	return x + page_to_nid(list_entry(lh, struct page, slab_list));
}
