/* Code the rule must leave alone. */
static struct page *maybe_page(int n)
{
	if (n < 0)
		return NULL;
	return virt_to_head_page((void *)n);
}

/* tested before the use */
static struct slab *tested_before(int n)
{
	struct page *page = maybe_page(n);

	if (!page)
		return NULL;
	return page_slab(page);
}

static struct slab *tested_before_bug_on(int n)
{
	struct page *page;

	page = maybe_page(n);
	BUG_ON(!page);
	return page_slab(page);
}

static struct slab *tested_in_condition(int n)
{
	struct page *page;

	if (!(page = maybe_page(n)))
		return NULL;
	return page_slab(page);
}

/* guarded in the same expression */
static int guarded(int n)
{
	struct page *page = maybe_page(n);

	if (page && slab_test_cache(page_slab(page)))
		return 1;
	if (!page || !slab_page(page_slab(page))->mapping)
		return 2;
	return page ? slab_nid(page_slab(page)) : -1;
}

/* slab_page() alone is a cast: a NULL passes through it */
static struct page *cast_only(struct slab *slab)
{
	struct page *page = slab_page(slab);

	if (!slab)
		return NULL;
	return slab_page(maybe_slab());
}

/* the result of a function that returns NULL is tested */
static struct slab *result_checked(int n)
{
	struct slab *slab = page_slab(maybe_page(n) ?: virt_to_head_page(NULL));
	struct page *page = maybe_page(n);

	if (page)
		return page_slab(page);
	return slab;
}

/* virt_to_head_page() never returns NULL */
static int from_object(const void *x)
{
	return slab_nid(page_slab(virt_to_head_page(x)));
}

/* a loop's own test before the use, reached again after it */
static void loop(struct page *page)
{
	while (page) {
		process(page_slab(page));
		page = next_page(page);
	}
	for (; page; page = page->next)
		process(page_slab(page));
}

/* the stub of another configuration */
#ifdef CONFIG_MIGRATION
static inline struct page *migration_entry_to_page(swp_entry_t entry)
{
	return pfn_to_page(swp_offset(entry));
}
#else
static inline struct page *migration_entry_to_page(swp_entry_t entry)
{
	return NULL;
}
#endif

static void migration(swp_entry_t entry)
{
	struct page *page = migration_entry_to_page(entry);

	page = compound_head(page);
}

/* a NULL test of another variable, or a test of a member */
static void other(struct page *page, struct page *other)
{
	struct slab *slab = page_slab(page);

	if (!other || !slab->freelist)
		return;
}

/* a list iterator assigns the variable */
static void iterated(struct kmem_cache_node *n, struct slab *slab)
{
	struct slab *first = list_first_entry_or_null(&n->partial, struct slab, slab_list);

	list_for_each_entry(first, &n->partial, slab_list)
		slab_nid(first);
	list_for_each_entry(slab, &n->partial, slab_list)
		slab_nid(slab);
	if (!slab)
		return;
}
