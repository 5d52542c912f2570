// SPDX-License-Identifier: GPL-2.0-only
/// A slab local that the function assigns (___slab_alloc()'s slab, read
/// from the cpu slab, the partial list, get_partial() and new_slab()) and
/// that it takes slab_page() of more than twice while it holds one value
/// gets a page local that follows it: struct page *page; after the slab's
/// declaration (struct page *page = slab_page(slab); when the declaration
/// sets the slab), page = slab_page(slab); right after each statement that
/// gives the slab a new value (slab = E;, x = f(..., &slab, ...);,
/// f(..., &slab, ...);), and each slab_page(slab) becomes page.  The page
/// is then slab_page() of the slab's current value wherever the slab has
/// one: no statement comes between a new value and its page.
///
/// "One value": the uses after an assignment, up to the next one, in the
/// order of the text.  A slab taken three times in all but at most twice
/// per value (a loop's cursor, a list walked twice) keeps slab_page().
///
/// Left alone: a slab that is a parameter (slab_page_local.cocci), the
/// cursor of an iterator, a slab assigned inside a condition or any other
/// expression (there is no statement after which to follow it), a
/// function that uses the name page already or has a preprocessor
/// conditional between the slab's declaration and its last use, and a name
/// defined twice in the file (the rules below name the function).
///
/// A later conversion may make a callee take the slab: page_slab(page) of
/// such a page is the slab.  A page that no value of the slab uses more
/// than twice any more goes: its uses become slab_page(slab) again, and
/// the declaration and the assignments that followed the slab are removed.
//
// Confidence: High (the page is assigned right after every new value of
// the slab, and nowhere else)
// Options: --no-includes
// slabconv: acts-where 3 \bslab_page\((\w+)\)
// slabconv: acts-where 1 \bstruct\s+page\s*\*\s*\w+\s*=\s*slab_page\(
// slabconv: acts-where 1 ^\s*\w+\s*=\s*slab_page\(\w+\);

virtual patch

@initialize:python@
@@
import re as spf_re

def spf_most(defs, uses):
    """The most uses that one value gets: each use counts for the last
    definition before it in the text (positions are (line, column))."""
    defs = sorted(defs)
    per = {}
    for u in uses:
        d = None
        for x in defs:
            if x < u:
                d = x
        per[d] = per.get(d, 0) + 1
    return max(per.values()) if per else 0

def spf_conditional(path, first, last):
    """A preprocessor conditional between lines first and last."""
    with open(path) as f:
        lines = f.read().splitlines()[first - 1:last]
    return any(spf_re.match(r"\s*#\s*(if|else|elif|endif)", l) for l in lines)

def spf_pos(p):
    return (int(p[0].line), int(p[0].column))

# ---------------------------------------------------------------------------
// A page that follows a slab (made by the rules further down in an earlier
// run): page_slab(page) is the slab; a page no value uses more than twice
// goes.  Facts are keyed by the position of the function's name, read in
// one pass with no change in between.

@initialize:python@
@@
spb_refresh = {}
spb_passign = {}
spb_sdefs = {}
spb_followed = {}
spb_iter = set()
spb_decl = set()
spb_names = {}

@spb_ref exists@
identifier fn, P, S;
position pf, pr;
@@
fn@pf(...) {
  ... when any
  P@pr = slab_page(S);
  ... when any
}

@script:python spb_ref_seen@
fn << spb_ref.fn;
P << spb_ref.P;
S << spb_ref.S;
pf << spb_ref.pf;
pr << spb_ref.pr;
@@
spb_key = (fn, P, S, pf[0].file, pf[0].line)
spb_refresh.setdefault(spb_key, set()).add(spf_pos(pr))
spb_names.setdefault((fn, pf[0].file), set()).add(pf[0].line)

@spb_pa exists@
identifier spb_ref.fn, spb_ref.P;
expression E;
position spb_ref.pf, pa;
@@
fn@pf(...) {
  ... when any
(
  P@pa = E
|
  &P@pa
)
  ... when any
}

@script:python spb_pa_seen@
fn << spb_ref.fn;
P << spb_ref.P;
S << spb_ref.S;
pf << spb_ref.pf;
pa << spb_pa.pa;
@@
spb_passign.setdefault((fn, P, S, pf[0].file, pf[0].line), set()).add(spf_pos(pa))

@spb_sd exists@
identifier spb_ref.fn, spb_ref.S;
expression E;
position spb_ref.pf, pa;
@@
fn@pf(...) {
  ... when any
(
  S@pa = E
|
  &S@pa
)
  ... when any
}

@script:python spb_sd_seen@
fn << spb_ref.fn;
P << spb_ref.P;
S << spb_ref.S;
pf << spb_ref.pf;
pa << spb_sd.pa;
@@
spb_sdefs.setdefault((fn, P, S, pf[0].file, pf[0].line), set()).add(spf_pos(pa))

@spb_it exists@
identifier spb_ref.fn, spb_ref.S;
iterator I;
statement S1;
position spb_ref.pf, pi;
@@
fn@pf(...) {
  ... when any
  I(..., S@pi, ...) S1
  ... when any
}

@script:python spb_it_seen@
fn << spb_ref.fn;
P << spb_ref.P;
S << spb_ref.S;
pf << spb_ref.pf;
pi << spb_it.pi;
@@
spb_iter.add((fn, P, S, pf[0].file, pf[0].line))

@spb_fw exists@
identifier spb_ref.fn, spb_ref.P, spb_ref.S;
expression E, E1;
identifier F;
position spb_ref.pf, pa;
@@
fn@pf(...) {
  ... when any
(
  S@pa = E;
|
  E1 = F(..., &S@pa, ...);
|
  F(..., &S@pa, ...);
)
  P = slab_page(S);
  ... when any
}

@script:python spb_fw_seen@
fn << spb_ref.fn;
P << spb_ref.P;
S << spb_ref.S;
pf << spb_ref.pf;
pa << spb_fw.pa;
@@
spb_followed.setdefault((fn, P, S, pf[0].file, pf[0].line), set()).add(spf_pos(pa))

@spb_dc exists@
identifier spb_ref.fn, spb_ref.P, spb_ref.S;
expression E;
position spb_ref.pf, pdc;
@@
fn@pf(...) {
  ... when any
(
  struct slab *S = E;
  struct page *P@pdc = slab_page(S);
|
  struct slab *S;
  struct page *P@pdc;
)
  ... when any
}

@script:python spb_dc_seen@
fn << spb_ref.fn;
P << spb_ref.P;
S << spb_ref.S;
pf << spb_ref.pf;
pdc << spb_dc.pdc;
@@
spb_decl.add((fn, P, S, pf[0].file, pf[0].line))

@script:python spb_sel@
fn << spb_ref.fn;
P << spb_ref.P;
S << spb_ref.S;
pf << spb_ref.pf;
bf;
bp;
bs;
@@
spb_key = (fn, P, S, pf[0].file, pf[0].line)
spb_ok = (spb_key in spb_decl and spb_key not in spb_iter
          and len(spb_names.get((fn, pf[0].file), ())) == 1
          and spb_passign.get(spb_key, set()) == spb_refresh.get(spb_key, set())
          and spb_sdefs.get(spb_key, set()) == spb_followed.get(spb_key, set()))
if not spb_ok:
    cocci.include_match(False)
else:
    coccinelle.bf = fn
    coccinelle.bp = P
    coccinelle.bs = S

@spb_back depends on patch@
identifier spb_sel.bf, spb_sel.bp, spb_sel.bs;
@@
bf(...) {
  <+...
- page_slab(bp)
+ bs
  ...+>
}

// what is left of the page, read after the fold back
@initialize:python@
@@
spd_uses = {}
spd_refresh = {}
spd_sdefs = {}

@spd_ref exists@
identifier spb_sel.bf, spb_sel.bp, spb_sel.bs;
position pf, pr;
@@
bf@pf(...) {
  ... when any
  bp@pr = slab_page(bs);
  ... when any
}

@script:python spd_ref_seen@
f << spb_sel.bf;
pf << spd_ref.pf;
pr << spd_ref.pr;
@@
spd_refresh.setdefault(f, set()).add(spf_pos(pr))

@spd_use exists@
identifier spb_sel.bf, spb_sel.bp;
position pu;
@@
bf(...) {
  ... when any
  bp@pu
  ... when any
}

@script:python spd_use_seen@
f << spb_sel.bf;
pu << spd_use.pu;
@@
spd_uses.setdefault(f, set()).add(spf_pos(pu))

@spd_sd exists@
identifier spb_sel.bf, spb_sel.bs;
expression E;
position pa;
@@
bf(...) {
  ... when any
(
  bs@pa = E
|
  &bs@pa
)
  ... when any
}

@script:python spd_sd_seen@
f << spb_sel.bf;
pa << spd_sd.pa;
@@
spd_sdefs.setdefault(f, set()).add(spf_pos(pa))

@script:python spd_sel@
f << spb_sel.bf;
p << spb_sel.bp;
s << spb_sel.bs;
df;
dp;
ds;
@@
spd_left = spd_uses.get(f, set()) - spd_refresh.get(f, set())
if spf_most(spd_sdefs.get(f, set()), spd_left) > 2:
    cocci.include_match(False)
else:
    coccinelle.df = f
    coccinelle.dp = p
    coccinelle.ds = s

@spd_rm depends on patch@
identifier spd_sel.df, spd_sel.dp, spd_sel.ds;
@@
df(...) {
  <+...
- dp = slab_page(ds);
  ...+>
}

@spd_rm_decl depends on patch@
identifier spd_sel.df, spd_sel.dp, spd_sel.ds;
@@
df(...) {
  ... when any
(
- struct page *dp = slab_page(ds);
|
- struct page *dp;
)
  ... when any
}

@spd_put depends on patch@
identifier spd_sel.df, spd_sel.dp, spd_sel.ds;
@@
df(...) {
  <+...
- dp
+ slab_page(ds)
  ...+>
}

// ---------------------------------------------------------------------------
// A new page that follows a slab local

@initialize:python@
@@
spf_uses = {}
spf_defs = {}
spf_stmts = {}
spf_init = {}
spf_decls = {}
spf_iter = set()
spf_named = set()
spf_names = {}

@spf_local exists@
identifier fn, S;
type T;
position pf, pd;
@@
T fn@pf(...) {
  ... when any
  struct slab *S@pd;
  ... when any
}

@script:python spf_local_seen@
fn << spf_local.fn;
S << spf_local.S;
pf << spf_local.pf;
pd << spf_local.pd;
@@
spf_decls.setdefault((fn, S, pf[0].file, pf[0].line), set()).add(spf_pos(pd))
spf_names.setdefault((fn, pf[0].file), set()).add(pf[0].line)

@spf_local_init exists@
identifier fn, S;
type T;
expression E;
position pf, pd;
@@
T fn@pf(...) {
  ... when any
  struct slab *S@pd = E;
  ... when any
}

@script:python spf_local_init_seen@
fn << spf_local_init.fn;
S << spf_local_init.S;
pf << spf_local_init.pf;
pd << spf_local_init.pd;
@@
spf_decls.setdefault((fn, S, pf[0].file, pf[0].line), set()).add(spf_pos(pd))
spf_init[(fn, S, pf[0].file, pf[0].line)] = spf_pos(pd)
spf_names.setdefault((fn, pf[0].file), set()).add(pf[0].line)

@spf_use exists@
identifier fn, S;
type T;
position pf, pu;
@@
T fn@pf(...) {
  ... when any
  slab_page@pu(S)
  ... when any
}

@script:python spf_use_seen@
fn << spf_use.fn;
S << spf_use.S;
pf << spf_use.pf;
pu << spf_use.pu;
@@
spf_uses.setdefault((fn, S, pf[0].file, pf[0].line), set()).add(spf_pos(pu))

@spf_def exists@
identifier spf_use.fn, spf_use.S;
expression E;
position spf_use.pf, pa;
@@
fn@pf(...) {
  ... when any
(
  S@pa = E
|
  &S@pa
)
  ... when any
}

@script:python spf_def_seen@
fn << spf_use.fn;
S << spf_use.S;
pf << spf_use.pf;
pa << spf_def.pa;
@@
spf_defs.setdefault((fn, S, pf[0].file, pf[0].line), set()).add(spf_pos(pa))

@spf_stmt exists@
identifier spf_use.fn, spf_use.S;
expression E, E1;
identifier F;
position spf_use.pf, pa;
@@
fn@pf(...) {
  ... when any
(
  S@pa = E;
|
  E1 = F(..., &S@pa, ...);
|
  F(..., &S@pa, ...);
)
  ... when any
}

@script:python spf_stmt_seen@
fn << spf_use.fn;
S << spf_use.S;
pf << spf_use.pf;
pa << spf_stmt.pa;
@@
spf_stmts.setdefault((fn, S, pf[0].file, pf[0].line), set()).add(spf_pos(pa))

@spf_it exists@
identifier spf_use.fn, spf_use.S;
iterator I;
statement S1;
position spf_use.pf, pi;
@@
fn@pf(...) {
  ... when any
  I(..., S@pi, ...) S1
  ... when any
}

@script:python spf_it_seen@
fn << spf_use.fn;
S << spf_use.S;
pf << spf_use.pf;
pi << spf_it.pi;
@@
spf_iter.add((fn, S, pf[0].file, pf[0].line))

@spf_nm exists@
identifier spf_use.fn;
symbol page;
position spf_use.pf, pn;
@@
fn@pf(...) {
  ... when any
  page@pn
  ... when any
}

@script:python spf_nm_seen@
fn << spf_use.fn;
pf << spf_use.pf;
pn << spf_nm.pn;
@@
spf_named.add((fn, pf[0].file, pf[0].line))

@script:python spf_sel@
fn << spf_use.fn;
S << spf_use.S;
pf << spf_use.pf;
f;
v;
@@
spf_key = (fn, S, pf[0].file, pf[0].line)
spf_u = spf_uses.get(spf_key, set())
# (an initialiser matches S = E too: it is the declaration's, not a statement)
spf_d = spf_defs.get(spf_key, set()) - {spf_init.get(spf_key)}
spf_ok = (len(spf_decls.get(spf_key, ())) == 1
          and len(spf_names.get((fn, pf[0].file), ())) == 1
          and spf_key not in spf_iter
          and (fn, pf[0].file, pf[0].line) not in spf_named
          and spf_d == spf_stmts.get(spf_key, set())
          and (spf_d or spf_key in spf_init))
if spf_ok:
    spf_defs_all = set(spf_d) | ({spf_init[spf_key]} if spf_key in spf_init else set())
    spf_ok = spf_most(spf_defs_all, spf_u) > 2
if spf_ok:
    spf_first = min(spf_decls[spf_key])[0]
    spf_last = max(max(spf_u), max(spf_d) if spf_d else (0, 0))[0]
    spf_ok = not spf_conditional(pf[0].file, spf_first, spf_last)
if not spf_ok:
    cocci.include_match(False)
else:
    coccinelle.f = fn
    coccinelle.v = S

// <... ...> (zero uses or more), not <+... ...+>: in ___slab_alloc()'s
// gotos the one-or-more form takes spatch a minute instead of a second;
// where spf_sel chose a function, spf_decl changes it anyway.
@spf_rep depends on patch@
identifier spf_sel.f, spf_sel.v;
@@
f(...) {
  <...
- slab_page(v)
+ page
  ...>
}

@spf_decl depends on patch@
identifier spf_sel.f, spf_sel.v;
expression E;
@@
f(...) {
  ... when any
(
  struct slab *v = E;
+ struct page *page = slab_page(v);
|
  struct slab *v;
+ struct page *page;
)
  ... when any
}

@spf_refresh depends on patch@
identifier spf_sel.f, spf_sel.v;
expression E, E1;
identifier F;
@@
f(...) {
  <+...
(
  v = E;
+ page = slab_page(v);
|
  E1 = F(..., &v, ...);
+ page = slab_page(v);
|
  F(..., &v, ...);
+ page = slab_page(v);
)
  ...+>
}
