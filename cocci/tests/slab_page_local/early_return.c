/* The local's uses are all on paths that return early: it stays. */
static int check_slab(struct kmem_cache *s, struct slab *slab)
{
	struct page *page = slab_page(slab);
	int maxobj;

	VM_BUG_ON(!irqs_disabled());

	if (!slab_test_cache(slab)) {
		slab_err(s, page, "Not a valid slab page");
		return 0;
	}

	maxobj = order_objects(slab_order(slab), s->size);
	if (slab->objects > maxobj) {
		slab_err(s, page, "objects %u > max %u",
			 slab->objects, maxobj);
		return 0;
	}
	if (slab->inuse > slab->objects) {
		slab_err(s, page, "inuse %u > max %u",
			 slab->inuse, slab->objects);
		return 0;
	}
	/* Slab_pad_check fixes things up after itself */
	slab_pad_check(s, slab);
	return 1;
}
