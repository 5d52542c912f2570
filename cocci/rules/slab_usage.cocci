// SPDX-License-Identifier: GPL-2.0-only
/// Find the struct page parameters and locals that are used as a slab and
/// only as a slab: the usage pass of regen (regen/usage.py), which
/// converts what it finds with the generic conversions of the named
/// entries (slab_param.cocci and slab_callers.cocci for a parameter,
/// slab_var.cocci for a local).  No function is named: a variable is
/// chosen by what the code does with it.
///
/// A `struct page *` parameter or local x of a function is used as a slab
/// at each of:
///   x->F                  F a member that only slabs have in struct page
///                         (slab_list, next, pages, pobjects, slab_cache,
///                         freelist, s_mem, counters, inuse, objects,
///                         frozen, active, units)
///   I(x, E, slab_list)    a walk of a slab list (n->partial, the
///                         slabs_partial/_full/_free lists of SLAB, the
///                         cpu partial chain ...) with x as the cursor
///   page_slab(x)          x passed where a struct slab is wanted (the
///                         callers of a function that now takes one were
///                         wrapped so by slab_callers.cocci)
/// and neutral at its declaration, at `x = E` (x = virt_to_head_page(p)
/// included: slab_var.cocci and slab_fold.cocci turn it into
/// virt_to_slab(p)) and in a NULL test.  Any other use is a use as a
/// page.  Reported, one line each:
///   SLABCONV-USAGE: param|local <file>:<line>: <function> <name>
/// for a variable with at least one use as a slab and none as a page (the
/// line is its declaration's).  A page used as a page stays a page; a
/// variable with uses of both kinds that reaches a slab member (x->F) is
/// reported as
///   SLABCONV-MIXED: param|local <file>:<line>: <function> <name> [walk]
/// for the safe form, slab_members_of_page.cocci (the members reached
/// through page_slab()); "walk" when it is also the cursor of a slab list
/// walk, which that form cannot convert (the check before the removal of
/// the members then stops regen with the place).
//
// Confidence: High for what is reported: every use of the variable was
//  seen and is one of the slab or neutral forms above.  A variable whose
//  uses spatch cannot parse (a macro that hides one) is not reported.
// Options: --no-includes

virtual report

@initialize:python@
@@
slab_uses = {}          # (file, function, name) -> positions used as a slab
neutral = set()         # (file, function, name, line, column) neutral uses
decls = {}              # (file, function, name) -> (kind, line, param|local); kind
                        # "page" once a use as a page is seen

# the state -j merges (finalize): the same objects, mutated in place
coccinelle.decls = decls
coccinelle.slab_uses = slab_uses

def key(p, x):
    return (p[0].file, p[0].current_element, x)

def at(p, x):
    return (p[0].file, p[0].current_element, x, p[0].line, p[0].column)

// ---- the variables: parameters and locals of type struct page * ----------

@pvar depends on report@
identifier fn, x;
position d;
type T;
@@
 T fn(..., struct page *x@d, ...) { ... }

@script:python@
x << pvar.x;
d << pvar.d;
@@
decls[key(d, x)] = ("param", d[0].line, "param")

@lvar depends on report@
identifier x;
position d;
@@
(
 struct page *x@d;
|
 struct page *x@d = ...;
)

@script:python@
x << lvar.x;
d << lvar.d;
@@
decls.setdefault(key(d, x), ("local", d[0].line, "local"))

// ---- uses as a slab --------------------------------------------------------

@slab_member depends on report@
identifier x;
identifier F = {slab_list, next, pages, pobjects, slab_cache, freelist, s_mem,
                counters, inuse, objects, frozen, active, units};
position q;
@@
 x@q->F

@script:python@
x << slab_member.x;
q << slab_member.q;
@@
slab_uses.setdefault(key(q, x), set()).update({at(q, x), "member"})

@slab_arg depends on report@
identifier x, g;
position q;
@@
 g(..., page_slab(x@q), ...)

@script:python@
x << slab_arg.x;
q << slab_arg.q;
@@
slab_uses.setdefault(key(q, x), set()).add(at(q, x))

@slab_walk depends on report@
identifier x;
identifier L = {slab_list};
iterator I;
expression E;
statement S;
position q;
@@
 I(x@q, E, L) S

@script:python@
x << slab_walk.x;
q << slab_walk.q;
@@
slab_uses.setdefault(key(q, x), set()).update({at(q, x), "walk"})

// ---- neutral uses ------------------------------------------------------------

@neutral_use depends on report@
identifier x;
expression E;
position q;
@@
(
 x@q = E
|
 !x@q
|
 x@q == NULL
|
 NULL == x@q
|
 x@q != NULL
)

@script:python@
x << neutral_use.x;
q << neutral_use.q;
@@
neutral.add(at(q, x))

@neutral_test depends on report@
identifier x;
statement S;
position q;
@@
 if (x@q) S

@script:python@
x << neutral_test.x;
q << neutral_test.q;
@@
neutral.add(at(q, x))

// ---- every use: what is neither is a use as a page ------------------------

@every_use depends on report@
identifier x;
position q;
@@
 x@q

@script:python@
x << every_use.x;
q << every_use.q;
@@
k = key(q, x)
if k in decls and at(q, x) not in neutral and at(q, x) not in slab_uses.get(k, ()):
    decls[k] = ("page", decls[k][1], decls[k][-1])

// With -j, each worker has its own state: merge gives them all.
@finalize:python@
ds << merge.decls;
ss << merge.slab_uses;
@@
found = {}
uses = {}
for d in ds:
    found.update(d)
for u in ss:
    for k, v in u.items():
        uses.setdefault(k, set()).update(v)
for (f, fn, x), (kind, line, was) in sorted(found.items()):
    u = uses.get((f, fn, x), set())
    if kind != "page" and u:
        print("SLABCONV-USAGE: %s %s:%s: %s %s" % (kind, f, line, fn, x))
    elif kind == "page" and "member" in u:
        print("SLABCONV-MIXED: %s %s:%s: %s %s%s" % (was, f, line, fn, x,
                                                     " walk" if "walk" in u else ""))
