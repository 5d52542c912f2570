// SPDX-License-Identifier: GPL-2.0-only
/// Adapt the callers of function `fn` whose parameter became a struct slab.
///
/// Run after slab_param.cocci (the definition of fn already takes
/// `struct slab *` or `const struct slab *`), in the same spatch run over
/// the definition's file and every caller's file: the position n of the
/// converted parameter is taken from the definition, and in every call
///   fn(a0, ..., a(n-1), E, ...)   -> fn(a0, ..., a(n-1), page_slab(E), ...)
///   fn(..., slab_page(X), ...)    -> fn(..., X, ...)   (already a slab)
/// In a file without the definition (fn is defined in a header, say), the
/// position comes from -D argpos=n, which the driver reads off the
/// definition before converting it.
/// The round trips this leaves (page_slab(slab_page(x)), page_slab(
/// virt_to_head_page(x)), ...) are folded by slab_fold.cocci, which the
/// driver runs after it in the same spatch run.
//
// Confidence: High (only arguments at the converted position are wrapped;
//  page_slab() is compound_head(), so a tail page is handled as before)
// Options: --no-includes -D fn=<function> [-D argpos=<n>]  (give the file
//  that defines fn together with the callers' files; argpos, counted from
//  0, is used only in files that do not define fn)

virtual patch

@def depends on patch@
identifier virtual.fn;
parameter list[n] ps;
identifier sl;
type T;
@@
(
 T fn(ps, struct slab *sl, ...) {...}
|
 T fn(ps, const struct slab *sl, ...) {...}
)

@call depends on def@
identifier virtual.fn;
expression list[def.n] es;
expression E;
@@
 fn(es,
(
- slab_page(E)
+ E
|
- E
+ page_slab(E)
)
 ,...)

// fn is defined elsewhere (a header): the position is given
@defined depends on patch@
identifier virtual.fn;
type T;
@@
 T fn(...) {...}

@call_elsewhere depends on patch && !defined@
identifier virtual.fn;
expression list[virtual.argpos] es;
expression E;
@@
 fn(es,
(
- slab_page(E)
+ E
|
- E
+ page_slab(E)
)
 ,...)
