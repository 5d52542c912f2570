/*
 * Left alone: 6.4's enum pageflags, without SLOB and so without the
 * PG_slob_free alias the new flag goes after, and another enum that has a
 * PG_slob_free of its own.
 */
enum pageflags {
	PG_locked,		/* Page is locked. Don't touch. */
	PG_active,
	PG_private,		/* If pagecache, has fs-private data */
	__NR_PAGEFLAGS,

	/* Filesystems */
	PG_checked = PG_owner_priv_1,

	/* Compound pages. Stored in first tail page's flags */
	PG_double_map = PG_workingset,
};

enum my_flags {
	MY_first,
	PG_slob_free = MY_first,
};
