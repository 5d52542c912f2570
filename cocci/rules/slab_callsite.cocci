// SPDX-License-Identifier: GPL-2.0-only
/// Adapt the uses of function `fn`, whose parameter an entry converted to a
/// struct slab, in a file that the entry does not list (regen/callers.py).
///
/// An entry converts fn (its parameter at position argpos becomes a struct
/// slab) together with the callers in the files it names.  A branch may call fn from any other file that sees its
/// declaration (a header's function: obj_to_index(), nearest_obj(), the
/// memcg hooks ...); regen finds those files in the whole tree and runs
/// this rule over them, in the same patch, so that every patch builds:
///   fn(a0, ..., a(n-1), slab_page(E), ...) -> fn(a0, ..., E, ...)
///   fn(a0, ..., a(n-1), E, ...)            -> fn(a0, ..., page_slab(E), ...)
///   T fn(p0, ..., struct page *x, ...);    -> T fn(p0, ..., struct slab *slab, ...);
///                                           (a prototype of its own; with
///                                           -D const_slab: const struct slab *)
/// (a macro body that spatch parses as an expression is adapted the same
/// way).  The return value: slab_callsite_return.cocci.
/// The round trips this leaves are folded afterwards (slab_fold.cocci, or
/// slab_roundtrip.cocci outside mm/).  The file must not define fn.
/// Every call and prototype it rewrites is printed as
/// "SLABCONV-SITE: file:line:column"; the driver stops regen, naming the
/// place, for every other use of fn in the file (a macro body, its address
/// taken, a call this rule does not match): those cannot be adapted here.
//
// Confidence: High (only the converted argument or result changes type;
//  page_slab() is compound_head(), as in the entry's own callers)
// Options: --no-includes -D fn=<function> -D argpos=<n> [-D const_slab]

virtual patch
virtual const_slab

@param_call depends on patch@
identifier virtual.fn;
expression list[virtual.argpos] es;
expression E;
position p;
@@
 fn@p(es,
(
- slab_page(E)
+ E
|
- E
+ page_slab(E)
)
 ,...)

@script:python depends on param_call@
p << param_call.p;
@@
print("SLABCONV-SITE: %s:%s:%s" % (p[0].file, p[0].line, p[0].column))

@param_proto depends on patch@
identifier virtual.fn;
parameter list[virtual.argpos] ps;
identifier x;
type T;
position p;
@@
 T fn@p(ps,
- struct page *x
+ struct slab *slab
 , ...);

@script:python depends on param_proto@
p << param_proto.p;
@@
print("SLABCONV-SITE: %s:%s:%s" % (p[0].file, p[0].line, p[0].column))

@constparam_proto depends on patch@
identifier virtual.fn;
parameter list[virtual.argpos] ps;
identifier x;
type T;
position p;
@@
 T fn@p(ps,
- const struct page *x
+ const struct slab *slab
 , ...);

@script:python depends on constparam_proto@
p << constparam_proto.p;
@@
print("SLABCONV-SITE: %s:%s:%s" % (p[0].file, p[0].line, p[0].column))

@cparam_proto depends on patch && const_slab@
identifier virtual.fn;
parameter list[virtual.argpos] ps;
identifier x;
type T;
@@
 T fn(ps,
- struct slab *slab
+ const struct slab *slab
 , ...);
