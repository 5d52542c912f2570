/* mm/slub.c after the locals were converted (slab_var.cocci). */
static void *alloc(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	struct slab *slab;

	slab = page_slab(c->page);
	if (!slab) {
		slab = page_slab(c->page = slub_percpu_partial(c));
		slub_set_percpu_partial(c, slab_page(slab));
	}
	c->page = slab_page(slab);
	VM_BUG_ON(!c->page->frozen);
	deactivate_slab(s, c->page, c->freelist, c);
	c->page = NULL;
	return NULL;
}

static void put(struct kmem_cache *s, struct slab *slab)
{
	struct slab *oldslab;

	do {
		oldslab = page_slab(this_cpu_read(s->cpu_slab->partial));
		slab->next = slab_page(oldslab);
	} while (this_cpu_cmpxchg(s->cpu_slab->partial, slab_page(oldslab), slab_page(slab))
								!= slab_page(oldslab));
}

/* Not in 5.10: a new reader of both fields that still wants pages. */
static void show_cpu_slab_pages(struct kmem_cache *s, int cpu)
{
	struct kmem_cache_cpu *c = per_cpu_ptr(s->cpu_slab, cpu);
	struct page *page;

	page = READ_ONCE(c->page);
	show_page(page);
	page = slub_percpu_partial_read_once(c);
	show_page(page);
}
