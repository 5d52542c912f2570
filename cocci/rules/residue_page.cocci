// SPDX-License-Identifier: GPL-2.0-only
/// Report every remaining use of struct page in slab allocator code.
///
/// The residue report of the series (verify/residue.py): once a file is
/// converted, it may use struct page only where it talks to the page
/// allocator or to the rest of mm.  This rule lists every use; the
/// allowlist cocci/residue.toml says which are allowed and why.  One line
/// per finding, sorted by file, line and column:
///   FILE:LINE:COL: residue_page: KIND in FUNCTION: TEXT
/// FUNCTION is the enclosing function (or the function a prototype
/// declares), "-" outside functions.  KIND and TEXT:
///   param              a parameter whose type mentions struct page
///                      (struct page *, struct page **, const struct page *,
///                      a function pointer taking one); TEXT its name,
///                      "(unnamed)" in a prototype without one
///   return             a function returning struct page * (definition or
///                      prototype); TEXT the function
///   local, global      a variable of such a type (struct page new too);
///                      TEXT its name
///   field-decl         a struct member of such a type; TEXT struct.member
///   cast               (struct page *)E, and container_of()-style macros
///                      given the type struct page; TEXT the expression
///   sizeof             sizeof(struct page)
///   slab-field-access  a slab-only field of 5.10's struct page read or
///                      written through a struct page: E->F, S.F,
///                      list_for_each_entry(page, ..., slab_list),
///                      list_entry(..., struct page, slab_list); TEXT the access
///   call               a call that passes or yields a struct page: an
///                      argument or the assigned variable has that type, or
///                      the callee is one of the page-returning functions
///                      below (virt_to_head_page, alloc_pages_node,
///                      slab_page, ...); TEXT the callee
/// The slab-only fields are those of the slab union of 5.10's struct page
/// (slab_list, next, pages, pobjects, slab_cache, freelist, s_mem,
/// counters, inuse, objects, frozen) with SLAB's active and SLOB's units,
/// and rcu_head, which slab code uses for the slab's RCU free.
//
// Confidence: High for what spatch types (declarations, parameters, locals,
//   casts, accesses through them).  Without includes spatch does not know
//   the type of a member of a struct defined in a header or of a call's
//   result, so two stand-ins: E->m is taken to be a struct page when a
//   struct in the files given to spatch declares a member m of that type
//   (give the header too: verify/residue.py passes include/linux/slub_def.h
//   and slab_def.h along), and the page-returning functions listed in the
//   rules are taken to return one.  verify/residue.py adds every line that
//   mentions struct page and has no finding (code spatch could not parse,
//   #if 0) as kind "text".
// Options: --no-includes -D report

virtual report

@initialize:python@
@@
import re

_page_type = re.compile(r"\bstruct\s+page\b")
TYPE_MACROS = {"container_of", "container_of_safe", "list_entry", "list_first_entry",
               "list_first_entry_or_null", "list_last_entry", "hlist_entry", "llist_entry"}
# the slab-only fields, as in the sfa* rules' identifier lists
SLAB_FIELDS = {"slab_list", "next", "pages", "pobjects", "slab_cache", "freelist", "s_mem",
               "counters", "inuse", "objects", "frozen", "active", "units", "rcu_head"}
_found = {}
_pending = []

def _norm(s):
    """spatch spaces out the code it prints: "struct page * page" -> "struct page *page"."""
    s = re.sub(r"\s+", " ", str(s)).strip()
    s = re.sub(r"\s*\*\s*", " *", s)
    s = re.sub(r"\* +(?=[\w(])", "*", s)
    s = re.sub(r"(\w)\s+\(", r"\1(", s)
    s = re.sub(r"\(\s+", "(", s)
    s = re.sub(r"\s+\)", ")", s)
    s = re.sub(r"\s+,", ",", s)
    s = re.sub(r"\s*\[\s*", "[", s)
    s = re.sub(r"\s*\]", "]", s)
    s = re.sub(r"\s*->\s*", "->", s)
    s = re.sub(r"\s*\.\s*(?=[A-Za-z_])", ".", s)
    return s

def is_page_type(t):
    return bool(_page_type.search(str(t)))

def fn_of(p, fallback="-"):
    f = p[0].current_element
    return f if f and f != "something_else" else fallback

def add(p, kind, func, text):
    """Record a finding (once per place, kind and text)."""
    # columns: 0-based from spatch, 1-based in the report (as compilers print them)
    _found[(p[0].file, int(p[0].line), int(p[0].column) + 1, kind, _norm(text))] = func

def by_member(fld, p, kind, func, text):
    """A finding through E->fld, kept at the end if some struct in the files
    declares fld as a struct page (a field-decl finding): without includes
    spatch does not know the type of a header struct's member."""
    _pending.append((fld, p, kind, func, text))

def param_name(s):
    """The name in a parameter declaration, "(unnamed)" if it has none."""
    s = _norm(s)
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", s)          # a function pointer
    if m:
        return m.group(1)
    if re.search(r"(\bstruct\s+\w+|\*|\))\s*$", s):
        return "(unnamed)"
    m = re.search(r"(\w+)\s*(\[[^\]]*\]\s*)*$", s)
    return m.group(1) if m else "(unnamed)"

@pdef depends on report@
identifier fn;
parameter P;
position p;
@@
 fn(..., P@p, ...) {...}

@script:python depends on report@
P << pdef.P;
fn << pdef.fn;
p << pdef.p;
@@
if is_page_type(P):
    add(p, "param", str(fn), param_name(P))

@pproto depends on report@
identifier fn;
type T0;
parameter P;
position p;
@@
 T0 fn(..., P@p, ...);

@script:python depends on report@
P << pproto.P;
fn << pproto.fn;
p << pproto.p;
@@
if is_page_type(P):
    add(p, "param", str(fn), param_name(P))

@retdef depends on report@
identifier fn;
type T;
position p;
@@
 T fn@p(...) {...}

@script:python depends on report@
T << retdef.T;
fn << retdef.fn;
p << retdef.p;
@@
if is_page_type(T):
    add(p, "return", str(fn), str(fn))

@retproto depends on report@
identifier fn;
type T;
position p;
@@
 T fn@p(...);

@script:python depends on report@
T << retproto.T;
fn << retproto.fn;
p << retproto.p;
@@
if is_page_type(T):
    add(p, "return", str(fn), str(fn))

@decl depends on report@
identifier x;
type T;
position p;
@@
(
 T x@p;
|
 T x@p = ...;
)

@script:python depends on report@
T << decl.T;
x << decl.x;
p << decl.p;
@@
# A top-level declaration is its own current element; a prototype (a
# function type) is reported by pproto and retproto.
if is_page_type(T) and "(" not in str(T):
    if p[0].current_element == str(x):
        add(p, "global", "-", str(x))
    else:
        add(p, "local", fn_of(p), str(x))

@fielddecl depends on report@
identifier sn, x;
type T;
position p;
@@
 struct sn { ... T x@p; ... };

@script:python depends on report@
T << fielddecl.T;
sn << fielddecl.sn;
x << fielddecl.x;
p << fielddecl.p;
@@
if is_page_type(T):
    add(p, "field-decl", "-", "%s.%s" % (sn, x))

@cast depends on report disable drop_cast@
type T;
expression E;
position p;
@@
 (T)E@p

@script:python depends on report@
T << cast.T;
E << cast.E;
p << cast.p;
@@
if is_page_type(T):
    add(p, "cast", fn_of(p), "(%s)%s" % (_norm(T), _norm(E)))

@szof depends on report@
type T;
position p;
@@
 sizeof@p(T)

@script:python depends on report@
T << szof.T;
p << szof.p;
@@
if is_page_type(T):
    add(p, "sizeof", fn_of(p), "sizeof(%s)" % _norm(T))

@tyarg depends on report@
identifier f, F;
expression list es;
position p;
@@
 f@p(es, struct page, F)

@script:python depends on report@
f << tyarg.f;
F << tyarg.F;
p << tyarg.p;
@@
kind = "slab-field-access" if str(F) in SLAB_FIELDS else "cast"
add(p, kind, fn_of(p), "%s(..., struct page, %s)" % (f, F))

@sfa depends on report@
{struct page *, const struct page *} E;
identifier F = {slab_list, next, pages, pobjects, slab_cache, freelist, s_mem, counters,
                inuse, objects, frozen, active, units, rcu_head};
position p;
@@
 E@p->F

@script:python depends on report@
E << sfa.E;
F << sfa.F;
p << sfa.p;
@@
add(p, "slab-field-access", fn_of(p), "%s->%s" % (E, F))

@sfas depends on report@
struct page S;
identifier F = {slab_list, next, pages, pobjects, slab_cache, freelist, s_mem, counters,
                inuse, objects, frozen, active, units, rcu_head};
position p;
@@
 S@p.F

@script:python depends on report@
S << sfas.S;
F << sfas.F;
p << sfas.p;
@@
add(p, "slab-field-access", fn_of(p), "%s.%s" % (S, F))

@sfamember depends on report@
expression E;
identifier fld;
identifier F = {slab_list, next, pages, pobjects, slab_cache, freelist, s_mem, counters,
                inuse, objects, frozen, active, units, rcu_head};
position p;
@@
 E@p->fld->F

@script:python depends on report@
E << sfamember.E;
fld << sfamember.fld;
F << sfamember.F;
p << sfamember.p;
@@
# kept at the end if fld is a struct page member (see by_member)
by_member(str(fld), p, "slab-field-access", fn_of(p), "%s->%s->%s" % (E, fld, F))

@sfacall depends on report@
identifier g =~ "^(virt_to_head_page|virt_to_page|compound_head|pfn_to_page|slab_page|alloc_pages|alloc_page|alloc_pages_node|__alloc_pages_node)$";
expression list es;
identifier F = {slab_list, next, pages, pobjects, slab_cache, freelist, s_mem, counters,
                inuse, objects, frozen, active, units, rcu_head};
position p;
@@
 g@p(es)->F

@script:python depends on report@
g << sfacall.g;
es << sfacall.es;
F << sfacall.F;
p << sfacall.p;
@@
add(p, "slab-field-access", fn_of(p), "%s(%s)->%s" % (g, es, F))

@sfaiter depends on report@
iterator I;
{struct page *} E;
expression list es;
identifier F = {slab_list, next, pages, pobjects, slab_cache, freelist, s_mem, counters,
                inuse, objects, frozen, active, units, rcu_head};
statement S;
position p;
@@
 I@p(E, es, F) S

@script:python depends on report@
I << sfaiter.I;
E << sfaiter.E;
F << sfaiter.F;
p << sfaiter.p;
@@
add(p, "slab-field-access", fn_of(p), "%s(%s, ..., %s)" % (I, _norm(E), F))

@callarg depends on report@
identifier f;
{struct page *, const struct page *, struct page **} E;
struct page S;
identifier g =~ "^(virt_to_head_page|virt_to_page|compound_head|pfn_to_page|slab_page|alloc_pages|alloc_page|alloc_pages_node|__alloc_pages_node)$";
expression list es;
position p;
@@
 f@p(...,
(
 E
|
 g(es)
|
 &S
)
 ,...)

@script:python depends on report@
f << callarg.f;
p << callarg.p;
@@
# likely(page), unlikely(!page): branch annotations, not uses
if str(f) not in ("likely", "unlikely"):
    add(p, "call", fn_of(p), str(f))

@callmember depends on report@
identifier f, fld;
expression E2;
position p;
@@
 f@p(..., E2->fld, ...)

@script:python depends on report@
f << callmember.f;
fld << callmember.fld;
p << callmember.p;
@@
if str(f) not in ("likely", "unlikely"):
    by_member(str(fld), p, "call", fn_of(p), str(f))

@callret depends on report@
identifier f;
{struct page *, struct page **} E;
position p;
@@
 E = f@p(...)

@script:python depends on report@
f << callret.f;
p << callret.p;
@@
# container_of() and the list_entry() family are reported by tyarg
if str(f) not in TYPE_MACROS:
    add(p, "call", fn_of(p), str(f))

@callknown depends on report@
identifier g =~ "^(virt_to_head_page|virt_to_page|compound_head|pfn_to_page|slab_page|alloc_pages|alloc_page|alloc_pages_node|__alloc_pages_node)$";
position p;
@@
 g@p(...)

@script:python depends on report@
g << callknown.g;
p << callknown.p;
@@
add(p, "call", fn_of(p), str(g))

@finalize:python depends on report@
@@
members = {text.split(".", 1)[1] for (_, _, _, kind, text) in _found if kind == "field-decl"}
for fld, p, kind, func, text in _pending:
    if fld in members:
        add(p, kind, func, text)
for (file, line, col, kind, text), func in sorted(_found.items()):
    print("%s:%d:%d: residue_page: %s in %s: %s" % (file, line, col, kind, func, text))
