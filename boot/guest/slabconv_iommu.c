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
#include <linux/intel-iommu.h>
#endif

static char *mode = "";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "the unmap path the kernel must take: 'strict' or 'lazy' (default: not checked)");

static unsigned int npages = 1024;
module_param(npages, uint, 0444);
MODULE_PARM_DESC(npages, "pages per mapping (a multiple of 512: whole 2 MiB leaf tables)");

static unsigned int maps = 32;
module_param(maps, uint, 0444);
MODULE_PARM_DESC(maps, "mappings held at once");

static unsigned int rounds = 16;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "rounds of map all / unmap all for the leak check");

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
static bool *mapped;
static unsigned int tables_per_map;
static bool lazy;
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
	mapped[k] = true;
	return 0;
}

static void unmap_one(unsigned int k)
{
	if (!mapped[k])
		return;
	dma_unmap_sg(dev, tables[k].sgl, npages, DMA_BIDIRECTIONAL);
	mapped[k] = false;
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

static enum result case_enabled(void)
{
#if IS_ENABLED(CONFIG_INTEL_IOMMU)
	if (!intel_iommu_enabled)
		return FAILED("CONFIG_INTEL_IOMMU=y but intel_iommu_enabled is 0 (DMAR not active: no -device intel-iommu, or intel_iommu=on missing)");
	return PASS;
#else
	return SKIPPED("CONFIG_INTEL_IOMMU is not set");
#endif
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
		get_dma_ops(dev) ? "IOMMU" : "direct");
	if (!dev->iommu_group)
		return FAILED("%s is in no IOMMU group", pci_name(pdev));
	if (!domain)
		return FAILED("%s has no IOMMU domain", pci_name(pdev));
	if (domain->type != IOMMU_DOMAIN_DMA)
		return FAILED("%s's domain has type %u, not DMA (%u): passthrough?",
			      pci_name(pdev), domain->type, IOMMU_DOMAIN_DMA);
	if (!get_dma_ops(dev))
		return FAILED("%s uses direct DMA (no IOMMU DMA ops)", pci_name(pdev));
	return PASS;
}

static long held_free;		/* free pages while the mappings are held */
static dma_addr_t *iovas;	/* per page of mapping 0 */

static enum result case_built(void)
{
	long before, want;
	unsigned int k, i, bad = 0;
	struct scatterlist *sg;
	dma_addr_t first = 0;

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
	for (k = 0; k < maps; k++) {
		for_each_sg(tables[k].sgl, sg, npages, i) {
			phys_addr_t phys = iommu_iova_to_phys(domain, sg_dma_address(sg));

			if (k == 0)
				iovas[i] = sg_dma_address(sg);
			if (phys != page_to_phys(pages[i]) && bad++ == 0)
				pr_info("# mapping %u page %u: IOVA %pad translates to %pa, not %llx\n",
					k, i, &sg_dma_address(sg), &phys,
					(unsigned long long)page_to_phys(pages[i]));
		}
		if (k == 0)
			first = sg_dma_address(tables[0].sgl);
	}
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

static int __init slabconv_iommu_init(void)
{
	static const char * const names[] = {
		"iommu_enabled", "device_translated", "pagetables_built",
		"pagetables_freed_on_unmap", "pagetables_no_leak",
	};
	enum result r;
	bool go = true;
	int i;

	lazy = !strcmp(mode, "lazy");
	pr_info("KTAP version 1\n");
	pr_info("# slabconv_iommu: config intel %d, mode %s\n",
		IS_ENABLED(CONFIG_INTEL_IOMMU), *mode ? mode : "-");
	pr_info("1..%zu\n", ARRAY_SIZE(names));
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (!go) {
			report(names[i], SKIPPED("%s", reason));
			continue;
		}
		switch (i) {
		case 0: r = case_enabled(); break;
		case 1: r = case_translated(); break;
		case 2: r = case_built(); break;
		case 3: r = case_freed(); break;
		default: r = case_no_leak(); break;
		}
		report(names[i], r);
		if (r != PASS && i < 3) {
			/*
			 * The cases after these need them; say why they did not
			 * run.  Cases 4 and 5 need only case 3's mappings: each
			 * names its own failure.
			 */
			if (r == FAIL)
				snprintf(reason, REASON_LEN, "%s failed", names[i]);
			go = false;
		}
	}
	teardown();
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
