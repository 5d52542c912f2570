// Converted code: struct slab everywhere, and things that only look like
// struct page uses.  The rule reports nothing here.
struct kmem_cache_cpu {
	void **freelist;
	struct slab *slab;
	struct slab *partial;
};

struct detached_freelist {
	struct slab *slab;
	void *tail;
	void *freelist;
	int cnt;
	struct kmem_cache *s;
};

/* A comment that mentions struct page and page->freelist. */
static bool acquire_slab(struct kmem_cache *s, struct slab *slab, int *objects)
{
	struct slab new;
	struct page_ext *ext = NULL;

	new.counters = slab->counters;
	*objects = new.objects - new.inuse;
	return __cmpxchg_double_slab(s, slab, slab->freelist, slab->counters,
				     NULL, new.counters, "acquire_slab");
}

static void flush(struct kmem_cache *s, struct kmem_cache_cpu *c,
		  struct detached_freelist *df)
{
	void *freelist = c->freelist;

	if (c->slab->frozen)
		c->freelist = NULL;
	df->slab->inuse--;
	list_for_each_entry(df->slab, &s->list, slab_list)
		;
	s->next = freelist;
	c->partial->next = NULL;
	deactivate_slab(s, c->slab, c->freelist, c);
}
