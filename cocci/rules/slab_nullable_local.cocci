// SPDX-License-Identifier: GPL-2.0-only
/// Find the struct page locals that are given the value of a macro that
/// some configuration defines as NULL, where that macro's value is about
/// to become a struct slab: the driver converts each one to a struct slab
/// (slab_var.cocci) before the rule that asks for it runs (the directive
/// `// slabconv: locals-first rules/slab_nullable_local.cocci`, which
/// kmem_cache_cpu.cocci carries; regen/series.py).
///
/// slub_percpu_partial(c) is `(c)->partial` with CONFIG_SLUB_CPU_PARTIAL
/// and NULL without it.  Once the cpu partial list holds slabs, a page
/// local that holds its value would need slab_page() of it, which does not
/// take NULL's `void *`; holding the value in a slab local needs no
/// conversion in either configuration.  The nullable macros are the -D
/// nullable list the driver reads off the definitions (regen/nullable.py,
/// the directive below); no macro or function is named here.
///
/// Reported, one line each, for a local `struct page *x` of a function f
/// with an assignment `x = M(...)`, M one of the nullable macros:
///   SLABCONV-USAGE: local <file>:<line>: <f> <x>
/// (the line is the declaration's; the format of slab_usage.cocci's,
/// read by regen/usage.parse()).
//
// Confidence: High: a page local holding such a value cannot take it
//  through slab_page() in every configuration; converting the local only
//  changes its type (slab_var.cocci wraps its other uses).
// Options: --no-includes -D nullable=<macro>,<macro>...
// slabconv: nullable-macros nullable

virtual report

// nl_names: the nullable macros (-D nullable); nl_decls: the line of each
// struct page local's declaration, by file, function and name; nl_found:
// the locals (file, function, name) given a nullable macro's value
@initialize:python@
@@
nl_names = set()
nl_decls = {}
nl_found = set()

@script:python nl_init depends on report@
n << virtual.nullable;
@@
nl_names.update(x for x in n.split(",") if x and x != "-")

@nl_decl depends on report@
identifier x;
position d;
@@
(
 struct page *x@d;
|
 struct page *x@d = ...;
)

@script:python@
x << nl_decl.x;
d << nl_decl.d;
@@
nl_decls.setdefault((d[0].file, d[0].current_element, x), d[0].line)

@nl_init_decl depends on report@
identifier x, M;
expression list es;
position q;
@@
 struct page *x@q = M(es);

@script:python@
x << nl_init_decl.x;
M << nl_init_decl.M;
q << nl_init_decl.q;
@@
if M in nl_names:
    nl_found.add((q[0].file, q[0].current_element, x))

@nl_set depends on report@
identifier x, M;
expression list es;
position q;
@@
 x@q = M(es)

@script:python@
x << nl_set.x;
M << nl_set.M;
q << nl_set.q;
@@
if M in nl_names:
    nl_found.add((q[0].file, q[0].current_element, x))

@finalize:python@
@@
for k in sorted(nl_found):
    if k in nl_decls:
        print("SLABCONV-USAGE: local %s:%s: %s %s" % (k[0], nl_decls[k], k[1], k[2]))
