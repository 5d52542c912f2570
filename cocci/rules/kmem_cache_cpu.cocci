// SPDX-License-Identifier: GPL-2.0-only
/// Convert the slab pointers of struct kmem_cache_cpu to struct slab.
///
/// "mm/slub: Convert kmem_cache_cpu to struct slab": the cpu slab
/// (`page` becomes `slab`) and the cpu partial list (`partial` keeps its
/// name) change type together, so that no conversion between page and slab
/// is needed on the fast paths.  Run after the locals that hold them have
/// been converted (slab_var.cocci), which left page_slab()/slab_page()
/// around every read and write of the fields; this rule removes them:
///   struct page *page; struct page *partial;  -> struct slab *slab, *partial
///   C->page = slab_page(X) / NULL / E         -> C->slab = X / NULL / page_slab(E)
///   page_slab(C->page)                        -> C->slab
///   page_slab(C->page = E)                    -> C->slab = page_slab(E)
///   C->page (elsewhere)                       -> slab_page(C->slab)
/// and the partial list, read through slub_percpu_partial(),
/// slub_percpu_partial_read_once(), this_cpu_read(X->cpu_slab->partial):
///   page_slab(K)                              -> K
///   K (where a page is still expected)        -> slab_page(K)
///   slub_set_percpu_partial(C, slab_page(X))  -> slub_set_percpu_partial(C, X)
///   this_cpu_cmpxchg(X->cpu_slab->partial, slab_page(A), slab_page(B))
///                                             -> this_cpu_cmpxchg(..., A, B)
/// C is an expression of type struct kmem_cache_cpu * or X->cpu_slab.
/// Tests of the pointers are narrowed afterwards by slab_fold.cocci.
///
/// No slab_page() of a K that is a macro some configuration defines as NULL
/// (-D nullable, from the nullable-macros directive: slub_def.h's
/// accessors without CONFIG_SLUB_CPU_PARTIAL), whose void * slab_page()
/// does not take.  Such a value needs no conversion: a struct page local
/// that holds it was converted to a slab before this rule runs (the
/// locals-first directive: slab_nullable_local.cocci finds the locals,
/// slab_var.cocci converts them, as for any `convert = "local"`), a test
/// of it is left as it is, and any other read of it where a page is still
/// expected is refused with its place (SLABCONV-REFUSE).  The choice is
/// made by how the value is used, not by function: a local is the form
/// the original series gives such code (slabs_cpu_partial_show()), and a
/// manifest step naming each function would miss a branch's own readers.
//
// Confidence: High (the two fields and the accessors of slub_def.h are the
//  only ways SLUB reaches them)
// Options: --no-includes -D nullable=<macro>,...  (files:
//  include/linux/slub_def.h mm/slub.c; the driver gives -D nullable)

virtual patch

@fields depends on patch@
@@
 struct kmem_cache_cpu {
 ...
-struct page *page;
+struct slab *slab;
 ...
-struct page *partial;
+struct slab *partial;
 ...
 };

@cpuslab depends on patch@
struct kmem_cache_cpu *C;
expression X, E;
@@
(
-C->page = slab_page(E)
+C->slab = E
|
-C->page = NULL
+C->slab = NULL
|
-page_slab(C->page = E)
+C->slab = page_slab(E)
|
-C->page = E
+C->slab = page_slab(E)
|
-page_slab(C->page)
+C->slab
|
-page_slab(READ_ONCE(C->page))
+READ_ONCE(C->slab)
|
-READ_ONCE(C->page)
+slab_page(READ_ONCE(C->slab))
|
-C->page
+slab_page(C->slab)
|
-page_slab(X->cpu_slab->page)
+X->cpu_slab->slab
|
-X->cpu_slab->page
+slab_page(X->cpu_slab->slab)
)

// The accessors of the partial list are macros, and a configuration may
// define one as NULL (slub_def.h without CONFIG_SLUB_CPU_PARTIAL, as in
// every CONFIG_SMP=n kernel): its value is then a void *, which neither
// slab_page() nor page_slab() takes.  The driver names those macros
// (-D nullable, the nullable-macros directive) and, before this rule runs,
// has converted every struct page local that holds one's value to a slab
// (the locals-first directive, slab_nullable_local.cocci), so that the
// value never needs a conversion.  Here, a read of a nullable accessor
// in a test is left as it is (a test takes any pointer), and any other
// read where a page is still expected is refused with its place: no
// slab_page() of a value that can be NULL's void *.
// slabconv: nullable-macros nullable
// slabconv: locals-first rules/slab_nullable_local.cocci

@initialize:python@
@@
kc_nullable = set()
kc_tested = set()
kc_wrap = set()

def kc_at(p):
    return (p[0].file, p[0].line, p[0].column)

@script:python kc_names depends on patch@
n << virtual.nullable;
@@
kc_nullable.update(x for x in n.split(",") if x and x != "-")

// the accessors read as a test: a pointer of any type will do
@partial_tested depends on patch@
identifier M = {slub_percpu_partial, slub_percpu_partial_read_once};
expression C;
statement S1, S2;
position p;
@@
(
 if (M(C)@p) S1 else S2
|
 if (M(C)@p) S1
|
 while (M(C)@p) S1
)

@script:python@
p << partial_tested.p;
@@
kc_tested.add(kc_at(p))

@partial_tested_exp depends on patch@
identifier M = {slub_percpu_partial, slub_percpu_partial_read_once};
expression C, E, E1, E2;
position p;
@@
(
 !M(C)@p
|
 M(C)@p || E
|
 E || M(C)@p
|
 M(C)@p && E
|
 E && M(C)@p
|
 M(C)@p ? E1 : E2
)

@script:python@
p << partial_tested_exp.p;
@@
kc_tested.add(kc_at(p))

// Reads of the partial list where a page is still expected: wrapped
// before the unwrapping rules below run, which leave these alone (unless
// the accessor can be NULL, above).  The accessors' own definitions (an
// lvalue, READ_ONCE()) are left alone.
@partial_read depends on patch@
identifier M = {slub_percpu_partial, slub_percpu_partial_read_once};
expression C, E;
position p;
@@
(
 M(C) = E
|
 READ_ONCE(M(C))
|
 page_slab(M(C))
|
 slub_set_percpu_partial(C, ...)
|
 M(C)@p
)

@script:python@
M << partial_read.M;
p << partial_read.p;
@@
if kc_at(p) in kc_tested:
    pass
elif M not in kc_nullable:
    kc_wrap.add(kc_at(p))
else:
    print("SLABCONV-REFUSE: %s:%s: %s(): %s() is a macro that some configuration "
          "defines as NULL (a void *, which slab_page() does not take) and its value "
          "is used as a page here: hold it in a struct page local, which is converted "
          "to a struct slab, or convert this use" % (p[0].file, p[0].line,
                                                      p[0].current_element, M))

@partial_wrap depends on patch@
identifier M = {slub_percpu_partial, slub_percpu_partial_read_once};
expression C;
position p : script:python() { kc_at(p) in kc_wrap };
@@
-M(C)@p
+slab_page(M(C))

@partial_page depends on patch@
expression X;
@@
(
 page_slab(this_cpu_read(X->cpu_slab->partial))
|
 this_cpu_cmpxchg(X->cpu_slab->partial, ...)
|
 this_cpu_write(X->cpu_slab->partial, ...)
|
-this_cpu_read(X->cpu_slab->partial)
+slab_page(this_cpu_read(X->cpu_slab->partial))
)

@partial depends on patch@
expression C, X, A, B, O;
@@
(
-page_slab(slub_percpu_partial(C))
+slub_percpu_partial(C)
|
-page_slab(slub_percpu_partial_read_once(C))
+slub_percpu_partial_read_once(C)
|
-page_slab(this_cpu_read(X->cpu_slab->partial))
+this_cpu_read(X->cpu_slab->partial)
|
 slub_set_percpu_partial(C,
-slab_page(A)
+A
 )
|
 this_cpu_cmpxchg(X->cpu_slab->partial, A, B) !=
-slab_page(O)
+O
)

@partial_args depends on patch@
expression X, A, B;
@@
 this_cpu_cmpxchg(X->cpu_slab->partial,
(
-slab_page(A)
+A
|
 A
)
 ,
(
-slab_page(B)
+B
|
 B
)
 )
