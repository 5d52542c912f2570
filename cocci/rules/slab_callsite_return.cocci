// SPDX-License-Identifier: GPL-2.0-only
/// Adapt the uses of function `fn`, whose return value an entry converted
/// to a struct slab, in a file that the entry does not list
/// (regen/callers.py).
///
/// An entry converts fn (slab_return.cocci: it returns a struct slab)
/// together with the callers in the files it names.  A branch may call fn
/// from any other file that sees its declaration; regen finds those files
/// in the whole tree and runs this rule over them, in the same patch, so
/// that every patch builds:
///   fn(args)               -> slab_page(fn(args))  (a cast: NULL stays NULL)
///   struct page *fn(...);  -> struct slab *fn(...);  (a prototype of its own)
/// The round trips this leaves are folded afterwards (slab_fold.cocci, or
/// slab_roundtrip.cocci outside mm/).  The file must not define fn.
/// Every call and prototype it rewrites is printed as
/// "SLABCONV-SITE: file:line:column"; the driver stops regen, naming the
/// place, for every other use of fn in the file (its address taken, a
/// call spatch cannot parse): those cannot be adapted here.
//
// Confidence: High (slab_page() is a cast, as for the entry's own callers)
// Options: --no-includes -D fn=<function>

virtual patch

@ret_call depends on patch@
identifier virtual.fn;
expression list es;
position p;
@@
+ slab_page(
  fn@p(es)
+ )

@script:python depends on ret_call@
p << ret_call.p;
@@
print("SLABCONV-SITE: %s:%s:%s" % (p[0].file, p[0].line, p[0].column))

@ret_proto depends on patch@
identifier virtual.fn;
position p;
@@
- struct page *
+ struct slab *
 fn@p(...);

@script:python depends on ret_proto@
p << ret_proto.p;
@@
print("SLABCONV-SITE: %s:%s:%s" % (p[0].file, p[0].line, p[0].column))
