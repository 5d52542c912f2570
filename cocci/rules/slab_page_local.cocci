// SPDX-License-Identifier: GPL-2.0-only
/// A function that takes slab_page() of the same slab more than twice holds
/// the page in a local instead: struct page *page = slab_page(slab); as its
/// first declaration (with a blank line after it when the body has no
/// declarations), and each slab_page(slab) becomes page.  A function with a
/// preprocessor conditional between its start and a use is left as it is
/// (the local would be unused where the conditional leaves the uses out).
///
/// The slab must be a parameter that the function never assigns, nor hands
/// to an iterator such as list_for_each_entry() (a page taken before an
/// assignment would be stale), and the function must not use the name page
/// already.  slab_page() is a cast, so taking it once at the top is the
/// same value at every use, NULL included.
///
/// A later conversion may turn the page back into the slab: page_slab() of
/// the local is the slab, and a local left without any use goes.
//
// Confidence: High (the local holds the value every spl_use computed)
// Options: --no-includes

virtual patch

// A page local that a later conversion turned back into a slab:
// page_slab(page) of page = slab_page(slab) is the slab, and a local left
// without a use goes (the slab is a parameter; a file where it or the page
// is assigned after the declaration is left alone).

@spl_back_bad exists@
identifier fn, P, S;
expression E;
@@
fn(..., struct slab *S, ...) {
  ... when any
  struct page *P = slab_page(S);
  ... when any
(
  S = E
|
  P = E
)
  ... when any
}

@spl_back depends on patch && !spl_back_bad@
identifier fn, P, S;
@@
fn(..., struct slab *S, ...) {
  ... when any
  struct page *P = slab_page(S);
  <...
- page_slab(P)
+ S
  ...>
}

// A use of the local is looked for with `exists` and the local removed
// only from the functions with none: `... when != P` up to the closing
// brace lets a local go whose uses are all on paths that return early.
@initialize:python@
@@
spl_keep = set()

@spl_used exists@
identifier fn, P, S;
@@
fn(..., struct slab *S, ...) {
  ... when any
  struct page *P = slab_page(S);
  ... when any
  P
  ... when any
}

@script:python spl_keep_used@
fn << spl_used.fn;
P << spl_used.P;
@@
spl_keep.add((fn, P))

@spl_cand depends on patch && !spl_back_bad@
identifier fn, P, S;
@@
fn(..., struct slab *S, ...) {
  ... when any
  struct page *P = slab_page(S);
  ... when any
}

@script:python spl_unused_sel@
fn << spl_cand.fn;
P << spl_cand.P;
S << spl_cand.S;
uf;
up;
us;
@@
if (fn, P) in spl_keep:
    cocci.include_match(False)
else:
    coccinelle.uf = fn
    coccinelle.up = P
    coccinelle.us = S

@spl_unused depends on patch@
identifier spl_unused_sel.uf;
identifier spl_unused_sel.up;
identifier spl_unused_sel.us;
@@
uf(..., struct slab *us, ...) {
  ... when any
- struct page *up = slab_page(us);
  ... when any
}

@initialize:python@
@@
spl_seen = {}
spl_taken = set()

@spl_uses exists@
identifier fn, s;
type T;
position p, pf;
@@
T fn@pf(..., struct slab *s, ...) {
  ... when any
  slab_page@p(s)
  ... when any
}

@script:python spl_count@
fn << spl_uses.fn;
s << spl_uses.s;
p << spl_uses.p;
pf << spl_uses.pf;
@@
spl_seen.setdefault((fn, s), set()).add((p[0].line, p[0].column))
# a preprocessor conditional between the definition and a use: the local
# could be unused where the conditional leaves the uses out
with open(pf[0].file) as spl_f:
    spl_lines = spl_f.read().splitlines()[int(pf[0].line):int(p[0].line)]
if any(l.lstrip().startswith("#if") for l in spl_lines):
    spl_taken.add((fn, s))

@spl_assigned exists@
identifier spl_uses.fn;
identifier spl_uses.s;
expression E;
position pa;
@@
fn(...) {
  ... when any
(
  s@pa = E
|
  &s@pa
)
  ... when any
}

@script:python spl_not_assigned@
fn << spl_uses.fn;
s << spl_uses.s;
pa << spl_assigned.pa;
@@
spl_taken.add((fn, s))

@spl_iterated exists@
identifier spl_uses.fn;
identifier spl_uses.s;
iterator I;
statement S1;
position pi;
@@
fn(...) {
  ... when any
  I(..., s@pi, ...) S1
  ... when any
}

@script:python spl_not_iterated@
fn << spl_uses.fn;
s << spl_uses.s;
pi << spl_iterated.pi;
@@
spl_taken.add((fn, s))

@spl_named exists@
identifier spl_uses.fn;
symbol page;
position pn;
@@
fn(...) {
  ... when any
  page@pn
  ... when any
}

@script:python spl_has_page@
fn << spl_uses.fn;
pn << spl_named.pn;
@@
spl_taken.add((fn, None))

@script:python spl_sel@
fn << spl_uses.fn;
s << spl_uses.s;
f;
v;
@@
if len(spl_seen.get((fn, s), ())) < 3 or (fn, s) in spl_taken or (fn, None) in spl_taken:
    cocci.include_match(False)
else:
    coccinelle.f = fn
    coccinelle.v = s

// The local goes first, as in the seeds; a body that starts with a
// statement gets a blank line after it.  (`when any`: the other
// declarations match d too.)
@initialize:python@
@@
spl_has_decl = set()

@spl_first@
identifier spl_sel.f;
declaration d;
position p0;
@@
f(...) {
  d@p0
  ... when any
}

@script:python spl_first_seen@
f << spl_sel.f;
p0 << spl_first.p0;
@@
spl_has_decl.add(f)

@script:python spl_ok@
f << spl_sel.f;
v << spl_sel.v;
p0 << spl_first.p0;
h;
u;
@@
coccinelle.h = f
coccinelle.u = v

@spl_decl depends on patch@
identifier spl_ok.h;
identifier spl_ok.u;
position pd;
@@
h@pd(...) {
+ struct page *page = slab_page(u);
  ...
}

@script:python spl_declared@
f << spl_ok.h;
v << spl_ok.u;
pd << spl_decl.pd;
g;
w;
@@
coccinelle.g = f
coccinelle.w = v

@spl_use depends on patch@
identifier spl_declared.g;
identifier spl_declared.w;
@@
g(...) {
  <...
(
  struct page *page = slab_page(w);
|
- slab_page(w)
+ page
)
  ...>
}

// functions whose body starts with a statement (after the others: a
// binding this script leaves out is gone for the rules after it)
@script:python spl_ok_bare@
f << spl_sel.f;
v << spl_sel.v;
hb;
ub;
@@
if f in spl_has_decl:
    cocci.include_match(False)
else:
    coccinelle.hb = f
    coccinelle.ub = v

@spl_decl_bare depends on patch@
identifier spl_ok_bare.hb;
identifier spl_ok_bare.ub;
position pd;
@@
hb@pd(...) {
+ struct page *page = slab_page(ub);
+
  ...
}

@script:python spl_declared_bare@
f << spl_ok_bare.hb;
v << spl_ok_bare.ub;
pd << spl_decl_bare.pd;
g;
w;
@@
coccinelle.g = f
coccinelle.w = v

@spl_use_bare depends on patch@
identifier spl_declared_bare.g;
identifier spl_declared_bare.w;
@@
g(...) {
  <...
(
  struct page *page = slab_page(w);
|
- slab_page(w)
+ page
)
  ...>
}
