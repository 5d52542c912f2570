// SPDX-License-Identifier: GPL-2.0
/*
 * slabconv_faultinj - slab allocations that fail, inside the QEMU guest.
 *
 * Loaded by boot/guest/init.sh (test 10, fault_injection) after the init
 * has armed the kernel's fault injection through debugfs.  Allocations fail
 * only for the task that is marked (task-filter: current->make_it_fail, the
 * flag /proc/<pid>/make-it-fail sets), and this module marks its own task
 * only around the allocations that must fail, so nothing else in the guest
 * sees an injected failure.
 *
 *   phase "page" (at insmod): /sys/kernel/debug/fail_page_alloc armed
 *     (probability 100, min-order 0, ignore-gfp-wait N: every page
 *     allocation of the marked task fails, whatever its order and GFP).
 *     On fresh caches of several object sizes (SLUB: slab orders 0 to 3),
 *     in process context (GFP_KERNEL) and in atomic context (GFP_ATOMIC,
 *     interrupts off under a spinlock; kmem_cache_alloc_bulk(), which must
 *     be called with interrupts on, under the spinlock alone): the first
 *     allocation of a fresh cache needs a slab page, and must return NULL
 *     (SLUB: both the high-order attempt and the minimum-order fallback
 *     fail, so allocate_slab() hands NULL on); with injection off one
 *     allocation works; with injection on again the rest of that slab is
 *     handed out and then NULL; kmem_cache_alloc_bulk() returns 0; with
 *     injection off again new slabs are made.  Objects stay held until rmmod (half of
 *     them freed, so the caches have partial slabs) for SLUB validate.
 *     One allocation without __GFP_NOWARN, bracketed by
 *     "slabconv-expect: begin oom nomem CACHE" / "slabconv-expect: end oom"
 *     kernel lines: SLAB's and SLUB's slab_out_of_memory() report
 *     ("SLUB: Unable to allocate memory on node", walking the cache's
 *     nodes and partial lists) must name CACHE there (boot/console.py).
 *   phase "failslab" (echo failslab > parameters/run, after the init
 *     disarmed fail_page_alloc and armed /sys/kernel/debug/failslab):
 *     should_failslab() fails kmem_cache_alloc(), kmem_cache_alloc_bulk()
 *     and kmalloc() before they look at a slab, even with free objects in
 *     the CPU's slab; process and atomic context.  SKIP under SLOB, which
 *     has no should_failslab() (FAILSLAB depends on SLAB || SLUB).
 *
 * KTAP on the console, one printk per line, prefixed "slabconv-fi-ktap: ";
 * the plan covers both phases, the init lifts the document out of dmesg
 * once both have run.  Counts of NULL returns go into "# " lines, which the
 * init compares with the fault attributes' own counters (times).
 *
 * Written against Linux 5.10, built unchanged for 6.1 and 6.12 (reference
 * runs); a kernel without CONFIG_FAIL_PAGE_ALLOC or CONFIG_FAILSLAB SKIPs
 * the cases with the reason.
 */
#define pr_fmt(fmt) "slabconv-fi-ktap: " fmt

#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/version.h>

static char *armed = "";
module_param(armed, charp, 0444);
MODULE_PARM_DESC(armed, "'page' when the init armed fail_page_alloc before insmod");

enum result { PASS, FAIL, SKIP };

#define REASON_LEN 200
struct ctx {
	char reason[REASON_LEN];
	unsigned long arg;
	bool atomic;
};

#define FAILED(c, fmt, ...) \
	({ snprintf((c)->reason, REASON_LEN, fmt, ##__VA_ARGS__); FAIL; })
#define SKIPPED(c, fmt, ...) \
	({ snprintf((c)->reason, REASON_LEN, fmt, ##__VA_ARGS__); SKIP; })

#if defined(CONFIG_SLOB)
#define ALLOCATOR "SLOB"
#elif defined(CONFIG_SLAB)
#define ALLOCATOR "SLAB"
#else
#define ALLOCATOR "SLUB"
#endif

/*
 * slab_out_of_memory() prints its report under SLAB with DEBUG_SLAB and
 * under SLUB with SLUB_DEBUG; SLOB has none.
 */
#if (defined(CONFIG_SLAB) && defined(CONFIG_DEBUG_SLAB)) || \
    (!defined(CONFIG_SLAB) && !defined(CONFIG_SLOB) && defined(CONFIG_SLUB_DEBUG))
#define OOM_REPORT 1
#else
#define OOM_REPORT 0
#endif

#define FI_PATTERN	0x51ab0f1dU
#define BULK		8

static DEFINE_SPINLOCK(fi_lock);
static DEFINE_MUTEX(fi_mutex);		/* run vs rmmod */
static unsigned int page_nulls, slab_nulls;
static unsigned int case_no, n_pass, n_fail, n_skip;
static bool page_done, slab_done;

/* The caches and the objects they keep until rmmod. */
#define MAX_CACHES 16
static struct {
	struct kmem_cache *s;
	void **objs;
	unsigned int n;
} held[MAX_CACHES];
static unsigned int n_held;

static noinline size_t opaque(size_t n)
{
	OPTIMIZER_HIDE_VAR(n);
	return n;
}

static void fi_ctor(void *p)
{
	*(u32 *)p = FI_PATTERN;
}

/* Mark the current task for the task-filtered fault attributes. */
static int inject_on(void)
{
#ifdef CONFIG_FAULT_INJECTION
	int old = current->make_it_fail;

	current->make_it_fail = 1;
	return old;
#else
	return 0;
#endif
}

static void inject_restore(int old)
{
#ifdef CONFIG_FAULT_INJECTION
	current->make_it_fail = old;
#endif
}

static gfp_t fi_gfp(bool atomic, bool warn)
{
	return (atomic ? GFP_ATOMIC : GFP_KERNEL) | (warn ? 0 : __GFP_NOWARN);
}

/*
 * Allocate into objs[from..cap) until NULL, with the task marked for
 * injection (inject) or not; the number allocated.  warn: without
 * __GFP_NOWARN (the allocator may report the failure).
 */
static unsigned int alloc_run_gfp(struct kmem_cache *s, void **objs, unsigned int from,
				  unsigned int cap, bool atomic, bool inject, bool warn,
				  bool *got_null)
{
	unsigned long flags = 0;
	unsigned int i;
	int old = 0;

	*got_null = false;
	if (atomic)
		spin_lock_irqsave(&fi_lock, flags);
	if (inject)
		old = inject_on();
	for (i = from; i < cap; i++) {
		objs[i] = kmem_cache_alloc(s, fi_gfp(atomic, warn));
		if (!objs[i]) {
			*got_null = true;
			break;
		}
	}
	if (inject)
		inject_restore(old);
	if (atomic)
		spin_unlock_irqrestore(&fi_lock, flags);
	return i - from;
}

static unsigned int alloc_run(struct kmem_cache *s, void **objs, unsigned int from,
			      unsigned int cap, bool atomic, bool inject, bool *got_null)
{
	return alloc_run_gfp(s, objs, from, cap, atomic, inject, false, got_null);
}

/*
 * kmem_cache_alloc_bulk() with the task marked.  Interrupts must be on when
 * it is called (SLAB and SLUB turn them off and on again inside), so the
 * atomic variant holds the spinlock without disabling interrupts.
 */
static int bulk_run(struct kmem_cache *s, void **bulk, bool atomic)
{
	int got, old;

	if (atomic)
		spin_lock(&fi_lock);
	old = inject_on();
	got = kmem_cache_alloc_bulk(s, fi_gfp(atomic, false), BULK, bulk);
	inject_restore(old);
	if (atomic)
		spin_unlock(&fi_lock);
	return got;
}

/* Index of the first object of objs[from..to) without the ctor's pattern, or -1. */
static long bad_object(void **objs, unsigned int from, unsigned int to, size_t size)
{
	unsigned int i;

	for (i = from; i < to; i++) {
		if (*(u32 *)objs[i] != FI_PATTERN)
			return i;
		memset((u8 *)objs[i] + sizeof(u32), 0x3d, size - sizeof(u32));
	}
	return -1;
}

static void keep(struct kmem_cache *s, void **objs, unsigned int n)
{
	if (n_held < MAX_CACHES) {
		held[n_held].s = s;
		held[n_held].objs = objs;
		held[n_held].n = n;
		n_held++;
		return;
	}
	while (n)
		kmem_cache_free(s, objs[--n]);
	kvfree(objs);
	kmem_cache_destroy(s);
}

/*
 * Free every other object (out of allocation order), keep the rest: the
 * caches then have partial slabs for SLUB validate and for rmmod's destroy.
 */
static unsigned int thin_out(struct kmem_cache *s, void **objs, unsigned int n)
{
	unsigned int i, k = 0;

	for (i = 0; i < n; i++) {
		if (i & 1)
			kmem_cache_free(s, objs[i]);
		else
			objs[k++] = objs[i];
	}
	return k;
}

static struct kmem_cache *fi_cache(struct ctx *c, const char *kind, size_t size)
{
	char name[40];

	/* A constructor keeps the cache from being merged with another one. */
	snprintf(name, sizeof(name), "slabconv_fi_%s%zu", kind, size);
	return kmem_cache_create(name, size, 0, 0, fi_ctor);
}

/* ---- phase "page": fail_page_alloc ------------------------------------------ */

static enum result page_precheck(struct ctx *c)
{
	if (!IS_ENABLED(CONFIG_FAIL_PAGE_ALLOC))
		return SKIPPED(c, "CONFIG_FAIL_PAGE_ALLOC is not set");
	if (strcmp(armed, "page"))
		return FAILED(c, "CONFIG_FAIL_PAGE_ALLOC=y but the init did not arm fail_page_alloc (armed='%s')",
			      armed);
	return PASS;
}

/*
 * A fresh cache of c->arg-byte objects; see the module comment.  SLOB
 * puts objects smaller than a page of every cache on shared pages, so
 * there "fresh" does not mean empty: the allocations go on until one
 * needs a new page.
 */
static enum result t_page_fail(struct ctx *c)
{
	size_t size = opaque(c->arg);
	bool atomic = c->atomic, null;
	bool shared = IS_ENABLED(CONFIG_SLOB) && size < PAGE_SIZE;
	unsigned int cap = clamp_t(unsigned int, (4 << 20) / size, 64, 65536);
	unsigned int fresh, rest, again, n = 0;
	struct kmem_cache *s;
	enum result r;
	void **objs;
	void *bulk[BULK];
	int got;
	long bad;

	r = page_precheck(c);
	if (r != PASS)
		return r;
	objs = kvmalloc_array(cap + 1, sizeof(void *), GFP_KERNEL | __GFP_ZERO);
	s = fi_cache(c, atomic ? "a" : "", size);
	if (!objs || !s) {
		kvfree(objs);
		if (s)
			kmem_cache_destroy(s);
		return FAILED(c, "setup: kvmalloc_array or kmem_cache_create failed");
	}

	/* 1. Injection on from the start: the fresh cache has no slab. */
	fresh = alloc_run(s, objs, 0, cap, atomic, true, &null);
	n = fresh;
	if (!null) {
		r = FAILED(c, "%u allocations with every page allocation failing, none failed (fail_page_alloc not armed?)",
			   fresh);
		goto out;
	}
	page_nulls++;
	if (fresh && !shared) {
		r = FAILED(c, "a fresh cache handed out %u objects while every page allocation failed", fresh);
		goto out;
	}
	/* 2. Injection off: a new slab. */
	rest = alloc_run(s, objs, n, n + 1, atomic, false, &null);
	n += rest;
	if (!rest) {
		r = FAILED(c, "allocation failed with injection off, after the injected failure");
		goto out;
	}
	/* 3. Injection on: what is left of that slab, then NULL. */
	rest = alloc_run(s, objs, n, cap, atomic, true, &null);
	n += rest;
	if (!null) {
		r = FAILED(c, "%u allocations after one slab with every page allocation failing, none failed", rest);
		goto out;
	}
	page_nulls++;
	/* 4. kmem_cache_alloc_bulk() with injection on: 0, nothing left behind. */
	got = bulk_run(s, bulk, atomic);
	if (got)
		kmem_cache_free_bulk(s, got, bulk);
	else
		page_nulls++;
	if (got && !shared) {
		r = FAILED(c, "kmem_cache_alloc_bulk(%d) returned %d with every page allocation failing and the slab used up",
			   BULK, got);
		goto out;
	}
	/* 5. Injection off: more than a slab's worth again (new slabs). */
	again = alloc_run(s, objs, n, min(n + rest + 2, cap), atomic, false, &null);
	n += again;
	if (null) {
		r = FAILED(c, "allocation %u failed with injection off (after %u injected failures)",
			   again + 1, page_nulls);
		goto out;
	}
	bad = bad_object(objs, 0, n, size);
	if (bad >= 0) {
		r = FAILED(c, "object %ld of %u does not hold its constructor's pattern", bad, n);
		goto out;
	}
	pr_info("# page_fail%s_%zu: fresh cache %u objects then NULL; %u more after one slab then NULL; bulk %d; %u allocated again\n",
		atomic ? "_atomic" : "", size, fresh, rest, got, again);
	r = PASS;
out:
	keep(s, objs, thin_out(s, objs, n));
	return r;
}

/*
 * kmalloc() beyond the kmalloc caches goes to the page allocator (SLUB:
 * kmalloc_large(), SLOB: slob_new_pages()); SLAB has caches up to
 * KMALLOC_MAX_SIZE.
 */
static enum result t_kmalloc_pages(struct ctx *c)
{
	size_t size = opaque(2 * KMALLOC_MAX_CACHE_SIZE);
	enum result r = page_precheck(c);
	void *p;
	int old;

	if (r != PASS)
		return r;
	if (KMALLOC_MAX_CACHE_SIZE >= KMALLOC_MAX_SIZE)
		return SKIPPED(c, "%s serves every kmalloc() size from its caches (KMALLOC_MAX_CACHE_SIZE %lu)",
			       ALLOCATOR, (unsigned long)KMALLOC_MAX_CACHE_SIZE);
	old = inject_on();
	p = kmalloc(size, GFP_KERNEL | __GFP_NOWARN);
	inject_restore(old);
	if (p) {
		kfree(p);
		return FAILED(c, "kmalloc(%zu) succeeded with every page allocation failing", size);
	}
	page_nulls++;
	p = kmalloc(size, GFP_KERNEL);
	if (!p)
		return FAILED(c, "kmalloc(%zu) failed with injection off", size);
	memset(p, 0x3e, size);
	kfree(p);
	return PASS;
}

/*
 * Without __GFP_NOWARN: the allocator's slab_out_of_memory() reports the
 * failure (SLUB walks the cache's partial lists for it); the report must
 * name this cache, inside the bracket the console scanner checks.
 */
static enum result t_page_fail_report(struct ctx *c)
{
	size_t size = opaque(c->arg);
	unsigned int cap = 4096, n;
	enum result r = page_precheck(c);
	struct kmem_cache *s;
	void **objs;
	bool null;

	if (r != PASS)
		return r;
	objs = kvmalloc_array(cap, sizeof(void *), GFP_KERNEL | __GFP_ZERO);
	s = fi_cache(c, "w", size);
	if (!objs || !s) {
		kvfree(objs);
		if (s)
			kmem_cache_destroy(s);
		return FAILED(c, "setup: kvmalloc_array or kmem_cache_create failed");
	}
	/* A slab for the report to count, then the rest of it and NULL. */
	n = alloc_run(s, objs, 0, 1, false, false, &null);
	if (!n) {
		r = FAILED(c, "kmem_cache_alloc failed with injection off");
		goto out;
	}
	if (OOM_REPORT)
		printk(KERN_INFO "slabconv-expect: begin oom nomem slabconv_fi_w%zu\n", size);
	n += alloc_run_gfp(s, objs, n, cap, false, true, true, &null);
	if (OOM_REPORT)
		printk(KERN_INFO "slabconv-expect: end oom\n");
	if (!null) {
		r = FAILED(c, "%u allocations with every page allocation failing, none failed", n);
		goto out;
	}
	page_nulls++;
	pr_info("# page_fail_report_%zu: NULL without __GFP_NOWARN after %u objects; %s\n", size, n,
		OOM_REPORT ? "the allocator's report is expected in the bracket"
			   : "this allocator prints no report");
out:
	keep(s, objs, thin_out(s, objs, n));
	return r;
}

/* ---- phase "failslab": should_failslab() --------------------------------- */

static enum result slab_precheck(struct ctx *c, bool is_armed)
{
	if (IS_ENABLED(CONFIG_SLOB))
		return SKIPPED(c, "SLOB has no should_failslab() (FAILSLAB depends on SLAB || SLUB)");
	if (!IS_ENABLED(CONFIG_FAILSLAB))
		return SKIPPED(c, "CONFIG_FAILSLAB is not set");
	if (!is_armed)
		return FAILED(c, "CONFIG_FAILSLAB=y but the init did not arm failslab");
	return PASS;
}

static bool slab_armed;

/*
 * failslab fails an allocation before the allocator looks for an object:
 * with free objects in the CPU's slab (one allocated and freed just
 * before), kmem_cache_alloc() x4, kmem_cache_alloc_bulk() and kmalloc()
 * return NULL / 0; with injection off they work again.
 */
static enum result t_failslab(struct ctx *c)
{
	size_t size = opaque(c->arg);
	bool atomic = c->atomic;
	enum result r = slab_precheck(c, slab_armed);
	unsigned long flags = 0;
	unsigned int i, nulls = 0;
	struct kmem_cache *s;
	void **objs;
	void *p[4], *bulk[BULK], *km;
	int got, old;

	if (r != PASS)
		return r;
	objs = kvmalloc_array(4, sizeof(void *), GFP_KERNEL | __GFP_ZERO);
	s = fi_cache(c, atomic ? "sa" : "s", size);
	if (!objs || !s) {
		kvfree(objs);
		if (s)
			kmem_cache_destroy(s);
		return FAILED(c, "setup: kvmalloc_array or kmem_cache_create failed");
	}
	objs[0] = kmem_cache_alloc(s, GFP_KERNEL);
	objs[1] = kmem_cache_alloc(s, GFP_KERNEL);
	if (!objs[0] || !objs[1]) {
		r = FAILED(c, "kmem_cache_alloc failed with injection off");
		goto out;
	}
	kmem_cache_free(s, objs[1]);
	objs[1] = NULL;

	if (atomic)
		spin_lock_irqsave(&fi_lock, flags);
	old = inject_on();
	for (i = 0; i < ARRAY_SIZE(p); i++) {
		p[i] = kmem_cache_alloc(s, fi_gfp(atomic, false));
		nulls += !p[i];
	}
	km = kmalloc(opaque(64), fi_gfp(atomic, false));
	nulls += !km;
	inject_restore(old);
	if (atomic)
		spin_unlock_irqrestore(&fi_lock, flags);
	got = bulk_run(s, bulk, atomic);
	nulls += !got;

	slab_nulls += nulls;
	for (i = 0; i < ARRAY_SIZE(p); i++)
		if (p[i])
			kmem_cache_free(s, p[i]);
	if (got)
		kmem_cache_free_bulk(s, got, bulk);
	kfree(km);
	if (nulls != ARRAY_SIZE(p) + 2) {
		r = FAILED(c, "%u of %zu allocations failed with failslab armed (alloc %d%d%d%d, bulk %d, kmalloc %d)",
			   nulls, ARRAY_SIZE(p) + 2, !p[0], !p[1], !p[2], !p[3], !got, !km);
		goto out;
	}
	objs[1] = kmem_cache_alloc(s, fi_gfp(atomic, false));
	if (!objs[1]) {
		r = FAILED(c, "kmem_cache_alloc failed after failslab was turned off for the task");
		goto out;
	}
	if (*(u32 *)objs[0] != FI_PATTERN || *(u32 *)objs[1] != FI_PATTERN) {
		r = FAILED(c, "an object does not hold its constructor's pattern");
		goto out;
	}
	pr_info("# failslab%s_%zu: %u of %u allocations failed (kmem_cache_alloc x4, kmalloc, bulk)\n",
		atomic ? "_atomic" : "", size, nulls, nulls);
	r = PASS;
out:
	keep(s, objs, objs[1] ? 2 : (objs[0] ? 1 : 0));
	return r;
}

/* ---- runner ----------------------------------------------------------------- */

enum phase { PHASE_PAGE, PHASE_SLAB };

struct test_case {
	const char *name;	/* printf format, %lu = arg */
	enum result (*fn)(struct ctx *c);
	unsigned long arg;
	bool atomic;
	enum phase phase;
};

static const struct test_case cases[] = {
	{ "page_fail_%lu", t_page_fail, 64, false, PHASE_PAGE },
	{ "page_fail_%lu", t_page_fail, 512, false, PHASE_PAGE },
	{ "page_fail_%lu", t_page_fail, 1024, false, PHASE_PAGE },
	{ "page_fail_%lu", t_page_fail, 4096, false, PHASE_PAGE },
	{ "page_fail_%lu", t_page_fail, 16384, false, PHASE_PAGE },
	{ "page_fail_atomic_%lu", t_page_fail, 64, true, PHASE_PAGE },
	{ "page_fail_atomic_%lu", t_page_fail, 512, true, PHASE_PAGE },
	{ "page_fail_atomic_%lu", t_page_fail, 1024, true, PHASE_PAGE },
	{ "page_fail_atomic_%lu", t_page_fail, 4096, true, PHASE_PAGE },
	{ "page_fail_atomic_%lu", t_page_fail, 16384, true, PHASE_PAGE },
	{ "page_fail_report_%lu", t_page_fail_report, 1024, false, PHASE_PAGE },
	{ "kmalloc_pages", t_kmalloc_pages, 0, false, PHASE_PAGE },
	{ "failslab_%lu", t_failslab, 64, false, PHASE_SLAB },
	{ "failslab_%lu", t_failslab, 4096, false, PHASE_SLAB },
	{ "failslab_atomic_%lu", t_failslab, 64, true, PHASE_SLAB },
	{ "failslab_atomic_%lu", t_failslab, 4096, true, PHASE_SLAB },
};

static void run_phase(enum phase ph)
{
	unsigned int i;
	struct ctx c;
	char name[64];

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		enum result r;

		if (cases[i].phase != ph)
			continue;
		memset(&c, 0, sizeof(c));
		c.arg = cases[i].arg;
		c.atomic = cases[i].atomic;
		snprintf(name, sizeof(name), cases[i].name, cases[i].arg);
		r = cases[i].fn(&c);
		case_no++;
		switch (r) {
		case PASS:
			n_pass++;
			pr_info("ok %u - %s\n", case_no, name);
			break;
		case SKIP:
			n_skip++;
			pr_info("ok %u - %s # SKIP %s\n", case_no, name, c.reason);
			break;
		default:
			n_fail++;
			pr_info("# %s: %s\n", name, c.reason);
			pr_info("not ok %u - %s # %s\n", case_no, name, c.reason);
			break;
		}
	}
}

/* echo failslab > /sys/module/slabconv_faultinj/parameters/run (armed),
 * echo failslab-unarmed > ... (the init could not arm it). */
static int run_set(const char *val, const struct kernel_param *kp)
{
	mutex_lock(&fi_mutex);
	if (!sysfs_streq(val, "failslab") && !sysfs_streq(val, "failslab-unarmed")) {
		mutex_unlock(&fi_mutex);
		return -EINVAL;
	}
	if (!slab_done) {
		slab_done = true;
		slab_armed = sysfs_streq(val, "failslab");
		run_phase(PHASE_SLAB);
		pr_info("# faultinj: NULL returns: %u under fail_page_alloc, %u under failslab\n",
			page_nulls, slab_nulls);
		pr_info("# slabconv_faultinj: pass:%u fail:%u skip:%u total:%zu\n",
			n_pass, n_fail, n_skip, ARRAY_SIZE(cases));
	}
	mutex_unlock(&fi_mutex);
	return 0;
}

static const struct kernel_param_ops run_ops = {
	.set = run_set,
};
module_param_cb(run, &run_ops, NULL, 0200);
MODULE_PARM_DESC(run, "write 'failslab' (or 'failslab-unarmed'): run the failslab phase");

static int __init slabconv_faultinj_init(void)
{
	mutex_lock(&fi_mutex);
	pr_info("KTAP version 1\n");
	pr_info("# Subtest: slabconv_faultinj\n");
	pr_info("# faultinj: allocator %s, fail_page_alloc %d, failslab %d, debugfs %d, oom_report %d, debug_slab %d, test_meminit %d, slub_kunit %d, armed '%s', linux %d.%d\n",
		ALLOCATOR, IS_ENABLED(CONFIG_FAIL_PAGE_ALLOC), IS_ENABLED(CONFIG_FAILSLAB),
		IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS), OOM_REPORT,
		IS_ENABLED(CONFIG_DEBUG_SLAB), IS_BUILTIN(CONFIG_TEST_MEMINIT),
		IS_BUILTIN(CONFIG_SLUB_KUNIT_TEST), armed,
		LINUX_VERSION_CODE >> 16, (LINUX_VERSION_CODE >> 8) & 0xff);
	pr_info("1..%zu\n", ARRAY_SIZE(cases));
	run_phase(PHASE_PAGE);
	page_done = true;
	pr_info("# faultinj: page phase done, %u allocations returned NULL\n", page_nulls);
	mutex_unlock(&fi_mutex);
	return 0;
}

static void __exit slabconv_faultinj_exit(void)
{
	unsigned int i;

	for (i = 0; i < n_held; i++) {
		while (held[i].n)
			kmem_cache_free(held[i].s, held[i].objs[--held[i].n]);
		kvfree(held[i].objs);
		kmem_cache_destroy(held[i].s);
	}
	n_held = 0;
	pr_info("# slabconv_faultinj: unloaded\n");
}

module_init(slabconv_faultinj_init);
module_exit(slabconv_faultinj_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("slabconv in-guest fault injection: slab allocations that fail");
