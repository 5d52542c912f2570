// SPDX-License-Identifier: GPL-2.0-only
/// Report page_slab() and the other helpers that dereference their
/// argument applied to a value that can be NULL.
///
/// page_slab(p) is (struct slab *)compound_head(p): it reads p, so a NULL
/// page oopses.  The same holds for compound_head() itself, for the struct
/// slab helpers that read the slab (slab_address(), slab_nid(),
/// slab_order(), slab_pgdat(), slab_size(), the slab_test_*(),
/// slab_set_*(), slab_clear_*() flag helpers and their __ forms) and for a
/// member access through slab_page(x)->m.  slab_page() alone is a cast: a
/// NULL passes through it (and is reported where page_slab(slab_page(x))
/// or slab_page(x)->m reads it).  The value is one of:
///   - a call of a function that can return NULL, as the argument itself
///     (page_slab(allocate_slab(...)));
///   - a variable assigned from such a call and not tested against NULL
///     between the assignment and the use;
///   - a variable the function tests against NULL after the use (and not
///     before it): the code says that it can be NULL.
/// A function can return NULL if it is defined in the files given to
/// spatch and has a `return NULL;`, returns a variable that is NULL on
/// some path to that return (initialised or assigned NULL, assigned from
/// such a function and not tested, or tested by an `if (x)` without else
/// that falls through), or returns the result of such a function; or if it
/// is one of the page allocator and lookup functions that document a NULL
/// return (MAY_NULL_KNOWN below).  A `{ return NULL; }` stub beside
/// another definition of the function (the #else of a configuration) does
/// not count.  A use guarded in the same expression (x && page_slab(x)->m,
/// x ? slab_nid(x) : -1) is not reported; an assignment, &x or a list
/// iterator over x between the two places ends the path.
/// One line per finding, sorted by file and line:
///   FILE:LINE: HELPER(EXPR) on a value that can be NULL: WHY
/// where the arguments of a call in EXPR are written "...".
//
// Confidence: Moderate.  Without includes a function defined in another
//   file is known to return NULL only if MAY_NULL_KNOWN lists it.  A test
//   of the variable anywhere between the assignment and the use counts as
//   a NULL test (if (x) foo(); page_slab(x) is not reported), and a use
//   followed by a test is reported even if some other condition guarded
//   it.  Only variables (identifiers), not members (c->page), are tracked.
// Options: --no-includes

virtual report

@initialize:python@
@@
# Page allocator and lookup functions whose NULL return is part of their
# documented contract (their definitions are in files not given to spatch).
MAY_NULL_KNOWN = {
    # the page allocator: NULL when the allocation fails
    "alloc_pages": "returns NULL when the page allocator fails",
    "alloc_page": "returns NULL when the page allocator fails",
    "alloc_pages_node": "returns NULL when the page allocator fails",
    "__alloc_pages_node": "returns NULL when the page allocator fails",
    "__alloc_pages_nodemask": "returns NULL when the page allocator fails",
    "__alloc_pages": "returns NULL when the page allocator fails",
    "alloc_pages_current": "returns NULL when the page allocator fails",
    "alloc_pages_vma": "returns NULL when the page allocator fails",
    "alloc_page_vma": "returns NULL when the page allocator fails",
    "folio_alloc": "returns NULL when the page allocator fails",
    "__folio_alloc_node": "returns NULL when the page allocator fails",
    # lookups
    "pfn_to_online_page": "returns NULL for a pfn that is not online",
    "find_get_page": "returns NULL when the page is not in the cache",
    "list_first_entry_or_null": "returns NULL for an empty list",
    "list_last_entry_or_null": "returns NULL for an empty list",
}

_direct = {}       # function -> why it can return NULL
_nulls = []        # (function, place, why): its return NULL statements
_defs = {}         # function -> places of its definitions
_stubs = set()     # places of the return NULL of a body that is only that
_edges = []        # (function, callee, how): function returns what callee returns
_text = {}         # use place -> "helper(expr)"
_arg = {}          # use place -> place of the variable it reads
_guarded = set()   # places of variables read under a NULL test in the same expression
_calls = []        # (use place, callee)
_assigned = []     # (use place, variable, callee, "file:line" of the assignment)
_after = []        # (use place, variable, "file:line" of the test)

def where(p):
    return "%s:%s" % (p[0].file, p[0].line)

def place(p):
    return (p[0].file, int(p[0].line), int(p[0].column))

def use(p, text, q=None):
    _text[place(p)] = text
    if q is not None:
        _arg[place(p)] = place(q)

def func(p):
    return p[0].current_element

// ---- functions that can return NULL -----------------------------------------

@fndef depends on report@
identifier fn;
position p;
@@
 fn@p(...) {...}

@script:python depends on report@
fn << fndef.fn;
p << fndef.p;
@@
_defs.setdefault(str(fn), set()).add(place(p))

@stub depends on report@
identifier fn;
position p;
@@
 fn(...) { return@p NULL; }

@script:python depends on report@
p << stub.p;
@@
_stubs.add(place(p))

@retnull depends on report@
position p;
@@
 return@p NULL;

@script:python depends on report@
p << retnull.p;
@@
_nulls.append((func(p), place(p), "returns NULL at %s" % where(p)))

@retcall depends on report@
identifier g;
position p;
@@
 return@p g(...);

@script:python depends on report@
g << retcall.g;
p << retcall.p;
@@
_edges.append((func(p), str(g), "returns %s() at %s" % (g, where(p))))

@retcallcast depends on report@
identifier g;
position p;
@@
 return@p slab_page(g(...));

@script:python depends on report@
g << retcallcast.g;
p << retcallcast.p;
@@
_edges.append((func(p), str(g), "returns slab_page(%s()) at %s" % (g, where(p))))

@retvar depends on report exists@
iterator I;
statement S0;
identifier x, g;
expression E;
statement S1, S2;
type T;
position p1, p2;
@@
(
 x@p1 = slab_page(g(...));
|
 T x@p1 = slab_page(g(...));
|
 x@p1 = g(...);
|
 T x@p1 = g(...);
)
 ... when != x = E
     when != &x
     when != I(x, ...) S0
     when != if (<+...x...+>) S1 else S2
     when != \(x == NULL\|x != NULL\)
 return@p2 x;

@script:python depends on report@
x << retvar.x;
g << retvar.g;
p1 << retvar.p1;
p2 << retvar.p2;
@@
_edges.append((func(p2), str(g), "returns %s at %s, assigned from %s() at %s"
               % (x, where(p2), g, where(p1))))

@retvarnull depends on report exists@
iterator I;
statement S0;
identifier x;
expression E;
type T;
position p1, p2;
@@
(
 x@p1 = NULL;
|
 T x@p1 = NULL;
)
 ... when != x = E
     when != &x
     when != I(x, ...) S0
 return@p2 x;

@script:python depends on report@
x << retvarnull.x;
p1 << retvarnull.p1;
p2 << retvarnull.p2;
@@
_direct.setdefault(func(p2), "returns %s at %s, set to NULL at %s" % (x, where(p2), where(p1)))

@rettested depends on report exists@
iterator I;
statement S0;
identifier x;
expression E;
statement S;
position p1, p2;
@@
 if@p1 (x != NULL) S
 ... when != x = E
     when != &x
     when != I(x, ...) S0
 return@p2 x;

@script:python depends on report@
x << rettested.x;
p1 << rettested.p1;
p2 << rettested.p2;
@@
_direct.setdefault(func(p2), "returns %s at %s, which `if (%s)` at %s lets through when NULL"
                   % (x, where(p2), x, where(p1)))

// ---- the uses: a helper that dereferences its argument ----------------------

@guard depends on report@
identifier x;
position q;
@@
(
 x != NULL && ... && <+... x@q ...+>
|
 x == NULL || ... || <+... x@q ...+>
|
 x != NULL ? <+... x@q ...+> : ...
|
 x == NULL ? ... : <+... x@q ...+>
)

@script:python depends on report@
q << guard.q;
@@
_guarded.add(place(q))

@usevar depends on report@
identifier h =~ "^(page_slab|compound_head|slab_address|slab_nid|slab_order|slab_pgdat|slab_size|(__)?slab_(test|set|clear)_[A-Za-z0-9_]+)$";
identifier x;
position p, q;
@@
 h@p(x@q)

@script:python depends on report@
h << usevar.h;
x << usevar.x;
p << usevar.p;
q << usevar.q;
@@
use(p, "%s(%s)" % (h, x), q)

@usevarcast depends on report@
identifier h =~ "^(page_slab|compound_head|slab_address|slab_nid|slab_order|slab_pgdat|slab_size|(__)?slab_(test|set|clear)_[A-Za-z0-9_]+)$";
identifier x;
position p, q;
@@
 h@p(slab_page(x@q))

@script:python depends on report@
h << usevarcast.h;
x << usevarcast.x;
p << usevarcast.p;
q << usevarcast.q;
@@
use(p, "%s(slab_page(%s))" % (h, x), q)

@usevarmember depends on report@
identifier x, m;
position p, q;
@@
 slab_page@p(x@q)->m

@script:python depends on report@
x << usevarmember.x;
m << usevarmember.m;
p << usevarmember.p;
q << usevarmember.q;
@@
use(p, "slab_page(%s)->%s" % (x, m), q)

@usecall depends on report@
identifier h =~ "^(page_slab|compound_head|slab_address|slab_nid|slab_order|slab_pgdat|slab_size|(__)?slab_(test|set|clear)_[A-Za-z0-9_]+)$";
identifier g, m;
position p;
@@
(
 h@p(slab_page(g(...)))
|
 slab_page@p(g(...))->m
|
 h@p(g(...))
)

@script:python depends on report@
p << usecall.p;
g << usecall.g;
@@
_calls.append((place(p), str(g)))

@usecalltext depends on report@
identifier h =~ "^(page_slab|compound_head|slab_address|slab_nid|slab_order|slab_pgdat|slab_size|(__)?slab_(test|set|clear)_[A-Za-z0-9_]+)$";
identifier g;
position p;
@@
 h@p(g(...))

@script:python depends on report@
h << usecalltext.h;
g << usecalltext.g;
p << usecalltext.p;
@@
if str(g) != "slab_page":            # page_slab(slab_page(g(...))): usecallcasttext
    use(p, "%s(%s(...))" % (h, g))

@usecallcasttext depends on report@
identifier h =~ "^(page_slab|compound_head|slab_address|slab_nid|slab_order|slab_pgdat|slab_size|(__)?slab_(test|set|clear)_[A-Za-z0-9_]+)$";
identifier g;
position p;
@@
 h@p(slab_page(g(...)))

@script:python depends on report@
h << usecallcasttext.h;
g << usecallcasttext.g;
p << usecallcasttext.p;
@@
use(p, "%s(slab_page(%s(...)))" % (h, g))

@usecallmembertext depends on report@
identifier g, m;
position p;
@@
 slab_page@p(g(...))->m

@script:python depends on report@
g << usecallmembertext.g;
m << usecallmembertext.m;
p << usecallmembertext.p;
@@
use(p, "slab_page(%s(...))->%s" % (g, m))

// ---- a variable assigned from a call and not tested before the use ----------

@assigned depends on report exists@
iterator I;
statement S0;
identifier h =~ "^(page_slab|compound_head|slab_address|slab_nid|slab_order|slab_pgdat|slab_size|(__)?slab_(test|set|clear)_[A-Za-z0-9_]+)$";
identifier x, g, m;
expression E;
statement S1, S2;
type T;
position p1, p;
@@
(
 x@p1 = slab_page(g(...));
|
 T x@p1 = slab_page(g(...));
|
 x@p1 = g(...);
|
 T x@p1 = g(...);
)
 ... when != x = E
     when != &x
     when != I(x, ...) S0
     when != if (<+...x...+>) S1 else S2
     when != \(x == NULL\|x != NULL\)
(
 h@p(x)
|
 h@p(slab_page(x))
|
 slab_page@p(x)->m
)

@script:python depends on report@
x << assigned.x;
g << assigned.g;
p1 << assigned.p1;
p << assigned.p;
@@
_assigned.append((place(p), str(x), str(g), where(p1)))

// ---- a variable tested against NULL after the use (and not before) ----------

@after depends on report exists@
iterator I;
statement S0;
identifier h =~ "^(page_slab|compound_head|slab_address|slab_nid|slab_order|slab_pgdat|slab_size|(__)?slab_(test|set|clear)_[A-Za-z0-9_]+)$";
identifier fn, x, m;
expression E;
statement S1, S2;
position p, p2;
@@
 fn(...) {
 ... when != \(x == NULL\|x != NULL\)
     when != if (<+...x...+>) S1 else S2
(
 h@p(x)
|
 h@p(slab_page(x))
|
 slab_page@p(x)->m
)
 ... when != x = E
     when != &x
     when != I(x, ...) S0
(
 x@p2 == NULL
|
 x@p2 != NULL
)
 ... when any
 }

@script:python depends on report@
x << after.x;
p << after.p;
p2 << after.p2;
@@
# a test before the use in the text is a loop's test reached again
if place(p2)[1:] > place(p)[1:]:
    _after.append((place(p), str(x), where(p2)))

@finalize:python depends on report@
@@
# The stub of a configuration (#else: { return NULL; }) beside the real
# definition says nothing about the real one, which the callers reach only
# in the configuration that has it (migration_entry_to_page()).
may = {}
for fn, pl, why in sorted(_nulls, key=lambda n: n[1]):
    if pl not in _stubs or len(_defs.get(fn, ())) < 2:
        may.setdefault(fn, why)
for fn, why in _direct.items():
    may.setdefault(fn, why)
for name, why in MAY_NULL_KNOWN.items():
    may.setdefault(name, why)
changed = True
while changed:                      # what returns what can be NULL can be NULL
    changed = False
    for fn, g, how in sorted(_edges):
        if g in may and fn not in may:
            may[fn] = "%s, which %s" % (how, may[g])
            changed = True

found = {}                          # use place -> why (the first kind found wins)
def note(pl, why):
    if pl in _text and _arg.get(pl) not in _guarded and pl not in found:
        found[pl] = why

for pl, g in sorted(_calls):
    if g in may:
        note(pl, "%s() %s" % (g, may[g]))
for pl, x, g, at in sorted(_assigned):
    if g in may:
        note(pl, "%s is assigned from %s() at %s and not tested against NULL before this use; %s() %s"
             % (x, g, at, g, may[g]))
for pl, x, at in sorted(_after):
    note(pl, "%s is tested against NULL after this use, at %s" % (x, at))
for pl in sorted(found):
    print("%s:%d: %s on a value that can be NULL: %s" % (pl[0], pl[1], _text[pl], found[pl]))
