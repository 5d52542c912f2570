// SPDX-License-Identifier: GPL-2.0-only
/// Remove the unused `struct page *` parameter of function `fn`.
///
/// "mm/slub: Remove struct page argument to next_freelist_entry()" and
/// "... from setup_object()": a page (or slab) parameter that the body never
/// reads is dropped from every definition (including an #ifdef'd stub) and
/// prototype, and the argument at its position is dropped from every call.
/// A definition whose body uses the parameter is left alone, and then its
/// calls are too, so the step changes nothing and the driver says so.
//
// Confidence: High (the parameter must be unused in every definition)
// Options: --no-includes -D fn=<function>

virtual patch

@def depends on patch@
identifier virtual.fn;
identifier pg;
parameter list[n] ps;
type T;
@@
 T fn(ps,
-struct page *pg,
 ...)
 {
 ... when != pg
 }

@empty depends on patch@
identifier virtual.fn;
identifier pg;
parameter list[def.n] ps;
type T;
@@
 T fn(ps,
-struct page *pg,
 ...)
 { }

@proto depends on def@
identifier virtual.fn;
identifier pg;
parameter list[def.n] ps;
type T;
@@
 T fn(ps,
-struct page *pg,
 ...);

@call depends on def@
identifier virtual.fn;
expression list[def.n] es;
expression E;
@@
 fn(es,
-E,
 ...)
