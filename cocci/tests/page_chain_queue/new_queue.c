/* A new driver's flush queue: its own destructor and a new caller. */
static void new_free_chain(struct page *chain)
{
	while (chain) {
		struct page *next = chain->freelist;

		__free_page(chain);
		chain = next;
	}
}

static void new_fq_dtor(unsigned long data)
{
	struct page *chain = (struct page *)data;

	new_free_chain(chain);
}

static void new_unmap(struct new_domain *dom, unsigned long pfn, unsigned long n)
{
	struct page *chain = NULL;

	chain = new_clear_range(dom, pfn, n, chain);
	if (dom->strict) {
		new_flush(dom);
		new_free_chain(chain);
	} else {
		queue_iova(&dom->iovad, pfn, n, (unsigned long)chain);
	}
}
