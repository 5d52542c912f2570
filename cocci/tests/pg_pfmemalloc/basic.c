enum pageflags {
	PG_locked,		/* Page is locked. Don't touch. */
	PG_active,
	PG_private,		/* If pagecache, has fs-private data */
	__NR_PAGEFLAGS,

	/* Filesystems */
	PG_checked = PG_owner_priv_1,

	/* SLOB */
	PG_slob_free = PG_private,

	/* Compound pages. Stored in first tail page's flags */
	PG_double_map = PG_workingset,
};
