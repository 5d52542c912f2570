// SPDX-License-Identifier: GPL-2.0-only
/// Adapt the uses of function `fn`, whose `struct page *` parameter an
/// entry dropped (drop_param.cocci) or made const (const_page_param.cocci),
/// in a file that the entry does not list (regen/callers.py).
///
/// A branch may call fn from any file that sees its declaration; regen
/// finds those files in the whole tree and runs this rule over them, in
/// the same patch, so that every patch builds:
///   -D drop:
///     fn(a0, ..., a(n-1), E, ...)             -> fn(a0, ..., a(n-1), ...)
///     T fn(p0, ..., struct page *x, ...);     -> T fn(p0, ..., ...);
///   -D const_page:
///     fn(a0, ..., a(n-1), E, ...)             unchanged (a struct page *
///                                               converts to a const one)
///     T fn(p0, ..., struct page *x, ...);     -> T fn(p0, ..., const struct page *x, ...);
///                                               (a prototype of its own
///                                               must agree with the new one)
/// (argpos = n).  The file must not define fn.  Every call and prototype
/// it matches, changed or not, is printed as "SLABCONV-SITE:
/// file:line:column"; the driver stops regen, naming the place, for every
/// other use of fn in the file (a macro body spatch does not parse, its
/// address taken: a function pointer of the old type, a call with too few
/// arguments): those cannot be adapted here.
//
// Confidence: High (drop: the parameter was unused in every definition;
//  const: the callee only reads the page, and the compiler checks it)
// Options: --no-includes -D fn=<function> -D argpos=<n> -D drop | -D const_page

virtual patch
virtual drop
virtual const_page

@drop_call depends on patch && drop@
identifier virtual.fn;
expression list[virtual.argpos] es;
expression E;
position p;
@@
 fn@p(es,
-E,
 ...)

@script:python depends on drop_call@
p << drop_call.p;
@@
print("SLABCONV-SITE: %s:%s:%s" % (p[0].file, p[0].line, p[0].column))

@drop_proto depends on patch && drop@
identifier virtual.fn;
parameter list[virtual.argpos] ps;
identifier x;
type T;
position p;
@@
 T fn@p(ps,
- struct page *x,
 ...);

@script:python depends on drop_proto@
p << drop_proto.p;
@@
print("SLABCONV-SITE: %s:%s:%s" % (p[0].file, p[0].line, p[0].column))

@drop_cproto depends on patch && drop@
identifier virtual.fn;
parameter list[virtual.argpos] ps;
identifier x;
type T;
position p;
@@
 T fn@p(ps,
- const struct page *x,
 ...);

@script:python depends on drop_cproto@
p << drop_cproto.p;
@@
print("SLABCONV-SITE: %s:%s:%s" % (p[0].file, p[0].line, p[0].column))

@const_call depends on patch && const_page@
identifier virtual.fn;
expression list[virtual.argpos] es;
expression E;
position p;
@@
 fn@p(es, E, ...)

@script:python depends on const_call@
p << const_call.p;
@@
print("SLABCONV-SITE: %s:%s:%s" % (p[0].file, p[0].line, p[0].column))

@const_proto depends on patch && const_page@
identifier virtual.fn;
parameter list[virtual.argpos] ps;
identifier x;
type T;
position p;
@@
 T fn@p(ps,
- struct page *x
+ const struct page *x
 , ...);

@script:python depends on const_proto@
p << const_proto.p;
@@
print("SLABCONV-SITE: %s:%s:%s" % (p[0].file, p[0].line, p[0].column))

@const_done depends on patch && const_page@
identifier virtual.fn;
parameter list[virtual.argpos] ps;
identifier x;
type T;
position p;
@@
 T fn@p(ps, const struct page *x, ...);

@script:python depends on const_done@
p << const_done.p;
@@
print("SLABCONV-SITE: %s:%s:%s" % (p[0].file, p[0].line, p[0].column))
