// SPDX-License-Identifier: GPL-2.0-only
/// Make function `fn` return a `struct slab *` instead of a `struct page *`,
/// without ever converting a page that can be NULL with page_slab().
///
/// The step "Convert fn() to return a struct slab".  page_slab() reads
/// page->compound_head, so a returned page may go through it only where it
/// cannot be NULL.  The functions converted are `fn` and, when `fn`
/// returns another function's result (`return g(...);`, g defined in the
/// same file and returning a page), g as well: its result is fn's, so g
/// returns the slab and fn passes it on unchanged.  In each converted
/// function, every `return E;`:
///   return NULL;              unchanged
///   return g(...);            unchanged (g is converted too)
///   return slab_page(S);      return S;  (the slab itself; NULL stays NULL)
///   return x;                 return page_slab(x);  where x cannot be NULL
///                             there: either the function never tests x
///                             against NULL nor assigns it from a function
///                             that returns NULL, or every path to the
///                             return passes a NULL test of x after x's
///                             last assignment (`if (!x) return NULL;`,
///                             `if (!x) goto out;`)
///   return h(...);            return page_slab(h(...));  where h maps an
///                             address or pfn to its page and never
///                             returns NULL (virt_to_head_page() ...)
///   any other                 left as it is and reported as
///                             "SLABCONV-REFUSE: file:line: ..." (the
///                             driver stops with it): a value that can be
///                             NULL, or one the rule cannot prove is not.
/// The return type of each converted function's definition and prototypes
/// becomes `struct slab *`; every call `fn(args)` becomes
/// `slab_page(fn(args))` (a cast: NULL stays NULL), so callers that still
/// hold a page keep compiling; slab_fold.cocci and the conversion of a
/// caller's local (slab_var.cocci) then fold the round trip away.
///
/// A NULL test whose then-branch jumps forward to the return itself
/// (`if (!x) goto out; ... out: return x;`) is taken for one that leaves;
/// verify's NULL-safety check (slab_null.cocci) catches that shape in the
/// generated series.
//
// Confidence: High (only return types and returned values change; a
// returned value that may be NULL is refused, never wrapped)
// Options: --no-includes -D fn=<function>  (give the callers' files too)

virtual patch

@initialize:python@
@@
# map an address or pfn to its page: never NULL
NEVER_NULL = ("virt_to_head_page", "virt_to_page", "pfn_to_page", "phys_to_page",
              "compound_head", "kmap_to_page", "vmalloc_to_page", "page_slab",
              "slab_page")
targets = set()         # the functions converted: fn and those whose result it returns
nullable = set()        # functions of the file that return NULL
maybe_null = set()      # (function, local) tested against NULL or taken from one
refused = set()         # returns left alone: (file, line, column)

@script:python@
fn << virtual.fn;
@@
targets.add(fn)

// fn returns g's result: g returns the slab too
@chain depends on patch@
identifier virtual.fn, g;
expression list es;
@@
 struct page *fn(...) { <+... return g(es); ...+> }

@chained depends on chain@
identifier chain.g;
@@
 struct page *g(...) { ... }

@script:python depends on chained@
g << chain.g;
@@
targets.add(g)

// functions of this file that can return NULL
@retnull depends on patch@
identifier rn;
type T;
@@
 T *rn(...) { <+... return NULL; ...+> }

@script:python depends on retnull@
rn << retnull.rn;
@@
nullable.add(rn)

// locals the converted functions test against NULL or take from a
// function that can return NULL: at a return they need a NULL test first
@nulltest depends on patch@
identifier t1 : script:python() { t1 in targets };
identifier x1;
identifier n1 : script:python() { n1 in nullable };
expression list es;
expression E;
position p1;
@@
 t1(...) { <+...
(
 !x1@p1
|
 x1@p1 == NULL
|
 NULL == x1@p1
|
 x1@p1 != NULL
|
 x1@p1 && E
|
 x1@p1 = n1(es)
)
 ...+> }

@script:python depends on nulltest@
x1 << nulltest.x1;
p1 << nulltest.p1;
@@
maybe_null.add((p1[0].current_element, x1))

@ifnull depends on patch@
identifier t2 : script:python() { t2 in targets };
identifier x2;
statement S;
position p2;
@@
 t2(...) { <+... if (x2@p2) S ...+> }

@script:python depends on ifnull@
x2 << ifnull.x2;
p2 << ifnull.p2;
@@
maybe_null.add((p2[0].current_element, x2))

// a path to `return x` with no NULL test of x after its last assignment
@unsafe exists@
identifier t3 : script:python() { t3 in targets };
identifier x3;
expression E;
position p3;
@@
 t3(...) {
(
 ... when != \(!x3\|x3 == NULL\|NULL == x3\)
 return x3@p3;
|
 ... when any
 x3 = E;
 ... when != \(!x3\|x3 == NULL\|NULL == x3\)
 return x3@p3;
)
 }

@script:python depends on unsafe@
x3 << unsafe.x3;
p3 << unsafe.p3;
@@
if (p3[0].current_element, x3) in maybe_null:
    refused.add((p3[0].file, p3[0].line, p3[0].column))
    print("SLABCONV-REFUSE: %s:%s: %s() returns %s, which can be NULL there: "
          "page_slab() would dereference it; test it for NULL on every path "
          "to this return, or convert where the page comes from"
          % (p3[0].file, p3[0].line, p3[0].current_element, x3))

// a returned call that none of the forms below takes
@other depends on patch@
identifier t4 : script:python() { t4 in targets };
identifier c4;
expression list es;
position p4;
@@
 t4(...) { <+... return c4@p4(es); ...+> }

@script:python depends on other@
c4 << other.c4;
p4 << other.p4;
@@
if c4 not in targets and c4 not in NEVER_NULL:
    refused.add((p4[0].file, p4[0].line, p4[0].column))
    print("SLABCONV-REFUSE: %s:%s: %s() returns the result of %s(), which may "
          "be NULL: page_slab() would dereference it; convert %s() as well, "
          "or test the result for NULL first"
          % (p4[0].file, p4[0].line, p4[0].current_element, c4, c4))

@def depends on patch@
identifier t5 : script:python() { t5 in targets };
identifier g5 : script:python() { g5 in targets };
expression E, S;
expression list es;
position q : script:python() { (q[0].file, q[0].line, q[0].column) not in refused };
@@
-struct page *
+struct slab *
 t5(...)
 {
 <...
(
 return NULL;
|
 return g5(es);
|
-return slab_page(S);
+return S;
|
-return E@q;
+return page_slab(E);
)
 ...>
 }

@proto depends on patch@
identifier t6 : script:python() { t6 in targets };
@@
-struct page *
+struct slab *
 t6(...);

// callers get the page back with slab_page(), a cast: NULL stays NULL;
// a converted function that returns another one's result passes it on
@call_in depends on def@
identifier t7 : script:python() { t7 in targets };
identifier e7 : script:python() { e7 in targets };
expression list es;
@@
 e7(...) { <...
(
 return t7(es);
|
-t7(es)
+slab_page(t7(es))
)
 ...> }

@call_out depends on def@
identifier t9 : script:python() { t9 in targets };
identifier e9 : script:python() { e9 not in targets };
expression list es;
type T;
@@
 T e9(...) { <...
-t9(es)
+slab_page(t9(es))
 ...> }
