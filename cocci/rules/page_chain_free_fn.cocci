// SPDX-License-Identifier: GPL-2.0-only
/// Remove the functions that freed a page chain by walking page->freelist.
///
/// "iommu: Use put_pages_list": a void F(struct page *FL) whose body reads
/// ->freelist (dma_free_pagelist(), AMD's free_page_list()) is deleted; its
/// callers call put_pages_list() after page_chain_holder.cocci and
/// page_chain_queue.cocci.  Assumes no other caller is left (the build
/// would say so).
//
// Confidence: High
// Options: --no-includes

virtual patch

@pcf_free depends on patch@
identifier F, FL;
expression E;
@@
- void F(struct page *FL) { <+... E->freelist ...+> }

