/* Not in 5.10: a later enum pageflags, with flags added around SLOB's. */
enum pageflags {
	PG_locked,		/* Page is locked. Don't touch. */
	PG_referenced,
	PG_active,
	PG_private,		/* If pagecache, has fs-private data */
	PG_reported,
	__NR_PAGEFLAGS,

	PG_readahead = PG_reclaim,

	/* Filesystems */
	PG_checked = PG_owner_priv_1,

	/* SLOB */
	PG_slob_free = PG_private,

	/* Compound pages. Stored in first tail page's flags */
	PG_double_map = PG_workingset,

#ifdef CONFIG_MEMORY_FAILURE
	PG_has_hwpoisoned = PG_error,
#endif

	/* non-lru isolated movable page */
	PG_isolated = PG_reclaim,
};
