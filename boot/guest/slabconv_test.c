// SPDX-License-Identifier: GPL-2.0
/*
 * slabconv_test - slab allocator checks run inside the QEMU guest.
 *
 * Loaded by boot/guest/init.sh.  Every case runs at module init and the
 * module prints a KTAP document, one printk per line, each prefixed with
 * "slabconv-ktap: " so the init script can lift it out of dmesg and nest it
 * in its own KTAP output.  Init always returns 0 when the document was
 * printed, so failures travel through KTAP, not through insmod's status.
 *
 * Two caches and a "hold" of memcg-accounted objects stay allocated until
 * rmmod, so the init script can run SLUB validate on them, look for them in
 * /proc/slabinfo and check memcg slab accounting: the charge rises while the
 * objects are held, and drops again when the init script writes 1 to
 * /sys/module/slabconv_test/parameters/release (the module frees them).
 *
 * Under CONFIG_KASAN the module also makes two deliberate bad accesses to
 * objects of its own cache "slabconv_kasan" (an out-of-bounds read and a
 * use-after-free read), each bracketed by "slabconv-expect: begin/end"
 * console lines naming the bug type and cache KASAN must report.  The init
 * script (dmesg) and the host's console scanner check the reports; a KASAN
 * report outside such a bracket fails the run.
 *
 * The usercopy_kmalloc / usercopy_cache cases stay inside the slab object
 * and inside the cache's usercopy whitelist: hardened usercopy must let
 * them through.  The usercopy_reject cases make copies it must refuse (past
 * the end of an object, outside a cache's whitelist, into a freed
 * neighbour): usercopy_abort() prints "usercopy: Kernel memory exposure
 * attempt detected from ... 'CACHE'" and BUG()s.  Each runs in a kthread of
 * its own, so the BUG kills that thread and not the module's init; the
 * case passes when the thread died without returning from the copy, and
 * each is bracketed by "slabconv-expect: begin usercopy exposure CACHE" /
 * "slabconv-expect: end usercopy" console lines: boot/console.py requires
 * the report naming CACHE in the bracket and accepts its BUG there only.
 * panic_on_oops is off only while the thread of such a copy runs (the
 * guest boots with oops=panic: any other oops still ends it).  5.10 only warns about a copy outside the whitelist
 * but inside the object unless it boots with
 * slab_common.usercopy_fallback=N (boot/__init__.py's command line).
 * Copy sizes go through opaque() so they are never compile-time constants;
 * otherwise check_object_size() - hardened usercopy - would be skipped.
 *
 * Written against Linux 5.10 and run unchanged on 6.1 and 6.12 (upstream's
 * own struct slab, the reference runs): where an interface differs between
 * them a LINUX_VERSION_CODE guard picks it, and a case that cannot exist on
 * a kernel is a KTAP SKIP that says why.
 */
#define pr_fmt(fmt) "slabconv-ktap: " fmt

#include <linux/compiler.h>
#include <linux/cpumask.h>
#include <linux/kasan.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/log2.h>
#include <linux/poison.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmstat.h>
#include <linux/version.h>
#include <linux/workqueue.h>

static char *inject = "";
module_param(inject, charp, 0444);
MODULE_PARM_DESC(inject, "plant a failure for the host-side detector tests: "
		 "'warn' (a WARNING after the cases), 'fail' (case 1 fails), "
		 "'redzone' (overwrite a red zone byte of a held object; needs slub_debug=Z or DEBUG_SLAB), "
		 "'noaccount' (slabconv_acct without SLAB_ACCOUNT: nothing is charged), "
		 "'nofree' (release does not free the held objects: the charge stays), "
		 "'kasan_missing' (KASAN: the bracketed bad accesses are not made), "
		 "'kasan_stray' (KASAN: one more out-of-bounds read, outside the brackets), "
		 "'kasan_wrongcache' (KASAN: the out-of-bounds read is on a kmalloc object)");

/*
 * Several MiB: 5.10 batches memcg statistics per CPU (up to
 * MEMCG_CHARGE_BATCH pages of bytes per CPU and counter before they reach
 * memory.stat), so the held amount must dwarf 2 x 128 KiB.
 */
static unsigned int hold_kb = 4096;
module_param(hold_kb, uint, 0444);
MODULE_PARM_DESC(hold_kb, "KiB of SLAB_ACCOUNT objects held until released or rmmod (memcg check)");

enum result { PASS, FAIL, SKIP };

#define REASON_LEN 200
struct ctx {
	char reason[REASON_LEN];
	unsigned long arg;
};

#define FAILED(c, fmt, ...) \
	({ snprintf((c)->reason, REASON_LEN, fmt, ##__VA_ARGS__); FAIL; })
#define SKIPPED(c, fmt, ...) \
	({ snprintf((c)->reason, REASON_LEN, fmt, ##__VA_ARGS__); SKIP; })

/* User memory in insmod's address space (module init runs in its context). */
#define UBUF_SIZE (PAGE_SIZE * 4)
static unsigned long ubuf;

/* Caches that live as long as the module. */
#define UC_OBJ		512
#define UC_USEROFF	128
#define UC_USERSIZE	256
#define ACCT_OBJ	1024
static struct kmem_cache *uc_cache;	/* whitelist [128, 384) of 512 */
#define REJ_OBJ		256
#define REJ_CACHE	"slabconv_rej"
static struct kmem_cache *rej_cache;	/* whole object whitelisted */
static struct kmem_cache *acct_cache;	/* SLAB_ACCOUNT, whole object whitelisted */
static void **hold;
static unsigned int hold_nr;
static void *planted;		/* inject=redzone victim, freed at rmmod */
static DEFINE_MUTEX(hold_lock);	/* hold, hold_nr: release vs rmmod */

static noinline size_t opaque(size_t n)
{
	OPTIMIZER_HIDE_VAR(n);
	return n;
}

static bool is_slab_object(const void *p)
{
	return PageSlab(virt_to_head_page(p));
}

/* ---- what each allocator promises ----------------------------------------- */

#if defined(CONFIG_SLOB)
#define ALLOCATOR "SLOB"
#elif defined(CONFIG_SLAB)
#define ALLOCATOR "SLAB"
#else
#define ALLOCATOR "SLUB"
#endif

#if defined(CONFIG_MEMCG_KMEM) || \
    (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0) && defined(CONFIG_MEMCG))
#define HAVE_MEMCG_KMEM 1
#else
#define HAVE_MEMCG_KMEM 0
#endif

/*
 * SLOB (mm/slob.c): kmalloc(n) comes from a SLOB page when
 * n < PAGE_SIZE - minalign (a header of minalign bytes holds n), else from
 * the page allocator; ksize() of a SLOB block is n rounded up to SLOB_UNIT
 * (sizeof(slob_t): 2 bytes with 4 KiB pages).
 */
#define SLOB_MINALIGN	max_t(size_t, ARCH_KMALLOC_MINALIGN, ARCH_SLAB_MINALIGN)
#define SLOB_UNIT_BYTES	(PAGE_SIZE <= (32767 * 2) ? 2 : 4)

/* Does kmalloc(n) return a slab object (else a page-allocator block)? */
static bool kmalloc_is_slab(size_t n)
{
	if (IS_ENABLED(CONFIG_SLOB))
		return n < PAGE_SIZE - SLOB_MINALIGN;
	return n <= KMALLOC_MAX_CACHE_SIZE;
}

/* The kmalloc cache SLAB and SLUB use for n bytes (kmalloc_index()). */
static size_t kmalloc_class(size_t n)
{
	if (n <= KMALLOC_MIN_SIZE)
		return KMALLOC_MIN_SIZE;
	if (KMALLOC_MIN_SIZE <= 32 && n > 64 && n <= 96)
		return 96;
	if (KMALLOC_MIN_SIZE <= 64 && n > 128 && n <= 192)
		return 192;
	return roundup_pow_of_two(n);
}

/*
 * ksize(kmalloc(n)) per allocator: SLAB and SLUB report the object size of
 * the kmalloc cache (SLUB with slub_debug red zones or poisoning too:
 * object_size), SLOB the request rounded to its unit; a page-allocator block
 * reports its pages.
 */
static size_t expected_ksize(size_t n)
{
	if (!kmalloc_is_slab(n))
		return PAGE_SIZE << get_order(n);
	if (IS_ENABLED(CONFIG_SLOB))
		return ALIGN(n, SLOB_UNIT_BYTES);
	return kmalloc_class(n);
}

/* Does kmem_cache_alloc() of a size-byte cache return slab memory? */
static bool cache_obj_is_slab(size_t size)
{
	/* SLOB gives caches of a page or more whole pages (slob_new_pages). */
	return !IS_ENABLED(CONFIG_SLOB) || size < PAGE_SIZE;
}

/* Slab pages counted by the kernel (NR_SLAB_UNRECLAIMABLE_B, from 5.9). */
static long slab_unreclaimable_pages(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 9, 0)
	return global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B);
#else
	return global_node_page_state(NR_SLAB_UNRECLAIMABLE);
#endif
}

/* How many times consecutive objects lie in different slabs (head pages). */
static unsigned int slab_changes(void **objs, unsigned int n)
{
	unsigned int i, changes = 0;

	for (i = 1; i < n; i++)
		if (virt_to_head_page(objs[i]) != virt_to_head_page(objs[i - 1]))
			changes++;
	return changes;
}

static void fill(void *p, size_t n, unsigned int seed)
{
	u8 *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (u8)(seed * 131 + i * 7 + (i >> 8) + 1);
}

/* Index of the first byte of p[0..n) that fill(p, n, seed) did not write, or -1. */
static long not_filled(const void *p, size_t n, unsigned int seed)
{
	const u8 *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != (u8)(seed * 131 + i * 7 + (i >> 8) + 1))
			return i;
	return -1;
}

static long first_diff(const void *a, const void *b, size_t n)
{
	const u8 *x = a, *y = b;
	size_t i;

	for (i = 0; i < n; i++)
		if (x[i] != y[i])
			return i;
	return -1;
}

/* Index of the first byte in p[0..n) that is not c, or -1. */
static long not_byte(const void *p, u8 c, size_t n)
{
	const u8 *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != c)
			return i;
	return -1;
}

/*
 * copy_to_user(src, n) into the user buffer at uoff, check the user copy,
 * then copy_from_user into dst and compare with src.
 */
static enum result roundtrip(struct ctx *c, const void *src, void *dst,
			     size_t n, size_t uoff)
{
	u8 __user *u = (u8 __user *)(ubuf + uoff);
	unsigned long left;
	u8 first, last;
	long d;

	if (!ubuf)
		return FAILED(c, "no user buffer (vm_mmap failed)");
	if (!n || uoff + n > UBUF_SIZE)
		return FAILED(c, "test bug: user range %zu+%zu", uoff, n);
	n = opaque(n);

	left = copy_to_user(u, src, n);
	if (left)
		return FAILED(c, "copy_to_user left %lu of %zu bytes", left, n);
	if (get_user(first, u) || get_user(last, u + n - 1))
		return FAILED(c, "get_user on the copied range failed");
	if (first != ((const u8 *)src)[0] || last != ((const u8 *)src)[n - 1])
		return FAILED(c, "user memory differs from the object after copy_to_user (%zu bytes)", n);

	left = copy_from_user(dst, u, n);
	if (left)
		return FAILED(c, "copy_from_user left %lu of %zu bytes", left, n);
	d = first_diff(src, dst, n);
	if (d >= 0)
		return FAILED(c, "round trip differs at byte %ld of %zu", d, n);
	return PASS;
}

/*
 * Copy src_obj[off, off+len) out and back into dst_obj[off2, off2+len);
 * dst_obj (objsize bytes) must be untouched outside that range.
 */
static enum result partial(struct ctx *c, u8 *src_obj, u8 *dst_obj, size_t objsize,
			   size_t off, size_t off2, size_t len, size_t uoff)
{
	enum result r;
	long d;

	memset(dst_obj, 0xa5, objsize);
	r = roundtrip(c, src_obj + off, dst_obj + off2, len, uoff);
	if (r != PASS)
		return r;
	d = not_byte(dst_obj, 0xa5, off2);
	if (d < 0)
		d = not_byte(dst_obj + off2 + len, 0xa5, objsize - off2 - len);
	if (d >= 0)
		return FAILED(c, "copy_from_user wrote outside [%zu, %zu) of the object", off2, off2 + len);
	return PASS;
}

/* ---- cases ------------------------------------------------------------ */

/*
 * The usercopy cases exercise check_heap_object() -> __check_heap_object()
 * (the slab's object bounds and usercopy whitelist), which exists only with
 * CONFIG_HARDENED_USERCOPY; without it a copy checks nothing of the slab.
 */
#define NEED_HARDENED_USERCOPY(c) do {						\
	if (!IS_ENABLED(CONFIG_HARDENED_USERCOPY))				\
		return SKIPPED(c, "CONFIG_HARDENED_USERCOPY is not set: "	\
			       "no check_heap_object() to exercise");		\
} while (0)

static enum result t_hardened_usercopy_config(struct ctx *c)
{
	if (!IS_ENABLED(CONFIG_HARDENED_USERCOPY))
		return SKIPPED(c, "CONFIG_HARDENED_USERCOPY is not set: copies are not checked");
	return PASS;
}

static const size_t ksize_sizes[] = {
	1, 8, 13, 64, 96, 100, 192, 256, 1000, 1024, 2048, 4096, 5000, 8192,
	8193, 16384, 65536,
};

#define NOBJ 32
static enum result t_kmalloc_ksize(struct ctx *c)
{
	void *objs[NOBJ];
	enum result r = PASS;
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(ksize_sizes) && r == PASS; i++) {
		size_t size = opaque(ksize_sizes[i]);
		bool want_slab = kmalloc_is_slab(size);

		memset(objs, 0, sizeof(objs));
		for (j = 0; j < NOBJ; j++) {
			objs[j] = kmalloc(size, GFP_KERNEL);
			if (!objs[j]) {
				r = FAILED(c, "kmalloc(%zu) #%u returned NULL", size, j);
				break;
			}
			if (ksize(objs[j]) < size) {
				r = FAILED(c, "ksize %zu < requested %zu", ksize(objs[j]), size);
				break;
			}
			if (is_slab_object(objs[j]) != want_slab) {
				r = FAILED(c, "kmalloc(%zu): slab page %d, expected %d",
					   size, !want_slab, want_slab);
				break;
			}
			memset(objs[j], j + 1, size);
		}
		/* Overlapping objects would have overwritten each other. */
		for (j = 0; j < NOBJ && r == PASS && objs[j]; j++)
			if (not_byte(objs[j], j + 1, size) >= 0)
				r = FAILED(c, "kmalloc(%zu) object #%u was overwritten", size, j);
		for (j = 0; j < NOBJ; j++)
			kfree(objs[j]);
	}
	return r;
}

/* Whole-object round trip through kmalloc objects of c->arg bytes. */
static enum result t_usercopy_kmalloc(struct ctx *c)
{
	size_t size = opaque(c->arg);
	u8 *src, *dst;
	enum result r;

	NEED_HARDENED_USERCOPY(c);
	src = kmalloc(size, GFP_KERNEL);
	dst = kmalloc(size, GFP_KERNEL);
	if (!src || !dst) {
		r = FAILED(c, "kmalloc(%zu) failed", size);
		goto out;
	}
	if (!is_slab_object(src) || !is_slab_object(dst)) {
		r = FAILED(c, "kmalloc(%zu) is not a slab object", size);
		goto out;
	}
	fill(src, size, size);
	/* Unaligned user offset so that larger copies cross user pages. */
	r = partial(c, src, dst, size, 0, 0, size, PAGE_SIZE - 3);
out:
	kfree(src);
	kfree(dst);
	return r;
}

static enum result t_usercopy_kmalloc_offset(struct ctx *c)
{
	static const struct { size_t obj, off, off2, len; } v[] = {
		{ 1024, 300, 517, 100 }, { 1024, 1023, 0, 1 }, { 1024, 0, 1, 1023 },
		{ 1024, 1, 0, 1022 }, { 96, 95, 3, 1 }, { 96, 17, 31, 64 },
		{ 8192, 4000, 100, 4096 }, { 192, 100, 100, 92 },
	};
	enum result r = PASS;
	unsigned int i;

	NEED_HARDENED_USERCOPY(c);
	for (i = 0; i < ARRAY_SIZE(v) && r == PASS; i++) {
		size_t obj = opaque(v[i].obj);
		u8 *src = kmalloc(obj, GFP_KERNEL), *dst = kmalloc(obj, GFP_KERNEL);

		if (!src || !dst) {
			r = FAILED(c, "kmalloc(%zu) failed", obj);
		} else {
			fill(src, obj, i);
			r = partial(c, src, dst, obj, v[i].off, v[i].off2, v[i].len, 5 * i);
			if (r == FAIL) {
				char tmp[REASON_LEN];

				strscpy(tmp, c->reason, sizeof(tmp));
				snprintf(c->reason, REASON_LEN, "obj %zu off %zu len %zu: %s",
					 obj, v[i].off, v[i].len, tmp);
			}
		}
		kfree(src);
		kfree(dst);
	}
	return r;
}

/* Copies inside the whitelist of a kmem_cache_create_usercopy() cache. */
static enum result t_usercopy_cache_whitelist(struct ctx *c)
{
	static const struct { size_t off, off2, len; } full[] = {
		{ UC_USEROFF, UC_USEROFF, UC_USERSIZE },
	}, part[] = {
		{ UC_USEROFF + 37, UC_USEROFF + 3, 100 },
		{ UC_USEROFF + UC_USERSIZE - 1, UC_USEROFF, 1 },
		{ UC_USEROFF, UC_USEROFF + UC_USERSIZE - 1, 1 },
		{ 200, 201, 183 },
	};
	bool partial_case = c->arg;
	unsigned int i, n = partial_case ? ARRAY_SIZE(part) : ARRAY_SIZE(full);
	enum result r = PASS;
	u8 *src, *dst;

	NEED_HARDENED_USERCOPY(c);
	if (!uc_cache)
		return FAILED(c, "kmem_cache_create_usercopy failed at module init");
	src = kmem_cache_alloc(uc_cache, GFP_KERNEL);
	dst = kmem_cache_alloc(uc_cache, GFP_KERNEL);
	if (!src || !dst) {
		r = FAILED(c, "kmem_cache_alloc failed");
		goto out;
	}
	if (!is_slab_object(src) || !is_slab_object(dst)) {
		r = FAILED(c, "cache object is not a slab object");
		goto out;
	}
	fill(src, UC_OBJ, 77);
	for (i = 0; i < n && r == PASS; i++) {
		size_t off = partial_case ? part[i].off : full[i].off;
		size_t off2 = partial_case ? part[i].off2 : full[i].off2;
		size_t len = partial_case ? part[i].len : full[i].len;

		/* dst outside [off2, off2+len) keeps the 0xa5 guard fill. */
		r = partial(c, src, dst, UC_OBJ, off, off2, len, 64 + i);
	}
out:
	if (src)
		kmem_cache_free(uc_cache, src);
	if (dst)
		kmem_cache_free(uc_cache, dst);
	return r;
}

/* memcg-accounted kmalloc objects (charged when insmod runs in a memcg). */
static enum result t_usercopy_kmalloc_accounted(struct ctx *c)
{
	static const size_t sizes[] = { 64, 1024, 4096 };
	enum result r = PASS;
	unsigned int i;

	NEED_HARDENED_USERCOPY(c);
	for (i = 0; i < ARRAY_SIZE(sizes) && r == PASS; i++) {
		size_t size = opaque(sizes[i]);
		u8 *src = kmalloc(size, GFP_KERNEL_ACCOUNT);
		u8 *dst = kmalloc(size, GFP_KERNEL_ACCOUNT);

		if (!src || !dst)
			r = FAILED(c, "kmalloc(%zu, GFP_KERNEL_ACCOUNT) failed", size);
		else if (!is_slab_object(src))
			r = FAILED(c, "accounted kmalloc(%zu) is not a slab object", size);
		else {
			fill(src, size, i + 3);
			r = partial(c, src, dst, size, 0, 0, size, 11);
		}
		kfree(src);
		kfree(dst);
	}
	return r;
}

static enum result t_usercopy_cache_accounted(struct ctx *c)
{
	enum result r;
	u8 *src, *dst;

	NEED_HARDENED_USERCOPY(c);
	if (!acct_cache)
		return FAILED(c, "SLAB_ACCOUNT cache creation failed at module init");
	src = kmem_cache_alloc(acct_cache, GFP_KERNEL);
	dst = kmem_cache_alloc(acct_cache, GFP_KERNEL);
	if (!src || !dst) {
		r = FAILED(c, "kmem_cache_alloc failed");
	} else {
		fill(src, ACCT_OBJ, 5);
		r = partial(c, src, dst, ACCT_OBJ, 0, 0, ACCT_OBJ, 1);
		if (r == PASS)
			r = partial(c, src, dst, ACCT_OBJ, 511, 700, 300, 2);
	}
	if (src)
		kmem_cache_free(acct_cache, src);
	if (dst)
		kmem_cache_free(acct_cache, dst);
	return r;
}

/* ---- copies hardened usercopy must reject ----------------------------- */

/*
 * copy_to_user() of [from, from + len) in a kthread of its own.  The kthread
 * has no user mm: a copy that hardened usercopy lets through faults on the
 * user address and is fixed up (nothing is exposed), and the thread
 * returns; a rejected copy BUGs in usercopy_abort() and the thread dies
 * there.  The job is freed by whichever of the two is last.
 */
struct reject_job {
	const void *from;
	size_t len;
	unsigned long left;
	struct completion returned;
};

#define REJECT_UADDR	0x10000UL
#define REJECT_WAIT_MS	60000

static int reject_thread(void *arg)
{
	struct reject_job *j = arg;

	j->left = copy_to_user((void __user *)REJECT_UADDR, j->from, opaque(j->len));
	complete(&j->returned);
	return 0;
}

static void expect_usercopy_begin(const char *cache)
{
	printk(KERN_INFO "slabconv-expect: begin usercopy exposure %s\n", cache);
}

static void expect_usercopy_end(void)
{
	printk(KERN_INFO "slabconv-expect: end usercopy\n");
}

/*
 * The guest boots with oops=panic, so that any other oops ends it at once;
 * the BUG() of a rejected copy must only end its thread.  panic_on_oops is
 * off (through its sysctl file: the variable is not exported) exactly while
 * the copy's thread runs.  Returns the previous value, or -errno.
 */
#define PANIC_ON_OOPS "/proc/sys/kernel/panic_on_oops"
static int set_panic_on_oops(int v)
{
	struct file *f = filp_open(PANIC_ON_OOPS, O_RDWR, 0);
	char buf[16] = "";
	loff_t pos = 0;
	ssize_t n;
	int old;

	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	if (n <= 0 || kstrtoint(strim(buf), 10, &old)) {
		filp_close(f, NULL);
		return n < 0 ? (int)n : -EINVAL;
	}
	pos = 0;
	n = scnprintf(buf, sizeof(buf), "%d\n", v);
	n = kernel_write(f, buf, n, &pos);
	filp_close(f, NULL);
	return n < 0 ? (int)n : old;
}

/* PASS when the copy was rejected: its thread died inside copy_to_user(). */
static enum result expect_rejected(struct ctx *c, const char *cache, const void *from,
				   size_t len, const char *what)
{
	struct reject_job *j = kzalloc(sizeof(*j), GFP_KERNEL);
	struct task_struct *t;
	unsigned int ms = 0;
	bool returned = false, died = false;
	int panic_old;

	if (!j)
		return FAILED(c, "kzalloc failed");
	j->from = from;
	j->len = len;
	init_completion(&j->returned);
	t = kthread_create(reject_thread, j, "slabconv_rej");
	if (IS_ERR(t)) {
		kfree(j);
		return FAILED(c, "kthread_create failed: %ld", PTR_ERR(t));
	}
	get_task_struct(t);
	panic_old = set_panic_on_oops(0);
	if (panic_old < 0) {
		kthread_stop(t);	/* never woken: the copy is not made */
		put_task_struct(t);
		kfree(j);
		return FAILED(c, "cannot turn off " PANIC_ON_OOPS ": %d", panic_old);
	}
	expect_usercopy_begin(cache);
	wake_up_process(t);
	for (ms = 0; ms < REJECT_WAIT_MS; ms += 20) {
		if (completion_done(&j->returned)) {
			returned = true;
			break;
		}
		if (READ_ONCE(t->exit_state)) {
			died = !completion_done(&j->returned);
			returned = !died;
			break;
		}
		msleep(20);
	}
	expect_usercopy_end();
	set_panic_on_oops(panic_old);
	put_task_struct(t);
	if (returned) {
		size_t left = j->left;

		kfree(j);
		return FAILED(c, "%s: copy_to_user of %zu bytes was not rejected (%zu left)",
			      what, len, left);
	}
	if (!died)	/* still running: the job stays allocated for it */
		return FAILED(c, "%s: the copy neither returned nor was rejected in %u ms",
			      what, REJECT_WAIT_MS);
	kfree(j);
	return PASS;
}

/* A copy that starts inside an object and runs past its end. */
static enum result t_usercopy_reject_past_end(struct ctx *c)
{
	enum result r;
	u8 *p;

	NEED_HARDENED_USERCOPY(c);
	if (!rej_cache)
		return FAILED(c, "kmem_cache_create_usercopy(" REJ_CACHE ") failed at module init");
	p = kmem_cache_alloc(rej_cache, GFP_KERNEL);
	if (!p)
		return FAILED(c, "kmem_cache_alloc failed");
	r = expect_rejected(c, REJ_CACHE, p + REJ_OBJ - 56, 100, "past the end");
	kmem_cache_free(rej_cache, p);
	return r;
}

/* Inside the object, but before the start of the cache's whitelist. */
static enum result t_usercopy_reject_outside_window(struct ctx *c)
{
	enum result r;
	u8 *p;

	NEED_HARDENED_USERCOPY(c);
	if (!uc_cache)
		return FAILED(c, "kmem_cache_create_usercopy failed at module init");
	p = kmem_cache_alloc(uc_cache, GFP_KERNEL);
	if (!p)
		return FAILED(c, "kmem_cache_alloc failed");
	r = expect_rejected(c, "slabconv_uc", p + UC_USEROFF - 64, 96, "outside the whitelist");
	kmem_cache_free(uc_cache, p);
	return r;
}

/*
 * An object's address for comparing it with, and subtracting it from,
 * another object's: under software tag-based KASAN (arm64) each pointer
 * carries its allocation's tag in the top byte, which the kernel's own
 * addresses have as 0xff (KASAN_TAG_KERNEL; kasan_reset_tag() is not
 * exported to modules in 5.10).
 */
#ifdef CONFIG_KASAN_SW_TAGS
#define untagged(p)	((u8 *)((unsigned long)(p) | (0xffUL << 56)))
#else
#define untagged(p)	((u8 *)(p))
#endif

/*
 * Two objects of one slab, the second the nearest above the first; the
 * second is freed, and the copy runs from the end of the first into it.
 */
#define NREJ 32
static enum result t_usercopy_reject_freed_neighbour(struct ctx *c)
{
	u8 *objs[NREJ] = { NULL };
	u8 *lo = NULL, *hi = NULL;
	enum result r;
	unsigned int i, k;

	NEED_HARDENED_USERCOPY(c);
	if (!rej_cache)
		return FAILED(c, "kmem_cache_create_usercopy(" REJ_CACHE ") failed at module init");
	for (i = 0; i < NREJ; i++) {
		objs[i] = kmem_cache_alloc(rej_cache, GFP_KERNEL);
		if (!objs[i]) {
			r = FAILED(c, "kmem_cache_alloc #%u failed", i);
			goto out;
		}
	}
	for (i = 0; i < NREJ; i++)
		for (k = 0; k < NREJ; k++)
			if (untagged(objs[k]) > untagged(objs[i]) &&
			    virt_to_head_page(objs[k]) == virt_to_head_page(objs[i]) &&
			    (!lo || untagged(objs[k]) - untagged(objs[i]) <
				    untagged(hi) - untagged(lo))) {
				lo = objs[i];
				hi = objs[k];
			}
	if (!lo) {
		r = FAILED(c, "no two of %u objects share a slab", NREJ);
		goto out;
	}
	for (i = 0; i < NREJ; i++)
		if (objs[i] == hi) {
			kmem_cache_free(rej_cache, hi);
			objs[i] = NULL;
		}
	/* from 16 bytes before the end of lo to 16 bytes into the freed hi */
	r = expect_rejected(c, REJ_CACHE, lo + REJ_OBJ - 16,
			    untagged(hi) - untagged(lo) - REJ_OBJ + 32, "into a freed neighbour");
out:
	for (i = 0; i < NREJ; i++)
		if (objs[i])
			kmem_cache_free(rej_cache, objs[i]);
	return r;
}

#define NBULK 64
static enum result t_kmem_cache_bulk(struct ctx *c)
{
	struct kmem_cache *s;
	void *objs[NBULK];
	enum result r = PASS;
	int got, i;

	s = kmem_cache_create("slabconv_bulk", 200, 0, 0, NULL);
	if (!s)
		return FAILED(c, "kmem_cache_create failed");
	memset(objs, 0, sizeof(objs));
	got = kmem_cache_alloc_bulk(s, GFP_KERNEL, NBULK, objs);
	if (got != NBULK) {
		r = FAILED(c, "kmem_cache_alloc_bulk returned %d, wanted %d", got, NBULK);
		goto destroy;
	}
	for (i = 0; i < NBULK; i++) {
		if (!objs[i] || !is_slab_object(objs[i])) {
			r = FAILED(c, "bulk object #%d is NULL or not a slab object", i);
			goto free;
		}
		memset(objs[i], i + 1, 200);
	}
	for (i = 0; i < NBULK; i++)
		if (not_byte(objs[i], i + 1, 200) >= 0) {
			r = FAILED(c, "bulk object #%d was overwritten (overlap)", i);
			break;
		}
free:
	kmem_cache_free_bulk(s, NBULK, objs);
	kmem_cache_shrink(s);
	/* The cache must still work after free_bulk + shrink. */
	if (r == PASS) {
		void *p = kmem_cache_alloc(s, GFP_KERNEL);

		if (!p)
			r = FAILED(c, "kmem_cache_alloc after shrink failed");
		kmem_cache_free(s, p);
	}
destroy:
	kmem_cache_destroy(s);
	return r;
}

#define CTOR_OBJ 256
#define CTOR_MAGIC 0x5ab1c0deU
static void ctor_fn(void *p)
{
	memset(p, 0xc7, CTOR_OBJ);
	*(u32 *)p = CTOR_MAGIC;
}

/* Is p in the ctor's state (magic, then 0xc7 bytes)?  -1 if so, else the byte. */
static long ctor_state(const void *p)
{
	if (*(const u32 *)p != CTOR_MAGIC)
		return 0;
	return not_byte((const u8 *)p + 4, 0xc7, CTOR_OBJ - 4);
}

/*
 * More objects than one slab holds: the objects of every new slab (and of
 * slabs refilled after frees) must be constructed.  A ctor run on the wrong
 * address (a wrong slab_address() or object index) leaves objects unbuilt;
 * a broken freelist hands out one object twice (the index check).
 */
#define NCTOR 256
static enum result t_kmem_cache_ctor(struct ctx *c)
{
	struct kmem_cache *s;
	void **objs;
	enum result r = PASS;
	unsigned int i, round, changes = 0;
	long d;

	objs = kcalloc(NCTOR, sizeof(void *), GFP_KERNEL);
	if (!objs)
		return FAILED(c, "kcalloc failed");
	s = kmem_cache_create("slabconv_ctor", CTOR_OBJ, 0, 0, ctor_fn);
	if (!s) {
		kfree(objs);
		return FAILED(c, "kmem_cache_create with ctor failed");
	}
	for (round = 0; round < 2 && r == PASS; round++) {
		for (i = 0; i < NCTOR; i++) {
			objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
			if (!objs[i]) {
				r = FAILED(c, "round %u: kmem_cache_alloc #%u failed", round, i);
				break;
			}
			d = ctor_state(objs[i]);
			if (d >= 0) {
				r = FAILED(c, "round %u: object #%u not constructed (byte %ld)",
					   round, i, d);
				break;
			}
			/* Mark it: a second hand-out of the same object shows. */
			*(u32 *)((u8 *)objs[i] + 4) = i;
		}
		for (i = 0; i < NCTOR && r == PASS; i++)
			if (*(u32 *)((u8 *)objs[i] + 4) != i)
				r = FAILED(c, "round %u: object #%u handed out twice", round, i);
		if (r == PASS && round == 0) {
			changes = slab_changes(objs, NCTOR);
			if (!changes)
				r = FAILED(c, "%u objects all in one slab: no second slab filled",
					   NCTOR);
		}
		/* Back to the constructed state before freeing (ctor contract);
		 * free every other object first so slabs refill out of order. */
		for (i = 0; i < NCTOR; i++)
			if (objs[i] && !(i & 1)) {
				*(u32 *)((u8 *)objs[i] + 4) = 0xc7c7c7c7;
				kmem_cache_free(s, objs[i]);
				objs[i] = NULL;
			}
		for (i = 0; i < NCTOR; i++)
			if (objs[i]) {
				*(u32 *)((u8 *)objs[i] + 4) = 0xc7c7c7c7;
				kmem_cache_free(s, objs[i]);
				objs[i] = NULL;
			}
		if (round == 0)
			kmem_cache_shrink(s);	/* round 1 builds new slabs */
	}
	kmem_cache_destroy(s);
	kfree(objs);
	if (r == PASS)
		pr_info("# kmem_cache_ctor: %u objects, %u slab changes between consecutive objects\n",
			NCTOR, changes);
	return r;
}

static enum result t_krealloc_grow(struct ctx *c)
{
	static const size_t steps[] = { 24, 100, 1000, 5000, 8192, 20000 };
	u8 *p, *q, *ref;
	enum result r = PASS;
	unsigned int i;

	ref = kmalloc(steps[ARRAY_SIZE(steps) - 1], GFP_KERNEL);
	p = kmalloc(steps[0], GFP_KERNEL);
	if (!p || !ref) {
		r = FAILED(c, "kmalloc failed");
		goto out;
	}
	fill(ref, steps[ARRAY_SIZE(steps) - 1], 9);
	memcpy(p, ref, steps[0]);
	for (i = 1; i < ARRAY_SIZE(steps); i++) {
		size_t size = opaque(steps[i]);
		long d;

		q = krealloc(p, size, GFP_KERNEL);
		if (!q) {
			r = FAILED(c, "krealloc to %zu failed", size);
			break;
		}
		p = q;
		if (ksize(p) < size) {
			r = FAILED(c, "ksize %zu < %zu after krealloc", ksize(p), size);
			break;
		}
		d = first_diff(p, ref, steps[i - 1]);
		if (d >= 0) {
			r = FAILED(c, "krealloc %zu -> %zu lost byte %ld", steps[i - 1], size, d);
			break;
		}
		memcpy(p, ref, size);
	}
out:
	kfree(p);
	kfree(ref);
	return r;
}

static enum result t_kzalloc_zeroed(struct ctx *c)
{
	static const size_t sizes[] = { 8, 96, 192, 1024, 4096, 8192 };
	enum result r = PASS;
	unsigned int i;
	u8 *p;

	for (i = 0; i < ARRAY_SIZE(sizes) && r == PASS; i++) {
		size_t size = opaque(sizes[i]);

		/* Dirty an object of the same size class first. */
		p = kmalloc(size, GFP_KERNEL);
		if (p)
			memset(p, 0xee, size);
		kfree(p);
		p = kzalloc(size, GFP_KERNEL);
		if (!p)
			r = FAILED(c, "kzalloc(%zu) failed", size);
		else if (not_byte(p, 0, size) >= 0)
			r = FAILED(c, "kzalloc(%zu) byte %ld is not zero", size, not_byte(p, 0, size));
		kfree(p);
	}
	if (r == PASS && uc_cache) {
		p = kmem_cache_zalloc(uc_cache, GFP_KERNEL);
		if (!p)
			r = FAILED(c, "kmem_cache_zalloc failed");
		else if (not_byte(p, 0, UC_OBJ) >= 0)
			r = FAILED(c, "kmem_cache_zalloc object is not zeroed");
		if (p)
			kmem_cache_free(uc_cache, p);
	}
	return r;
}

/*
 * Allocate on one CPU and free on another (SLUB's remote free path), both
 * pinned with work_on_cpu(); then the freed objects must be reusable.
 */
#define NREMOTE 256
struct remote {
	void **objs;
	size_t size;
	int cpu;
};

static long remote_alloc_fn(void *arg)
{
	struct remote *rm = arg;
	int i;

	for (i = 0; i < NREMOTE; i++) {
		rm->objs[i] = kmalloc(rm->size, GFP_KERNEL);
		if (!rm->objs[i])
			return -ENOMEM;
		memset(rm->objs[i], i & 0xff, rm->size);
	}
	return raw_smp_processor_id() == rm->cpu;
}

static long remote_free_fn(void *arg)
{
	struct remote *rm = arg;
	int i;

	for (i = 0; i < NREMOTE; i++) {
		kfree(rm->objs[i]);
		rm->objs[i] = NULL;
	}
	return raw_smp_processor_id() == rm->cpu;
}

static enum result t_kfree_remote_cpu(struct ctx *c)
{
	struct remote rm;
	enum result r = PASS;
	int cpu_a, cpu_b, round;
	unsigned int i;
	long ret;

	if (num_online_cpus() < 2)
		return SKIPPED(c, "needs 2 online CPUs");
	cpu_a = cpumask_first(cpu_online_mask);
	cpu_b = cpumask_any_but(cpu_online_mask, cpu_a);
	if (cpu_b >= nr_cpu_ids)
		return SKIPPED(c, "no second online CPU");
	rm.objs = kcalloc(NREMOTE, sizeof(void *), GFP_KERNEL);
	if (!rm.objs)
		return FAILED(c, "kcalloc failed");
	for (round = 0; round < 2 && r == PASS; round++) {
		rm.size = round ? 512 : 64;
		rm.cpu = cpu_a;
		ret = work_on_cpu(cpu_a, remote_alloc_fn, &rm);
		if (ret != 1)
			r = ret < 0 ? FAILED(c, "kmalloc(%zu) failed on CPU %d", rm.size, cpu_a)
				    : FAILED(c, "allocation did not run on CPU %d", cpu_a);
		for (i = 0; i < NREMOTE && r == PASS; i++)
			if (not_byte(rm.objs[i], i & 0xff, rm.size) >= 0)
				r = FAILED(c, "object #%u overwritten before the remote free", i);
		rm.cpu = cpu_b;
		if (work_on_cpu(cpu_b, remote_free_fn, &rm) != 1 && r == PASS)
			r = FAILED(c, "free did not run on CPU %d", cpu_b);
		/* The freed objects must be reusable and independent. */
		for (i = 0; i < NREMOTE && r == PASS; i++) {
			rm.objs[i] = kmalloc(rm.size, GFP_KERNEL);
			if (!rm.objs[i])
				r = FAILED(c, "kmalloc after the remote free failed");
			else
				memset(rm.objs[i], ~i & 0xff, rm.size);
		}
		for (i = 0; i < NREMOTE && r == PASS; i++)
			if (not_byte(rm.objs[i], ~i & 0xff, rm.size) >= 0)
				r = FAILED(c, "reallocated object #%u overlaps another", i);
		for (i = 0; i < NREMOTE; i++) {
			kfree(rm.objs[i]);
			rm.objs[i] = NULL;
		}
	}
	kfree(rm.objs);
	return r;
}

/*
 * Every kmalloc size class and the sizes either side of each boundary:
 * ksize() is what this allocator rounds the request to (expected_ksize()),
 * at least the request, the same for two objects of one size; the object
 * is slab memory exactly when this allocator serves that size from a slab;
 * a power-of-two request is naturally aligned (guaranteed by all three
 * since 5.4); the whole ksize() range of two live objects (from 6.2: the
 * request, all ksize() leaves the caller) is writable without one
 * overwriting the other.  A wrong slab (or compound page)
 * looked up from an object address gives a wrong ksize(); a wrong object
 * index or slab address gives overlaps or misaligned objects.
 */
static size_t next_class(size_t s)
{
	switch (s) {
	case 64: return 96;
	case 96: return 128;
	case 128: return 192;
	case 192: return 256;
	default: return s * 2;
	}
}

static enum result kmalloc_one_size(struct ctx *c, size_t n)
{
	size_t want = expected_ksize(n), k[2];
	bool slab = kmalloc_is_slab(n);
	u8 *p[2];
	enum result r = PASS;
	int j;

	n = opaque(n);
	p[0] = kmalloc(n, GFP_KERNEL);
	p[1] = kmalloc(n, GFP_KERNEL);
	for (j = 0; j < 2 && r == PASS; j++) {
		if (!p[j]) {
			r = FAILED(c, "kmalloc(%zu) returned NULL", n);
			break;
		}
		k[j] = ksize(p[j]);
		if (k[j] < n)
			r = FAILED(c, "kmalloc(%zu): ksize %zu < request", n, k[j]);
		else if (k[j] != want)
			r = FAILED(c, "kmalloc(%zu): ksize %zu, %s rounds to %zu",
				   n, k[j], ALLOCATOR, want);
		else if (is_slab_object(p[j]) != slab)
			r = FAILED(c, "kmalloc(%zu): slab memory %d, expected %d",
				   n, !slab, slab);
		else if (is_power_of_2(n) && !IS_ALIGNED((unsigned long)p[j], n))
			r = FAILED(c, "kmalloc(%zu) = %px is not %zu-aligned", n, p[j], n);
	}
	if (r == PASS) {
		/* From 6.2 ("mm: Make ksize() a reporting-only function") the
		 * bytes past the request stay poisoned under KASAN: only the
		 * request is the caller's to use; before, the whole ksize(). */
		size_t use = LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0) ? n : k[0];

		memset(p[0], 0x11, use);
		memset(p[1], 0x22, use);
		if (not_byte(p[0], 0x11, use) >= 0 || not_byte(p[1], 0x22, use) >= 0)
			r = FAILED(c, "kmalloc(%zu): two objects overlap within %zu bytes (ksize %zu)",
				   n, use, k[0]);
	}
	kfree(p[0]);
	kfree(p[1]);
	return r;
}

static enum result t_kmalloc_size_classes(struct ctx *c)
{
	enum result r = PASS;
	unsigned int tested = 0;
	size_t s;

	for (s = 8; s <= KMALLOC_MAX_CACHE_SIZE && r == PASS; s = next_class(s)) {
		r = kmalloc_one_size(c, s - 1);
		if (r == PASS)
			r = kmalloc_one_size(c, s);
		/* SLAB: KMALLOC_MAX_CACHE_SIZE is KMALLOC_MAX_SIZE, beyond it NULL. */
		if (r == PASS && s + 1 <= KMALLOC_MAX_SIZE)
			r = kmalloc_one_size(c, s + 1);
		tested += 3;
	}
	if (r == PASS && IS_ENABLED(CONFIG_SLOB)) {
		/* SLOB's own boundary: the last size with a header in the page. */
		r = kmalloc_one_size(c, PAGE_SIZE - SLOB_MINALIGN - 1);
		if (r == PASS)
			r = kmalloc_one_size(c, PAGE_SIZE - SLOB_MINALIGN);
		tested += 2;
	}
	if (r == PASS)
		pr_info("# kmalloc_size_classes: %s, %u sizes up to %lu\n", ALLOCATOR,
			tested, (unsigned long)KMALLOC_MAX_CACHE_SIZE);
	return r;
}

/*
 * A SLAB_TYPESAFE_BY_RCU cache.  Its slabs go back to the page allocator
 * only through call_rcu() on the slab's rcu_head (SLAB: kmem_rcu_free,
 * SLUB: rcu_free_slab; SLOB delays each object instead).  Checks:
 *  - under rcu_read_lock(), after all objects of many slabs are freed (SLAB
 *    and SLUB discard surplus empty slabs while we free), every freed
 *    object is still in a slab page and keeps its contents: a slab freed
 *    without the RCU delay clears PageSlab at once;
 *  - still inside: objects allocated again are constructed (type stable)
 *    and the stale pointers still point to objects of this type;
 *  - after shrink + rcu_barrier() the slab pages were really given back
 *    (the slab page counter falls by at least half of what the
 *    allocation raised it): an rcu_head callback that frees the wrong page
 *    or none keeps them counted (or reports a bad page);
 *  - the cache still allocates and frees, and kmem_cache_destroy()
 *    completes (a leaked object would be reported on the console).
 */
#define RCU_OBJ		512
#define NRCU		2048
#define NRCU_AGAIN	64
#define RCU_MAGIC	0x7c0ffee5U
struct rcu_obj {
	u32 magic;		/* set by the ctor, never changed */
	u32 idx;		/* set by the user */
	u8 pad[RCU_OBJ - 8];
};

static void rcu_ctor(void *p)
{
	struct rcu_obj *o = p;

	o->magic = RCU_MAGIC;
	o->idx = ~0U;
	memset(o->pad, 0x5e, sizeof(o->pad));
}

static enum result rcu_pass(struct ctx *c, struct kmem_cache *s, struct rcu_obj **objs)
{
	struct rcu_obj *again[NRCU_AGAIN];
	enum result r = PASS;
	unsigned int i, n;

	rcu_read_lock();
	for (i = 0; i < NRCU; i++)
		kmem_cache_free(s, objs[i]);
	for (i = 0; i < NRCU && r == PASS; i++) {
		if (!is_slab_object(objs[i]))
			r = FAILED(c, "inside rcu_read_lock: freed object #%u's page left the slab", i);
		else if (objs[i]->magic != RCU_MAGIC || objs[i]->idx != i)
			r = FAILED(c, "inside rcu_read_lock: freed object #%u changed (magic %x idx %u)",
				   i, objs[i]->magic, objs[i]->idx);
	}
	for (n = 0; n < NRCU_AGAIN && r == PASS; n++) {
		again[n] = kmem_cache_alloc(s, GFP_ATOMIC);
		if (!again[n])
			break;
		if (!is_slab_object(again[n]) || again[n]->magic != RCU_MAGIC)
			r = FAILED(c, "inside rcu_read_lock: reallocated object is not a constructed object of the cache");
		again[n]->idx = NRCU + n;
	}
	for (i = 0; i < NRCU && r == PASS; i++)
		if (!is_slab_object(objs[i]) || objs[i]->magic != RCU_MAGIC)
			r = FAILED(c, "inside rcu_read_lock: stale pointer #%u no longer an object of the cache", i);
	for (i = 0; i < n; i++)
		if (again[i])
			kmem_cache_free(s, again[i]);
	rcu_read_unlock();
	return r;
}

static enum result t_kmem_cache_rcu(struct ctx *c)
{
	struct kmem_cache *s;
	struct rcu_obj **objs, *p;
	enum result r = PASS;
	long before, held, after;
	unsigned int i, changes;

	objs = kcalloc(NRCU, sizeof(*objs), GFP_KERNEL);
	if (!objs)
		return FAILED(c, "kcalloc failed");
	s = kmem_cache_create("slabconv_rcu", RCU_OBJ, 0, SLAB_TYPESAFE_BY_RCU, rcu_ctor);
	if (!s) {
		kfree(objs);
		return FAILED(c, "kmem_cache_create(SLAB_TYPESAFE_BY_RCU) failed");
	}
	rcu_barrier();
	before = slab_unreclaimable_pages();
	for (i = 0; i < NRCU; i++) {
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		if (!objs[i]) {
			r = FAILED(c, "kmem_cache_alloc #%u failed", i);
			break;
		}
		if (objs[i]->magic != RCU_MAGIC || objs[i]->idx != ~0U) {
			r = FAILED(c, "object #%u was not constructed", i);
			break;
		}
		objs[i]->idx = i;
	}
	if (r != PASS) {
		for (i = 0; i < NRCU && objs[i]; i++)
			kmem_cache_free(s, objs[i]);
		goto out;
	}
	held = slab_unreclaimable_pages() - before;
	changes = slab_changes((void **)objs, NRCU);
	for (i = 0; i < NRCU && r == PASS; i++)
		if (objs[i]->idx != i)
			r = FAILED(c, "object #%u handed out twice", i);
	if (r == PASS && changes < 4)
		r = FAILED(c, "%u objects over only %u slab changes", NRCU, changes);
	if (r == PASS && held < NRCU * RCU_OBJ / PAGE_SIZE / 2)
		r = FAILED(c, "slab pages rose by %ld for %u KiB of objects", held,
			   NRCU * RCU_OBJ / 1024);
	if (r != PASS) {
		for (i = 0; i < NRCU; i++)
			kmem_cache_free(s, objs[i]);
		goto out;
	}

	r = rcu_pass(c, s, objs);	/* frees objs[] */
	kmem_cache_shrink(s);
	rcu_barrier();
	kmem_cache_shrink(s);
	rcu_barrier();
	after = slab_unreclaimable_pages();
	pr_info("# kmem_cache_rcu: %u objects, %u slab changes, slab pages %ld -> +%ld -> %+ld after free+shrink+rcu_barrier\n",
		NRCU, changes, before, held, after - before);
	if (r == PASS && (before + held) - after < held / 2)
		r = FAILED(c, "slab pages not given back after shrink + rcu_barrier: +%ld, then %+ld",
			   held, after - before);

	/* The cache still works. */
	p = kmem_cache_alloc(s, GFP_KERNEL);
	if (!p && r == PASS)
		r = FAILED(c, "kmem_cache_alloc after shrink failed");
	else if (p && p->magic != RCU_MAGIC && r == PASS)
		r = FAILED(c, "object after shrink not constructed");
	if (p)
		kmem_cache_free(s, p);
out:
	kmem_cache_destroy(s);
	kfree(objs);
	if (r != PASS)
		return r;
	/* A new cache of the same name: alloc/free/destroy again. */
	s = kmem_cache_create("slabconv_rcu", RCU_OBJ, 0, SLAB_TYPESAFE_BY_RCU, rcu_ctor);
	if (!s)
		return FAILED(c, "kmem_cache_create after destroy failed");
	p = kmem_cache_alloc(s, GFP_KERNEL);
	if (!p)
		r = FAILED(c, "kmem_cache_alloc from the re-created cache failed");
	else if (p->magic != RCU_MAGIC)
		r = FAILED(c, "object of the re-created cache not constructed");
	if (p)
		kmem_cache_free(s, p);
	kmem_cache_destroy(s);
	return r;
}

/*
 * Large objects in caches with a ctor (so SLAB cannot keep its freelist in
 * a free object) and 64-byte alignment (which drops DEBUG_SLAB's red zones
 * so objects fill the slab exactly): SLAB keeps the freelist OFF_SLAB, in a
 * kmalloc object of its own.  The objects of several slabs must be
 * constructed, aligned, distinct and writable over their whole size,
 * ksize() >= size (not SLOB: its ksize() is for kmalloc only); freed in
 * another order, they are handed out again constructed and distinct.
 * Under SLAB the layout is checked too: with the freelist off the slab
 * every object starts at a multiple of the size in its slab; a freelist on
 * the slab shifts them (then this case would not test OFF_SLAB and says so).
 * A broken off-slab freelist (wrong slab->freelist, wrong index) hands out
 * an object twice or one outside the slab: the pattern check fails.
 */
#define NOFF		32
#define OFF_ALIGN	64
#define OFF_MAGIC	0x0ff51ab0U
static void off_construct(void *p, size_t size)
{
	u32 *w = p;

	w[0] = OFF_MAGIC;
	w[1] = size;
	memset(w + 2, 0x6b, size - 12);
	*(u32 *)((u8 *)p + size - 4) = ~OFF_MAGIC;
}

static long off_state(const void *p, size_t size)
{
	const u32 *w = p;

	if (w[0] != OFF_MAGIC || w[1] != size)
		return 0;
	if (*(const u32 *)((const u8 *)p + size - 4) != ~OFF_MAGIC)
		return size - 4;
	return not_byte(w + 2, 0x6b, size - 12);
}

#define OFF_CTOR(sz) static void off_ctor_##sz(void *p) { off_construct(p, sz); }
OFF_CTOR(1024)
OFF_CTOR(2048)
OFF_CTOR(4096)
OFF_CTOR(8192)

static const struct { size_t size; void (*ctor)(void *); } off_caches[] = {
	{ 1024, off_ctor_1024 }, { 2048, off_ctor_2048 },
	{ 4096, off_ctor_4096 }, { 8192, off_ctor_8192 },
};

static enum result off_check_all(struct ctx *c, void **objs, size_t size, unsigned int round)
{
	unsigned int i;
	long d;

	for (i = 0; i < NOFF; i++) {
		if (!objs[i])
			return FAILED(c, "size %zu round %u: kmem_cache_alloc #%u failed",
				      size, round, i);
		d = off_state(objs[i], size);
		if (d >= 0)
			return FAILED(c, "size %zu round %u: object #%u not constructed (byte %ld)",
				      size, round, i, d);
		if (!IS_ALIGNED((unsigned long)objs[i], OFF_ALIGN))
			return FAILED(c, "size %zu: object %px not %d-aligned", size, objs[i],
				      OFF_ALIGN);
		if (is_slab_object(objs[i]) != cache_obj_is_slab(size))
			return FAILED(c, "size %zu: object in slab memory %d, expected %d",
				      size, !cache_obj_is_slab(size), cache_obj_is_slab(size));
		if (!IS_ENABLED(CONFIG_SLOB) && ksize(objs[i]) < size)
			return FAILED(c, "size %zu: ksize %zu", size, ksize(objs[i]));
		if (IS_ENABLED(CONFIG_SLAB)) {
			struct page *head = virt_to_head_page(objs[i]);
			size_t off = (u8 *)objs[i] - (u8 *)page_address(head);

			if (off % size)
				return FAILED(c, "size %zu: object at offset %zu of its slab: freelist not OFF_SLAB",
					      size, off);
		}
		fill(objs[i], size, i + round * NOFF);
	}
	for (i = 0; i < NOFF; i++) {
		d = not_filled(objs[i], size, i + round * NOFF);
		if (d >= 0)
			return FAILED(c, "size %zu round %u: object #%u overwritten at byte %ld",
				      size, round, i, d);
	}
	return PASS;
}

static enum result t_kmem_cache_offslab(struct ctx *c)
{
	void *objs[NOFF];
	enum result r = PASS;
	unsigned int k, i, round;

	for (k = 0; k < ARRAY_SIZE(off_caches) && r == PASS; k++) {
		size_t size = off_caches[k].size;
		struct kmem_cache *s;
		char name[32];

		snprintf(name, sizeof(name), "slabconv_off%zu", size);
		s = kmem_cache_create(name, size, OFF_ALIGN, 0, off_caches[k].ctor);
		if (!s)
			return FAILED(c, "kmem_cache_create(%s) failed", name);
		memset(objs, 0, sizeof(objs));
		for (round = 0; round < 2 && r == PASS; round++) {
			for (i = 0; i < NOFF; i++)
				objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
			r = off_check_all(c, objs, size, round);
			if (r == PASS && round == 0 && cache_obj_is_slab(size) &&
			    !slab_changes(objs, NOFF))
				r = FAILED(c, "size %zu: %u objects in one slab", size, NOFF);
			/* Restore the constructed state; free in another order:
			 * odd ones from the end, then even ones from the start. */
			for (i = NOFF; i-- > 0; )
				if (objs[i] && (i & 1)) {
					off_construct(objs[i], size);
					kmem_cache_free(s, objs[i]);
					objs[i] = NULL;
				}
			for (i = 0; i < NOFF; i++)
				if (objs[i]) {
					off_construct(objs[i], size);
					kmem_cache_free(s, objs[i]);
					objs[i] = NULL;
				}
		}
		kmem_cache_destroy(s);
	}
	return r;
}

/* kfree_bulk(): kmem_cache_free_bulk(NULL, ...), the cache taken from each
 * object's slab (SLUB: build_detached_freelist()), mixed sizes including a
 * page-allocator block; then the same sizes again, distinct and writable. */
#define NKB 48
static enum result t_kfree_bulk(struct ctx *c)
{
	static const size_t sizes[] = { 64, 64, 192, 512, 64, 4096, 20000, 192 };
	void *objs[NKB];
	enum result r = PASS;
	unsigned int round, i;

	for (round = 0; round < 2 && r == PASS; round++) {
		memset(objs, 0, sizeof(objs));
		for (i = 0; i < NKB; i++) {
			size_t n = opaque(sizes[i % ARRAY_SIZE(sizes)]);

			objs[i] = kmalloc(n, GFP_KERNEL);
			if (!objs[i]) {
				r = FAILED(c, "kmalloc(%zu) failed", n);
				break;
			}
			memset(objs[i], i + 1, n);
		}
		for (i = 0; i < NKB && r == PASS; i++)
			if (not_byte(objs[i], i + 1, sizes[i % ARRAY_SIZE(sizes)]) >= 0)
				r = FAILED(c, "round %u: object #%u overwritten", round, i);
		if (r == PASS) {
			kfree_bulk(NKB, objs);
		} else {
			for (i = 0; i < NKB; i++)
				kfree(objs[i]);
		}
	}
	return r;
}

/*
 * kmem_valid_obj() / mem_dump_obj() (5.12+; kmem_dump_obj() returns the
 * verdict from 6.1, where kmem_valid_obj() went away).  A slab object is
 * valid, a page of the page allocator is not; mem_dump_obj() prints what
 * it knows about a slab object (the host checks that it is no failure report).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 12, 0)
static bool slab_obj_valid(void *p)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 1, 0)
	return kmem_dump_obj(p);	/* prints what it knows of a slab object */
#else
	return kmem_valid_obj(p);
#endif
}
#endif

static enum result t_mem_dump_obj(struct ctx *c)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 12, 0)
	return SKIPPED(c, "kmem_valid_obj()/mem_dump_obj() exist only from Linux 5.12");
#else
	struct page *pg;
	enum result r = PASS;
	void *p;

	p = kmalloc(opaque(64), GFP_KERNEL);
	pg = alloc_page(GFP_KERNEL);
	if (!p || !pg) {
		r = FAILED(c, "kmalloc or alloc_page failed");
		goto out;
	}
	pr_info("# mem_dump_obj: kmalloc-64 object %px\n", p);
	if (!slab_obj_valid(p))
		r = FAILED(c, "kmem_valid_obj() is false for a kmalloc object");
	else if (slab_obj_valid(page_address(pg)))
		r = FAILED(c, "kmem_valid_obj() is true for a page-allocator page");
	mem_dump_obj(p);
out:
	kfree(p);
	if (pg)
		__free_page(pg);
	return r;
#endif
}

/* ---- runner ------------------------------------------------------------- */

struct test_case {
	const char *name;	/* printf format, %lu = arg */
	enum result (*fn)(struct ctx *c);
	unsigned long arg;
};

static const struct test_case cases[] = {
	{ "hardened_usercopy_config", t_hardened_usercopy_config },
	{ "kmalloc_ksize", t_kmalloc_ksize },
	{ "usercopy_kmalloc_%lu", t_usercopy_kmalloc, 8 },
	{ "usercopy_kmalloc_%lu", t_usercopy_kmalloc, 64 },
	{ "usercopy_kmalloc_%lu", t_usercopy_kmalloc, 96 },
	{ "usercopy_kmalloc_%lu", t_usercopy_kmalloc, 192 },
	{ "usercopy_kmalloc_%lu", t_usercopy_kmalloc, 256 },
	{ "usercopy_kmalloc_%lu", t_usercopy_kmalloc, 1024 },
	{ "usercopy_kmalloc_%lu", t_usercopy_kmalloc, 2048 },
	{ "usercopy_kmalloc_%lu", t_usercopy_kmalloc, 4096 },
	{ "usercopy_kmalloc_%lu", t_usercopy_kmalloc, 8192 },
	{ "usercopy_kmalloc_offset", t_usercopy_kmalloc_offset },
	{ "usercopy_cache_whitelist", t_usercopy_cache_whitelist, 0 },
	{ "usercopy_cache_whitelist_offset", t_usercopy_cache_whitelist, 1 },
	{ "usercopy_kmalloc_accounted", t_usercopy_kmalloc_accounted },
	{ "usercopy_cache_accounted", t_usercopy_cache_accounted },
	{ "usercopy_reject_past_end", t_usercopy_reject_past_end },
	{ "usercopy_reject_outside_window", t_usercopy_reject_outside_window },
	{ "usercopy_reject_freed_neighbour", t_usercopy_reject_freed_neighbour },
	{ "kmalloc_size_classes", t_kmalloc_size_classes },
	{ "kmem_cache_bulk", t_kmem_cache_bulk },
	{ "kfree_bulk", t_kfree_bulk },
	{ "kmem_cache_ctor", t_kmem_cache_ctor },
	{ "kmem_cache_rcu", t_kmem_cache_rcu },
	{ "kmem_cache_offslab", t_kmem_cache_offslab },
	{ "mem_dump_obj", t_mem_dump_obj },
	{ "krealloc_grow", t_krealloc_grow },
	{ "kzalloc_zeroed", t_kzalloc_zeroed },
	{ "kfree_remote_cpu", t_kfree_remote_cpu },
};

/* ---- KASAN: deliberate bad accesses and the reports they must produce ---- */

#ifdef CONFIG_KASAN
#define KASAN_OBJ	120	/* a multiple of generic KASAN's 8-byte granule */
/*
 * The out-of-bounds read: the first byte past the object's last granule.
 * Generic KASAN poisons byte by byte (its red zone starts at KASAN_OBJ);
 * software tags tag 16-byte granules (KASAN_SHADOW_SCALE_SHIFT 4), so the
 * read lands in the next granule, which the object's tag does not cover.
 */
#define KASAN_OOB	round_up(KASAN_OBJ, 1UL << KASAN_SHADOW_SCALE_SHIFT)
#define KASAN_CACHE	"slabconv_kasan"
#define KASAN_EXPECTED	2
#if defined(CONFIG_KASAN_SW_TAGS)
/* tags_report.c get_bug_type() with KASAN_SW_TAGS_IDENTIFY (the fragment) */
#define KASAN_OOB_TYPE	"out-of-bounds"
#define KASAN_UAF	"use-after-free"
#else
#define KASAN_OOB_TYPE	"slab-out-of-bounds"
/* Generic KASAN names a freed slab object's report so from 6.3 on. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define KASAN_UAF	"slab-use-after-free"
#else
#define KASAN_UAF	"use-after-free"
#endif
#endif

/* A volatile sink keeps the bad reads (as lib/test_kasan.c's globals do). */
static volatile u8 kasan_sink;

/*
 * The brackets for boot/console.py and init.sh: between
 * "slabconv-expect: begin kasan TYPE CACHE" and "slabconv-expect: end kasan"
 * there must be a KASAN report of bug type TYPE on an object that belongs to
 * CACHE; a KASAN report anywhere else fails the run.  Not KTAP (no
 * "slabconv-ktap: " prefix): kernel lines with their timestamp.
 */
static void expect_begin(const char *type)
{
	printk(KERN_INFO "slabconv-expect: begin kasan %s " KASAN_CACHE "\n", type);
}

static void expect_end(void)
{
	printk(KERN_INFO "slabconv-expect: end kasan\n");
}

static noinline void kasan_bad_read(const u8 *p, size_t off)
{
	kasan_sink = p[opaque(off)];
}

/*
 * KASAN reports only its first bug unless multi-shot is on (kasan_multi_shot
 * on the command line, which the boot of the kasan configuration passes);
 * 5.10 also lets a module turn it on for a while, as lib/test_kasan.c does,
 * which also keeps panic_on_warn from ending the guest on these reports.
 * Later kernels keep those two functions private to mm/kasan/.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0)
#define kasan_multi_shot_on()		kasan_save_enable_multi_shot()
#define kasan_multi_shot_restore(m)	kasan_restore_multi_shot(m)
#else
#define kasan_multi_shot_on()		true
#define kasan_multi_shot_restore(m)	do { (void)(m); } while (0)
#endif

/*
 * An out-of-bounds read just past an object of KASAN_CACHE (its right red
 * zone: "slab-out-of-bounds") and a read of a freed one (in the quarantine:
 * "use-after-free").  Each report describes the object through KASAN's
 * address-to-slab lookup (kasan_addr_to_slab() and slab->slab_cache after
 * the series), which prints "belongs to the cache KASAN_CACHE".
 */
static void kasan_reports(void)
{
	bool missing = !strcmp(inject, "kasan_missing");
	struct kmem_cache *s;
	u8 *oob, *uaf, *km = NULL;
	bool multishot;

	pr_info("# kasan: expect %d reports on " KASAN_CACHE ", kunit %d\n",
		KASAN_EXPECTED, IS_BUILTIN(CONFIG_KASAN_KUNIT_TEST));
	s = kmem_cache_create(KASAN_CACHE, KASAN_OBJ, 0, 0, NULL);
	if (!s) {
		pr_info("# kasan: kmem_cache_create(" KASAN_CACHE ") failed\n");
		return;
	}
	oob = kmem_cache_alloc(s, GFP_KERNEL);
	uaf = kmem_cache_alloc(s, GFP_KERNEL);
	if (!strcmp(inject, "kasan_wrongcache"))
		km = kmalloc(opaque(KASAN_OBJ), GFP_KERNEL);
	if (!oob || !uaf || (!km && !strcmp(inject, "kasan_wrongcache"))) {
		pr_info("# kasan: allocation failed\n");
		goto out;
	}
	multishot = kasan_multi_shot_on();

	expect_begin(KASAN_OOB_TYPE);
	if (!missing)
		kasan_bad_read(km ?: oob, KASAN_OOB);
	expect_end();

	kmem_cache_free(s, uaf);
	expect_begin(KASAN_UAF);
	if (!missing)
		kasan_bad_read(uaf, 0);
	expect_end();
	uaf = NULL;

	kasan_multi_shot_restore(multishot);
	if (!strcmp(inject, "kasan_stray")) {
		pr_info("# inject=kasan_stray: an out-of-bounds read outside the brackets\n");
		kasan_bad_read(oob, KASAN_OOB);
	}
out:
	kfree(km);
	if (uaf)
		kmem_cache_free(s, uaf);
	if (oob)
		kmem_cache_free(s, oob);
	kmem_cache_destroy(s);
}
#else
static void kasan_reports(void)
{
}
#endif

static void hold_objects(void)
{
	unsigned int i, want = hold_kb * 1024 / ACCT_OBJ;

	if (!acct_cache || !want)
		return;
	mutex_lock(&hold_lock);
	hold = kcalloc(want, sizeof(void *), GFP_KERNEL);
	if (!hold) {
		mutex_unlock(&hold_lock);
		return;
	}
	for (i = 0; i < want; i++) {
		hold[i] = kmem_cache_alloc(acct_cache, GFP_KERNEL);
		if (!hold[i])
			break;
		memset(hold[i], 0x3c, ACCT_OBJ);
	}
	hold_nr = i;
	mutex_unlock(&hold_lock);
	pr_info("# held %u accounted objects of %u bytes\n", i, ACCT_OBJ);
}

/*
 * inject=redzone: write the first byte of the right red zone of an object
 * that stays allocated.  struct kmem_cache is private to mm/ since the
 * struct slab series, so the red zone is recognised by its bytes:
 *  - SLUB (slub_debug=Z): SLUB_RED_ACTIVE bytes; SLUB validate (init test 2)
 *    reports "Redzone overwritten" (and repairs it);
 *  - SLAB (DEBUG_SLAB): the 64-bit RED_ACTIVE word; freeing the object at
 *    rmmod reports "slab error in ...: memory outside object was
 *    overwritten" (init test 6 and the console scanner fail).
 * Without red zones the bytes after the object belong to someone else and
 * nothing is written.
 */
/* SLAB's RED_ACTIVE word went away with SLAB (6.8); SLUB's bytes stay. */
static bool has_red_zone(const u8 *after, u64 word)
{
#ifdef CONFIG_SLAB
	return word == RED_ACTIVE;
#else
	return !memchr_inv(after, SLUB_RED_ACTIVE, sizeof(void *));
#endif
}

static void plant_redzone(void)
{
	u8 *p;
	u64 word;

	if (!uc_cache)
		return;
	p = kmem_cache_alloc(uc_cache, GFP_KERNEL);
	if (!p)
		return;
	memcpy(&word, p + opaque(UC_OBJ), sizeof(word));
	if (!has_red_zone(p + opaque(UC_OBJ), word)) {
		kmem_cache_free(uc_cache, p);
		pr_info("# inject=redzone ignored: slabconv_uc has no red zone (%s)\n",
			IS_ENABLED(CONFIG_SLAB) ? "DEBUG_SLAB" : "slub_debug=Z");
		return;
	}
	p[opaque(UC_OBJ)] = 0x42;
	planted = p;
	pr_info("# inject=redzone: overwrote the red zone after a slabconv_uc object\n");
}

/*
 * Free the held SLAB_ACCOUNT objects (their memcg charge must drop).  With
 * KASAN, kmem_cache_free() parks objects in the quarantine, and 5.10's SLUB
 * uncharges an object only when it really frees it (memcg_slab_free_hook()
 * in do_slab_free()): kmem_cache_shrink() flushes this cache's objects out
 * of the quarantine (kasan_cache_shrink()).  Without KASAN it only gives
 * empty slabs back, which the per-object charge does not see.
 */
static void release_hold(bool unload)
{
	unsigned int i, n;

	mutex_lock(&hold_lock);
	n = hold_nr;
	if (n && !unload && !strcmp(inject, "nofree")) {
		mutex_unlock(&hold_lock);
		pr_info("# inject=nofree: release keeps the %u held objects until rmmod\n", n);
		return;
	}
	for (i = 0; i < n; i++)
		kmem_cache_free(acct_cache, hold[i]);
	kfree(hold);
	hold = NULL;
	hold_nr = 0;
	if (n)
		kmem_cache_shrink(acct_cache);
	mutex_unlock(&hold_lock);
	if (n && !unload)
		pr_info("# released %u accounted objects\n", n);
}

/* echo 1 > /sys/module/slabconv_test/parameters/release */
static int release_set(const char *val, const struct kernel_param *kp)
{
	bool v;
	int err = kstrtobool(val, &v);

	if (err)
		return err;
	if (v)
		release_hold(false);
	return 0;
}

static const struct kernel_param_ops release_ops = {
	.set = release_set,
};
module_param_cb(release, &release_ops, NULL, 0200);
MODULE_PARM_DESC(release, "write 1: free the held SLAB_ACCOUNT objects now (memcg check: the charge drops)");

static void release_objects(void)
{
	if (planted)
		kmem_cache_free(uc_cache, planted);
	planted = NULL;
	release_hold(true);
}

static int __init slabconv_test_init(void)
{
	unsigned int i, pass = 0, fail = 0, skipped = 0;
	struct ctx c;
	char name[64];

	uc_cache = kmem_cache_create_usercopy("slabconv_uc", UC_OBJ, 0, 0,
					      UC_USEROFF, UC_USERSIZE, NULL);
	rej_cache = kmem_cache_create_usercopy(REJ_CACHE, REJ_OBJ, 0, 0, 0, REJ_OBJ, NULL);
	acct_cache = kmem_cache_create_usercopy("slabconv_acct", ACCT_OBJ, 0,
						strcmp(inject, "noaccount") ? SLAB_ACCOUNT : 0,
						0, ACCT_OBJ, NULL);
	ubuf = vm_mmap(NULL, 0, UBUF_SIZE, PROT_READ | PROT_WRITE,
		       MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (ubuf >= TASK_SIZE) {
		pr_info("# vm_mmap failed: %ld\n", (long)ubuf);
		ubuf = 0;
	}

	pr_info("KTAP version 1\n");
	pr_info("# Subtest: slabconv_test\n");
	pr_info("# allocator %s, memcg_kmem %d, hardened_usercopy %d, slub_debug %d, slub_tiny %d, linux %d.%d\n",
		ALLOCATOR, HAVE_MEMCG_KMEM, IS_ENABLED(CONFIG_HARDENED_USERCOPY),
		IS_ENABLED(CONFIG_SLUB_DEBUG), IS_ENABLED(CONFIG_SLUB_TINY),
		LINUX_VERSION_CODE >> 16, (LINUX_VERSION_CODE >> 8) & 0xff);
	pr_info("1..%zu\n", ARRAY_SIZE(cases));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		enum result r;

		memset(&c, 0, sizeof(c));
		c.arg = cases[i].arg;
		snprintf(name, sizeof(name), cases[i].name, cases[i].arg);
		r = cases[i].fn(&c);
		if (i == 0 && !strcmp(inject, "fail"))
			r = FAILED(&c, "planted failure (inject=fail)");
		switch (r) {
		case PASS:
			pass++;
			pr_info("ok %u - %s\n", i + 1, name);
			break;
		case SKIP:
			skipped++;
			pr_info("ok %u - %s # SKIP %s\n", i + 1, name, c.reason);
			break;
		default:
			fail++;
			pr_info("# %s: %s\n", name, c.reason);
			pr_info("not ok %u - %s # %s\n", i + 1, name, c.reason);
			break;
		}
	}
	pr_info("# slabconv_test: pass:%u fail:%u skip:%u total:%zu\n",
		pass, fail, skipped, ARRAY_SIZE(cases));

	if (ubuf)
		vm_munmap(ubuf, UBUF_SIZE);
	ubuf = 0;
	hold_objects();

	if (!strcmp(inject, "redzone"))
		plant_redzone();
	kasan_reports();
	if (!strcmp(inject, "warn"))
		WARN(1, "slabconv_test: planted warning (inject=warn)\n");
	return 0;
}

static void __exit slabconv_test_exit(void)
{
	release_objects();
	kmem_cache_destroy(acct_cache);
	kmem_cache_destroy(rej_cache);
	kmem_cache_destroy(uc_cache);
	pr_info("# slabconv_test: unloaded\n");
}

module_init(slabconv_test_init);
module_exit(slabconv_test_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("slabconv in-guest slab and hardened usercopy checks");
