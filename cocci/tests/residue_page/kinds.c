// Every kind the rule reports, in 5.10 SLUB shapes.
struct kmem_cache_cpu {
	void **freelist;
	struct page *page;
	struct page *partial;
};

static struct page *spare_page;

static void put_cpu_partial(struct kmem_cache *s, struct page *page, int drain);
static inline bool pfmemalloc_match(struct page *, gfp_t gfpflags);

static inline struct page *alloc_slab_page(struct kmem_cache *s, gfp_t flags, int node,
					   unsigned int order)
{
	struct page *page;

	page = alloc_pages_node(node, flags, order);
	if (likely(page))
		account_slab_page(page, order, s);
	return page;
}

static void rcu_free_slab(struct rcu_head *h)
{
	struct page *page = container_of(h, struct page, rcu_head);

	__free_slab(page->slab_cache, page);
}

static bool acquire_slab(struct kmem_cache *s, struct page *page, int *objects)
{
	struct page new;

	new.counters = page->counters;
	*objects = new.objects - new.inuse;
	return __cmpxchg_double_slab(s, page, page->freelist, page->counters,
				     NULL, new.counters, "acquire_slab");
}

static unsigned long count_partial(struct kmem_cache_node *n,
				   int (*get_count)(struct page *))
{
	unsigned long x = 0;
	struct page *page;

	list_for_each_entry(page, &n->partial, slab_list)
		x += get_count(page);
	return x;
}

static void *___slab_alloc(struct kmem_cache *s, struct kmem_cache_cpu *c, void *x)
{
	VM_BUG_ON(!c->page->frozen);
	if (PageSlab(virt_to_head_page(x)))
		return slab_page(c->slab)->freelist;
	deactivate_slab(s, c->page, c->freelist, c);
	return (struct page *)x + sizeof(struct page);
}

static void free_pages_list(struct list_head *l)
{
	struct page *p = list_first_entry(l, struct page, lru);

	__free_pages(p, 0);
}
