// SPDX-License-Identifier: GPL-2.0-only
/// A page chain handed to the IOVA flush queue as its `unsigned long data`
/// is handed over as a ring of pages through page->lru without a list head.
///
/// 5.10 only (the seed's base has no such queue in the driver): intel_unmap()
/// queues its chain with queue_iova(..., (unsigned long)freelist), and the
/// queue's destructor, a void D(unsigned long data) whose body is
/// `struct page *FL = (struct page *)data; F(FL);` (F a chain-freeing
/// function, as in page_chain_holder.cocci), frees it later.  A list head
/// on the caller's stack cannot outlive the call, so the caller takes the
/// first page and unlinks the head (list_del) before queueing; the
/// destructor puts a head back in front of that page and calls
/// put_pages_list().  Assumes the queued variable is the chain local that
/// page_chain_holder.cocci turns into a LIST_HEAD, and that queue_iova()
/// calls appear only in a file that has such a destructor.
//
// Confidence: Moderate
// Options: --no-includes

virtual patch

@pcq_free depends on patch@
identifier F, FL;
expression E;
@@
void F(struct page *FL) { <+... E->freelist ...+> }

@pcq_dtor depends on patch@
identifier pcq_free.F, D, data, FL;
@@
void D(unsigned long data)
{
- struct page *FL = (struct page *)data;
-
- F(FL);
+ struct page *pg = (struct page *)data;
+ LIST_HEAD(pages);
+
+ if (!pg)
+ 	return;
+ /* The pages were queued as a ring without its head: put one back. */
+ list_add_tail(&pages, &pg->lru);
+ put_pages_list(&pages);
}

@pcq_q depends on pcq_dtor@
identifier X;
expression E1, E2, E3;
@@
+ struct page *pages = list_first_entry_or_null(&X, struct page, lru);
+
+ list_del(&X);
  queue_iova(E1, E2, E3,
- (unsigned long)X
+ (unsigned long)pages
  );
