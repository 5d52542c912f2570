// SPDX-License-Identifier: GPL-2.0
/*
 * slabconv_iommu - IOMMU page-table checks run inside the QEMU guest.
 *
 * Loaded by the IOMMU section of boot/guest/init.sh on every guest; prints
 * a KTAP document (printk lines prefixed "slabconv-iommu-ktap: ") that the
 * init script lifts out of dmesg.  Without CONFIG_INTEL_IOMMU every case is
 * a SKIP; with it, an IOMMU that is not enabled is a failure.
 *
 * "iommu: Use put_pages_list" changes how the Intel driver hands the pages
 * of its I/O page tables back: domain_unmap() collects the page-table pages
 * a range covered entirely, and the strict unmap path frees them with
 * put_pages_list() after the IOTLB flush, the lazy path queues them in the
 * driver's flush queue (as a ring through page->lru) until the flush timer
 * or a full queue flushes the IOTLB and iova_entry_free() frees them.  A
 * page-table page that is not given back is a leak nobody notices, so this
 * module counts them.
 *
 * On the virtio-blk PCI disk behind the IOMMU (its DMA API is the Intel
 * driver's), with the same npages pages mapped `maps` times at once through
 * scatterlists of single pages (no superpage can be used: the driver maps
 * 4 KiB PTEs, and each mapping of npages >= 512 covers whole 2 MiB leaf
 * tables, since the IOVA is aligned to the size rounded up to a power of
 * two):
 *
 *   1 iommu_enabled            intel_iommu_enabled
 *   2 device_translated        the disk has an IOMMU domain of type DMA and
 *                              non-direct DMA ops
 *   3 pagetables_built         every page of every mapping translates
 *                              (iommu_iova_to_phys()) to its page, and the
 *                              free pages dropped by at least 3/4 of the
 *                              leaf tables the mappings need
 *   4 pagetables_freed_on_unmap  after dma_unmap_sg() (with interrupts off,
 *                              so that the flush timer cannot run on this
 *                              CPU) nothing translates any more; strict:
 *                              at least 3/4 of the leaf tables are free
 *                              pages again at once; lazy: at most 1/4 are
 *                              (the flush queue holds them) and at least
 *                              3/4 are back after the queue's flush
 *   5 pagetables_no_leak       `rounds` more rounds of map all / unmap all;
 *                              once the flush queue is empty the free pages
 *                              are where they were before the rounds, to
 *                              within `tolerance` pages
 *
 * "Free pages" are the zones' NR_FREE_PAGES (with the per-CPU deltas) plus
 * the pages on the per-CPU free lists: a page freed to a per-CPU list is
 * not in NR_FREE_PAGES, and the lists move pages to and from the buddy
 * lists in batches of ~31, which would otherwise swamp a count of a few
 * dozen page-table pages.  Everything else the rounds allocate (the
 * scatterlists, the mapped pages) is allocated before the first count.
 *
 * mode=strict|lazy (init.sh passes it from intel_iommu=) says which unmap
 * path the kernel is expected to take; case 4 fails when the other one is
 * observed.
 *
 * mode=amd (the host attached -device amd-iommu): 5.10's AMD driver never
 * frees a page-table page at unmap (iommu_unmap_page() only clears PTEs),
 * so the DMA API cannot reach its converted paths.  They run when
 * iommu_map_page() puts a large page where a lower-level table was
 * (free_clear_pte() collects the table, put_pages_list() frees it after the
 * IOTLB flush) and when a domain is freed (free_pagetable()).  The cases
 * after device_translated therefore work on an UNMANAGED domain of the AMD
 * driver's (iommu_domain_alloc(&pci_bus_type)), with `ranges` 2 MiB IOVA
 * ranges from 1 GiB up, one 4 KiB page mapped at the start of each (one
 * leaf table each), all within one level-2 table that a warm-up mapping
 * builds first:
 *
 *   3 pagetables_built         each range's 4 KiB page translates to its
 *                              page; free pages dropped by at least 3/4 of
 *                              `ranges` leaf tables
 *   4 large_page_frees_tables  the 4 KiB pages unmapped (the tables stay),
 *                              then a 2 MiB page mapped over each range:
 *                              it translates, and at least 3/4 of the leaf
 *                              tables are free pages again
 *   5 domain_free_frees_tables `ranges` more leaf tables built in a second
 *                              set of ranges, then iommu_domain_free(): at
 *                              least 3/4 of them come back, and the free
 *                              pages are where they were before the domain
 *                              was allocated, to within `tolerance`
 *   6 pagetables_no_leak       `rounds` rounds of a whole domain's life
 *                              (alloc, map small, unmap, map large over
 *                              them, unmap, map small elsewhere, free):
 *                              the free pages are where they were, to
 *                              within `tolerance`
 *
 * Written against Linux 5.10 (the Intel driver's own DMA ops and flush
 * queue); the DMA API calls and counters it uses exist in later kernels.
 */
#define pr_fmt(fmt) "slabconv-iommu-ktap: " fmt

#include <linux/delay.h>
#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/iommu.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/nodemask.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/version.h>
#include <linux/vmstat.h>
#if IS_ENABLED(CONFIG_INTEL_IOMMU)
#if __has_include(<linux/intel-iommu.h>)
#include <linux/intel-iommu.h>
#else
/* Linux 6.1 moved the header into drivers/iommu/intel/iommu.h; the flag is
 * still exported (EXPORT_SYMBOL_GPL in drivers/iommu/intel/iommu.c) */
extern int intel_iommu_enabled;
#endif
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define iommu_map_compat(d, iova, pa, size, prot) iommu_map(d, iova, pa, size, prot, GFP_KERNEL)
#else
#define iommu_map_compat(d, iova, pa, size, prot) iommu_map(d, iova, pa, size, prot)
#endif

static char *mode = "";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "the unmap path the kernel must take: 'strict' or 'lazy' (Intel; default: not checked), or 'amd' (the AMD driver's cases)");

static unsigned int npages = 1024;
module_param(npages, uint, 0444);
MODULE_PARM_DESC(npages, "pages per mapping (a multiple of 512: whole 2 MiB leaf tables)");

static unsigned int maps = 32;
module_param(maps, uint, 0444);
MODULE_PARM_DESC(maps, "mappings held at once");

static unsigned int rounds = 16;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "rounds of map all / unmap all for the leak check");

static unsigned int ranges = 64;
module_param(ranges, uint, 0444);
MODULE_PARM_DESC(ranges, "mode=amd: 2 MiB IOVA ranges per set (one leaf table each)");

/*
 * 32 pages: with nothing else allocating, the counts move by a page or two
 * between rounds (an iova slab page, a vmstat or workqueue allocation on the
 * other CPU); one lost leaf table per mapping and round is maps * rounds
 * pages (512 by default), and a lost page every 32 mappings still shows.
 */
static unsigned int tolerance = 32;
module_param(tolerance, uint, 0444);
MODULE_PARM_DESC(tolerance, "free pages the leak check may find missing after the rounds");

#define VIRTIO_VENDOR		0x1af4
#define VIRTIO_BLK_MODERN	0x1042
#define LEAF_SPAN		512	/* pages one leaf table maps */
#define FLUSH_WAIT_MS		2000

enum result { PASS, FAIL, SKIP };
#define REASON_LEN 240
static char reason[REASON_LEN];
#define FAILED(fmt, ...) ({ snprintf(reason, REASON_LEN, fmt, ##__VA_ARGS__); FAIL; })
#define SKIPPED(fmt, ...) ({ snprintf(reason, REASON_LEN, fmt, ##__VA_ARGS__); SKIP; })

static struct pci_dev *pdev;
static struct device *dev;
static struct iommu_domain *domain;
static struct page **pages;
static struct sg_table *tables;
static int *mapped;		/* per mapping: its DMA segments (0: not mapped) */
static unsigned int tables_per_map;
static bool lazy;
static bool amd;
static int case_no;

static void report(const char *name, enum result r)
{
	case_no++;
	if (r == PASS)
		pr_info("ok %d - %s\n", case_no, name);
	else if (r == SKIP)
		pr_info("ok %d - %s # SKIP %s\n", case_no, name, reason);
	else
		pr_info("not ok %d - %s # %s\n", case_no, name, reason);
}

/* Pages free in the buddy lists and on the per-CPU free lists. */
static long free_pages_now(void)
{
	long n = 0;
	int nid, cpu;

	for_each_online_node(nid) {
		pg_data_t *pgdat = NODE_DATA(nid);
		int z;

		for (z = 0; z < MAX_NR_ZONES; z++) {
			struct zone *zone = &pgdat->node_zones[z];

			if (!populated_zone(zone))
				continue;
			n += zone_page_state_snapshot(zone, NR_FREE_PAGES);
			for_each_online_cpu(cpu) {
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 14, 0)
				n += READ_ONCE(per_cpu_ptr(zone->per_cpu_pageset, cpu)->count);
#else
				n += READ_ONCE(per_cpu_ptr(zone->pageset, cpu)->pcp.count);
#endif
			}
		}
	}
	return n;
}

static struct pci_dev *find_disk(void)
{
	return pci_get_device(VIRTIO_VENDOR, VIRTIO_BLK_MODERN, NULL);
}

static int map_one(unsigned int k)
{
	int n = dma_map_sg(dev, tables[k].sgl, npages, DMA_BIDIRECTIONAL);

	if (n <= 0)
		return -ENOMEM;
	mapped[k] = n;
	return 0;
}

/*
 * The IOVA of each page of mapping k, from its DMA segments (the first
 * mapped[k] entries of the scatterlist): 5.10's Intel driver gives each
 * page a segment of its own, dma-iommu (the Intel driver from 5.11, AMD)
 * merges contiguous IOVA into one.  Returns the pages covered.
 */
static unsigned int page_iovas(unsigned int k, dma_addr_t *out)
{
	struct scatterlist *sg;
	unsigned int i, p = 0, off;

	for_each_sg(tables[k].sgl, sg, mapped[k], i)
		for (off = 0; off < sg_dma_len(sg) && p < npages; off += PAGE_SIZE)
			out[p++] = sg_dma_address(sg) + off;
	return p;
}

static void unmap_one(unsigned int k)
{
	if (!mapped[k])
		return;
	dma_unmap_sg(dev, tables[k].sgl, npages, DMA_BIDIRECTIONAL);
	mapped[k] = 0;
}

static void unmap_all(void)
{
	unsigned int k;

	for (k = 0; k < maps; k++)
		unmap_one(k);
}

static int map_all(void)
{
	unsigned int k;

	for (k = 0; k < maps; k++) {
		if (map_one(k)) {
			unmap_all();
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Wait (up to FLUSH_WAIT_MS) until the free pages are at least `want`;
 * returns the last count.  Lazy mode: the flush queue's timer (10 ms in
 * 5.10) flushes the IOTLB and frees the queued page-table pages.
 */
static long wait_free(long want, unsigned int *waited)
{
	long now = free_pages_now();

	for (*waited = 0; now < want && *waited < FLUSH_WAIT_MS; *waited += 10) {
		msleep(10);
		now = free_pages_now();
	}
	return now;
}

/* 1 + the first page of iova[] that still translates; 0: none does. */
static int first_translating(const dma_addr_t *iova)
{
	unsigned int i;

	for (i = 0; i < npages; i++)
		if (iommu_iova_to_phys(domain, iova[i]))
			return i + 1;
	return 0;
}

static int setup(void)
{
	unsigned int i, k;
	struct scatterlist *sg;

	pages = kcalloc(npages, sizeof(*pages), GFP_KERNEL);
	tables = kcalloc(maps, sizeof(*tables), GFP_KERNEL);
	mapped = kcalloc(maps, sizeof(*mapped), GFP_KERNEL);
	if (!pages || !tables || !mapped)
		return -ENOMEM;
	for (i = 0; i < npages; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		if (!pages[i])
			return -ENOMEM;
		/* a pattern, so that a stray DMA write would at least be visible */
		memset(page_address(pages[i]), i & 0xff, PAGE_SIZE);
	}
	for (k = 0; k < maps; k++) {
		if (sg_alloc_table(&tables[k], npages, GFP_KERNEL))
			return -ENOMEM;
		for_each_sg(tables[k].sgl, sg, npages, i)
			sg_set_page(sg, pages[i], PAGE_SIZE, 0);
	}
	return 0;
}

static void teardown(void)
{
	unsigned int i, k;

	if (mapped)
		unmap_all();
	if (tables)
		for (k = 0; k < maps; k++)
			sg_free_table(&tables[k]);
	if (pages)
		for (i = 0; i < npages; i++)
			if (pages[i])
				__free_page(pages[i]);
	kfree(pages);
	kfree(tables);
	kfree(mapped);
	pages = NULL;
	tables = NULL;
	mapped = NULL;
}

/* ---- the cases ------------------------------------------------------------- */

static enum result case_enabled_amd(void)
{
#if IS_ENABLED(CONFIG_AMD_IOMMU)
#if IS_ENABLED(CONFIG_INTEL_IOMMU)
	if (intel_iommu_enabled)
		return FAILED("mode=amd but the Intel driver is active (intel_iommu_enabled)");
#endif
	if (!iommu_present(&pci_bus_type))
		return FAILED("CONFIG_AMD_IOMMU=y but no IOMMU driver serves the PCI bus (no -device amd-iommu, or AMD-Vi did not initialise)");
	return PASS;
#else
	return SKIPPED("CONFIG_AMD_IOMMU is not set");
#endif
}

static enum result case_enabled(void)
{
	if (amd)
		return case_enabled_amd();
#if IS_ENABLED(CONFIG_INTEL_IOMMU)
	if (!intel_iommu_enabled)
		return FAILED("CONFIG_INTEL_IOMMU=y but intel_iommu_enabled is 0 (DMAR not active: no -device intel-iommu, or intel_iommu=on missing)");
	return PASS;
#else
	return SKIPPED("CONFIG_INTEL_IOMMU is not set");
#endif
}

/* The device's DMA goes through the IOMMU: before 6.10 through the
 * dma-iommu dma_map_ops; from 6.10 ("iommu/dma: Make IOMMU DMA ops direct
 * calls") dma-iommu is called directly and dev->dma_iommu says so. */
static bool dma_through_iommu(struct device *d)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0) && IS_ENABLED(CONFIG_IOMMU_DMA)
	return d->dma_iommu;
#else
	return get_dma_ops(d) != NULL;
#endif
}

/* A translated DMA domain: IOMMU_DOMAIN_DMA, or from 5.15 its lazy variant
 * with a flush queue (IOMMU_DOMAIN_DMA_FQ, "DMA-FQ" in sysfs). */
static bool dma_domain(const struct iommu_domain *d)
{
#ifdef IOMMU_DOMAIN_DMA_FQ
	if (d->type == IOMMU_DOMAIN_DMA_FQ)
		return true;
#endif
	return d->type == IOMMU_DOMAIN_DMA;
}

static enum result case_translated(void)
{
	pdev = find_disk();
	if (!pdev)
		return FAILED("no virtio-blk PCI disk (%04x:%04x)", VIRTIO_VENDOR, VIRTIO_BLK_MODERN);
	dev = &pdev->dev;
	domain = iommu_get_domain_for_dev(dev);
	pr_info("# device %s, iommu group %d, domain type %d (DMA %d), %s DMA ops\n", pci_name(pdev),
		dev->iommu_group ? iommu_group_id(dev->iommu_group) : -1,
		domain ? (int)domain->type : -1, IOMMU_DOMAIN_DMA,
		dma_through_iommu(dev) ? "IOMMU" : "direct");
	if (!dev->iommu_group)
		return FAILED("%s is in no IOMMU group", pci_name(pdev));
	if (!domain)
		return FAILED("%s has no IOMMU domain", pci_name(pdev));
	if (!dma_domain(domain))
		return FAILED("%s's domain has type %u, not DMA (%u) or DMA-FQ: passthrough?",
			      pci_name(pdev), domain->type, IOMMU_DOMAIN_DMA);
	if (!dma_through_iommu(dev))
		return FAILED("%s uses direct DMA (not through dma-iommu)", pci_name(pdev));
	return PASS;
}

static long held_free;		/* free pages while the mappings are held */
static dma_addr_t *iovas;	/* per page of mapping 0 */

static enum result case_built(void)
{
	long before, want;
	unsigned int k, i, bad = 0, got;
	dma_addr_t first = 0, *each;

	if (npages < LEAF_SPAN || npages % LEAF_SPAN)
		return FAILED("npages %u is not a multiple of %u", npages, LEAF_SPAN);
	tables_per_map = npages / LEAF_SPAN;
	if (setup())
		return FAILED("no memory for %u pages and %u scatterlists", npages, maps);
	iovas = kcalloc(npages, sizeof(*iovas), GFP_KERNEL);
	if (!iovas)
		return FAILED("no memory");
	/*
	 * A first round builds what stays: the upper-level tables of the IOVA
	 * region, the IOVA slab.  Then the flush queue is left to drain.
	 */
	if (map_all())
		return FAILED("dma_map_sg() of %u pages failed", npages);
	unmap_all();
	msleep(100);

	before = free_pages_now();
	if (map_all())
		return FAILED("dma_map_sg() of %u pages failed", npages);
	held_free = free_pages_now();
	each = kcalloc(npages, sizeof(*each), GFP_KERNEL);
	if (!each)
		return FAILED("no memory");
	for (k = 0; k < maps; k++) {
		dma_addr_t *iv = k == 0 ? iovas : each;

		got = page_iovas(k, iv);
		if (got != npages) {
			kfree(each);
			return FAILED("mapping %u: its %d DMA segments cover %u of %u pages",
				      k, mapped[k], got, npages);
		}
		for (i = 0; i < npages; i++) {
			phys_addr_t phys = iommu_iova_to_phys(domain, iv[i]);

			if (phys != page_to_phys(pages[i]) && bad++ == 0)
				pr_info("# mapping %u page %u: IOVA %pad translates to %pa, not %llx\n",
					k, i, &iv[i], &phys,
					(unsigned long long)page_to_phys(pages[i]));
		}
		if (k == 0)
			first = iv[0];
	}
	kfree(each);
	pr_info("# mapping 0: %d DMA segment(s) for %u pages\n", mapped[0], npages);
	want = (long)maps * tables_per_map;
	pr_info("# %u mappings of %u pages (mapping 0 at IOVA %pad): free pages %ld -> %ld, %ld leaf tables expected\n",
		maps, npages, &first, before, held_free, want);
	if (bad)
		return FAILED("%u of %u pages do not translate to their page", bad, maps * npages);
	if (first & ((dma_addr_t)LEAF_SPAN * PAGE_SIZE - 1))
		return FAILED("IOVA %pad of a %u-page mapping is not 2 MiB aligned", &first, npages);
	if (before - held_free < want * 3 / 4)
		return FAILED("free pages dropped by %ld while %ld leaf tables are in use",
			      before - held_free, want);
	return PASS;
}

static enum result case_freed(void)
{
	long now, later, want = (long)maps * tables_per_map;
	unsigned long flags;
	unsigned int k, waited;
	int still;

	/* Unmap with interrupts off: the flush timer cannot run on this CPU. */
	local_irq_save(flags);
	for (k = 0; k < maps; k++)
		unmap_one(k);
	now = free_pages_now();
	local_irq_restore(flags);
	later = wait_free(held_free + want * 3 / 4, &waited);
	pr_info("# unmapped: free pages %ld -> %ld at once -> %ld after %u ms (%ld leaf tables, mode %s)\n",
		held_free, now, later, waited, want, *mode ? mode : "?");
	still = first_translating(iovas);
	if (still)
		return FAILED("page %d of mapping 0 still translates after dma_unmap_sg()", still - 1);
	if (!lazy && now - held_free < want * 3 / 4)
		return FAILED("strict: only %ld of %ld page-table pages were free right after dma_unmap_sg()",
			      now - held_free, want);
	if (lazy && now - held_free > want / 4)
		return FAILED("lazy: %ld of %ld page-table pages were free right after dma_unmap_sg() (no flush queue?)",
			      now - held_free, want);
	if (later - held_free < want * 3 / 4)
		return FAILED("%s: only %ld of %ld page-table pages came back %u ms after dma_unmap_sg()",
			      lazy ? "lazy" : "strict", later - held_free, want, waited);
	return PASS;
}

static enum result case_no_leak(void)
{
	long start, end, churn = (long)maps * tables_per_map * rounds;
	unsigned int r, waited;

	msleep(50);
	start = free_pages_now();
	for (r = 0; r < rounds; r++) {
		if (map_all())
			return FAILED("dma_map_sg() failed in round %u", r);
		unmap_all();
	}
	end = wait_free(start, &waited);
	pr_info("# %u rounds of %u mappings (%ld leaf tables built and freed): free pages %ld -> %ld after %u ms\n",
		rounds, maps, churn, start, end, waited);
	if (start - end > (long)tolerance)
		return FAILED("%ld pages missing after %u rounds that built and freed %ld page-table pages (leaked; tolerance %u)",
			      start - end, rounds, churn, tolerance);
	return PASS;
}

#if IS_ENABLED(CONFIG_AMD_IOMMU)

/* ---- mode=amd: an unmanaged domain of the AMD driver ----------------------- */

#define LEAF_BYTES	((unsigned long)LEAF_SPAN * PAGE_SIZE)	/* 2 MiB */
#define AMD_BASE	(1UL << 30)	/* IOVA of the first range */
#define AMD_PROT	(IOMMU_READ | IOMMU_WRITE)

static struct iommu_domain *udom;
static struct page *big;		/* 2 MiB, mapped over every range */
static struct page **small;		/* one 4 KiB page per range */
static long amd_start;			/* free pages before the domain existed */
static long amd_built;			/* free pages with set 0's tables built */

/* The IOVA of range r of set `set` (sets of `ranges` ranges, 2 MiB each). */
static unsigned long range_iova(unsigned int set, unsigned int r)
{
	return AMD_BASE + ((unsigned long)set * ranges + r) * LEAF_BYTES;
}

/* The warm-up range: the last 2 MiB of the 1 GiB the sets lie in. */
#define AMD_WARM	(AMD_BASE + (1UL << 30) - LEAF_BYTES)

static int map_small(struct iommu_domain *d, unsigned int set)
{
	unsigned int r;
	int ret;

	for (r = 0; r < ranges; r++) {
		ret = iommu_map_compat(d, range_iova(set, r), page_to_phys(small[r]),
				       PAGE_SIZE, AMD_PROT);
		if (ret)
			return ret;
	}
	return 0;
}

static void unmap_set(struct iommu_domain *d, unsigned int set, size_t size)
{
	unsigned int r;

	for (r = 0; r < ranges; r++)
		iommu_unmap(d, range_iova(set, r), size);
}

static int map_large(struct iommu_domain *d, unsigned int set)
{
	unsigned int r;
	int ret;

	for (r = 0; r < ranges; r++) {
		ret = iommu_map_compat(d, range_iova(set, r), page_to_phys(big), LEAF_BYTES,
				       AMD_PROT);
		if (ret)
			return ret;
	}
	return 0;
}

static int amd_setup(void)
{
	unsigned int r;

	if (2 * ranges * LEAF_BYTES > AMD_WARM - AMD_BASE)
		return -EINVAL;
	small = kcalloc(ranges, sizeof(*small), GFP_KERNEL);
	if (!small)
		return -ENOMEM;
	for (r = 0; r < ranges; r++) {
		small[r] = alloc_page(GFP_KERNEL);
		if (!small[r])
			return -ENOMEM;
	}
	big = alloc_pages(GFP_KERNEL, get_order(LEAF_BYTES));
	return big ? 0 : -ENOMEM;
}

static void amd_teardown(void)
{
	unsigned int r;

	if (udom)
		iommu_domain_free(udom);
	udom = NULL;
	if (small)
		for (r = 0; r < ranges; r++)
			if (small[r])
				__free_page(small[r]);
	kfree(small);
	small = NULL;
	if (big)
		__free_pages(big, get_order(LEAF_BYTES));
	big = NULL;
}

static enum result case_built_amd(void)
{
	unsigned int r, bad = 0;
	long before;
	int ret;

	if (amd_setup())
		return FAILED("no memory for %u pages and a 2 MiB page (or ranges %u too large)",
			      ranges, ranges);
	msleep(50);
	amd_start = free_pages_now();
	udom = iommu_domain_alloc(&pci_bus_type);
	if (!udom)
		return FAILED("iommu_domain_alloc(&pci_bus_type) returned NULL");
	/* the upper-level tables of the 1 GiB the ranges lie in */
	ret = iommu_map_compat(udom, AMD_WARM, page_to_phys(small[0]), PAGE_SIZE, AMD_PROT);
	if (ret)
		return FAILED("iommu_map() of the warm-up page at %lx: %d", AMD_WARM, ret);
	before = free_pages_now();
	ret = map_small(udom, 0);
	if (ret)
		return FAILED("iommu_map() of a 4 KiB page: %d", ret);
	amd_built = free_pages_now();
	for (r = 0; r < ranges; r++) {
		phys_addr_t phys = iommu_iova_to_phys(udom, range_iova(0, r));

		if (phys != page_to_phys(small[r]) && bad++ == 0)
			pr_info("# range %u: IOVA %lx translates to %pa, not %llx\n", r,
				range_iova(0, r), &phys, (unsigned long long)page_to_phys(small[r]));
	}
	pr_info("# amd: %u ranges of 2 MiB from IOVA %lx, a 4 KiB page each: free pages %ld -> %ld (%u leaf tables expected)\n",
		ranges, range_iova(0, 0), before, amd_built, ranges);
	if (bad)
		return FAILED("%u of %u pages do not translate to their page", bad, ranges);
	if (before - amd_built < (long)ranges * 3 / 4)
		return FAILED("free pages dropped by %ld while %u leaf tables are in use",
			      before - amd_built, ranges);
	return PASS;
}

static enum result case_large_amd(void)
{
	long unmapped, now;
	unsigned int r, bad = 0;
	int ret;

	unmap_set(udom, 0, PAGE_SIZE);
	unmapped = free_pages_now();
	if (iommu_iova_to_phys(udom, range_iova(0, 0)))
		return FAILED("IOVA %lx still translates after iommu_unmap()", range_iova(0, 0));
	ret = map_large(udom, 0);
	if (ret)
		return FAILED("iommu_map() of a 2 MiB page: %d", ret);
	now = free_pages_now();
	for (r = 0; r < ranges; r++) {
		unsigned long off = (r % LEAF_SPAN) * PAGE_SIZE;
		phys_addr_t phys = iommu_iova_to_phys(udom, range_iova(0, r) + off);

		if (phys != page_to_phys(big) + off && bad++ == 0)
			pr_info("# range %u: IOVA %lx translates to %pa, not %llx\n", r,
				range_iova(0, r) + off, &phys,
				(unsigned long long)(page_to_phys(big) + off));
	}
	pr_info("# amd: 4 KiB pages unmapped: free pages %ld -> %ld (tables kept); 2 MiB pages mapped over them: -> %ld (%u leaf tables to give back)\n",
		amd_built, unmapped, now, ranges);
	if (bad)
		return FAILED("%u of %u 2 MiB pages do not translate", bad, ranges);
	if (now - unmapped < (long)ranges * 3 / 4)
		return FAILED("only %ld of %u leaf tables came back when 2 MiB pages replaced them",
			      now - unmapped, ranges);
	return PASS;
}

static enum result case_domain_free_amd(void)
{
	long before, mid, end;
	int ret;

	if (!udom)
		return FAILED("no domain (pagetables_built did not make one)");
	before = free_pages_now();
	ret = map_small(udom, 1);
	if (ret)
		return FAILED("iommu_map() of a 4 KiB page in the second set: %d", ret);
	mid = free_pages_now();
	iommu_domain_free(udom);
	udom = NULL;
	end = free_pages_now();
	pr_info("# amd: a second set of %u leaf tables: free pages %ld -> %ld; iommu_domain_free(): -> %ld (%ld before the domain)\n",
		ranges, before, mid, end, amd_start);
	if (before - mid < (long)ranges * 3 / 4)
		return FAILED("free pages dropped by %ld while %u more leaf tables are in use",
			      before - mid, ranges);
	if (end - mid < (long)ranges * 3 / 4)
		return FAILED("only %ld of %u leaf tables came back at iommu_domain_free()",
			      end - mid, ranges);
	if (amd_start - end > (long)tolerance)
		return FAILED("%ld pages missing after iommu_domain_free() (leaked; tolerance %u)",
			      amd_start - end, tolerance);
	return PASS;
}

static enum result case_no_leak_amd(void)
{
	long start, end, churn = 2L * ranges * rounds;
	struct iommu_domain *d;
	unsigned int n;
	int ret = 0;

	msleep(50);
	start = free_pages_now();
	for (n = 0; n < rounds && !ret; n++) {
		d = iommu_domain_alloc(&pci_bus_type);
		if (!d)
			return FAILED("iommu_domain_alloc() failed in round %u", n);
		ret = iommu_map_compat(d, AMD_WARM, page_to_phys(small[0]), PAGE_SIZE, AMD_PROT);
		if (!ret)
			ret = map_small(d, 0);
		if (!ret) {
			unmap_set(d, 0, PAGE_SIZE);
			ret = map_large(d, 0);
		}
		if (!ret) {
			unmap_set(d, 0, LEAF_BYTES);
			ret = map_small(d, 1);
		}
		iommu_domain_free(d);
	}
	if (ret)
		return FAILED("iommu_map() failed in round %u: %d", n - 1, ret);
	end = free_pages_now();
	pr_info("# amd: %u rounds of a domain's life (%ld leaf tables built and freed): free pages %ld -> %ld\n",
		rounds, churn, start, end);
	if (start - end > (long)tolerance)
		return FAILED("%ld pages missing after %u rounds that built and freed %ld page-table pages (leaked; tolerance %u)",
			      start - end, rounds, churn, tolerance);
	return PASS;
}

#else /* !CONFIG_AMD_IOMMU: no PCI IOMMU driver to allocate a domain of */

#define AMD_NOT_SET SKIPPED("CONFIG_AMD_IOMMU is not set")
static enum result case_built_amd(void) { return AMD_NOT_SET; }
static enum result case_large_amd(void) { return AMD_NOT_SET; }
static enum result case_domain_free_amd(void) { return AMD_NOT_SET; }
static enum result case_no_leak_amd(void) { return AMD_NOT_SET; }
static void amd_teardown(void) { }

#endif /* CONFIG_AMD_IOMMU */

static int __init slabconv_iommu_init(void)
{
	static const char * const intel_names[] = {
		"iommu_enabled", "device_translated", "pagetables_built",
		"pagetables_freed_on_unmap", "pagetables_no_leak",
	};
	static const char * const amd_names[] = {
		"iommu_enabled", "device_translated", "pagetables_built",
		"large_page_frees_tables", "domain_free_frees_tables", "pagetables_no_leak",
	};
	const char * const *names;
	size_t ncases;
	enum result r;
	bool go = true;
	int i;

	lazy = !strcmp(mode, "lazy");
	amd = !strcmp(mode, "amd");
	names = amd ? amd_names : intel_names;
	ncases = amd ? ARRAY_SIZE(amd_names) : ARRAY_SIZE(intel_names);
	pr_info("KTAP version 1\n");
	pr_info("# slabconv_iommu: config intel %d, amd %d, mode %s\n",
		IS_ENABLED(CONFIG_INTEL_IOMMU), IS_ENABLED(CONFIG_AMD_IOMMU), *mode ? mode : "-");
	pr_info("1..%zu\n", ncases);
	for (i = 0; i < ncases; i++) {
		if (!go) {
			char why[REASON_LEN];

			strscpy(why, reason, sizeof(why));	/* SKIPPED() writes reason */
			report(names[i], SKIPPED("%s", why));
			continue;
		}
		switch (i) {
		case 0: r = case_enabled(); break;
		case 1: r = case_translated(); break;
		case 2: r = amd ? case_built_amd() : case_built(); break;
		case 3: r = amd ? case_large_amd() : case_freed(); break;
		case 4: r = amd ? case_domain_free_amd() : case_no_leak(); break;
		default: r = case_no_leak_amd(); break;
		}
		report(names[i], r);
		if (r != PASS && i < 3) {
			/*
			 * The cases after these need them; say why they did not
			 * run.  The later cases need only case 3's mappings:
			 * each names its own failure.
			 */
			if (r == FAIL)
				snprintf(reason, REASON_LEN, "%s failed", names[i]);
			go = false;
		}
	}
	teardown();
	amd_teardown();
	kfree(iovas);
	iovas = NULL;
	if (pdev)
		pci_dev_put(pdev);
	pdev = NULL;
	pr_info("# slabconv_iommu: done\n");
	return 0;
}

static void __exit slabconv_iommu_exit(void)
{
}

module_init(slabconv_iommu_init);
module_exit(slabconv_iommu_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("slabconv in-guest IOMMU page-table checks (built, translated, freed, not leaked)");
