// SPDX-License-Identifier: GPL-2.0-only
/// A function that takes page_slab() of the same page more than once holds
/// the slab in a local instead: struct slab *slab; with the page's
/// declaration, slab = page_slab(page); where the page is known not to be
/// NULL, and each later page_slab(page) becomes slab.  page_slab() reads
/// the page (compound_head()), so the local is set only where it cannot be
/// NULL: right after page = virt_to_head_page(...), after a NULL test
/// that returns, or after a NULL test whose branch gets the page again and
/// leaves the function or jumps to a label when that fails too
/// (allocate_slab()'s retry at a lower order:
/// `if (!page) { ... page = f(...); if (!page) goto out; ... }`).  A call on the page that a test of it guards just before
/// that NULL test, `if (page) f(page_slab(page)); if (!page) return R;`,
/// moves after the test first (it runs exactly when it did).
///
/// A slab local an earlier entry set this way (slab = page_slab(page);)
/// takes the page_slab(page) a later conversion adds after it, under the
/// same conditions.
///
/// The page must be a local the function declares as struct page *page;
/// and does not assign after that point; the function must not use the
/// name slab already.  Uses before that point keep page_slab().  A label
/// between that point and a later use is a way around the slab's
/// assignment: the function is left alone unless every goto to the label
/// is the failure of a NULL test of the page and a NULL test of the page
/// that returns comes after the label (so a use there is reached only
/// through the assignment).
//
// Confidence: High (the local holds the value every replaced use computed)
// Options: --no-includes
// slabconv: acts-where 2 \bpage_slab\((\w+)\)

virtual patch

@initialize:python@
@@
psl_all = {}

@psl_every exists@
identifier f, P;
position p;
@@
f(...) {
  ... when any
  page_slab@p(P)
  ... when any
}

@script:python psl_every_count@
f << psl_every.f;
P << psl_every.P;
p << psl_every.p;
@@
psl_all.setdefault((f, P), set()).add((p[0].line, p[0].column))

// if (page) f(page_slab(page)); if (!page) return R;  ->  the test first
@psl_late exists@
identifier f, X, F;
expression list es;
expression R;
position pt;
@@
f(...) {
  ... when any
  if (X@pt)
    F(es);
  if (!X)
    return R;
  ... when any
}

@script:python psl_late_sel@
f << psl_late.f;
X << psl_late.X;
es << psl_late.es;
ff;
xx;
@@
args = str(es).replace(" ", "")
if (len(psl_all.get((f, X), ())) < 2 or ("page_slab(%s)" % X) not in args
        or ("&" + X) in args):
    cocci.include_match(False)
else:
    coccinelle.ff = f
    coccinelle.xx = X

@psl_move depends on patch@
identifier psl_late_sel.ff, psl_late_sel.xx;
position psl_late.pt;
identifier F;
expression list es;
expression R;
@@
ff(...) {
  ... when any
- if (xx@pt)
-   F(es);
  if (!xx)
    return R;
+ F(es);
  ... when any
}

@initialize:python@
@@
import re as psl_re

def psl_labels_ok(path, first, page, last):
    """Every label between lines first and last (1-based) is reached by
    gotos only on the failure of a NULL test of the page, and a NULL test
    of the page that returns follows it before any other statement that
    uses the page."""
    with open(path) as fh:
        lines = fh.read().splitlines()
    start = first
    while start > 1 and not psl_re.match(r"[A-Za-z_]", lines[start - 1]):
        start -= 1
    end = first
    while end < len(lines) and lines[end - 1] != "}":
        end += 1
    null = r"\s*if \((?:unlikely\()?!%s\)?\)" % psl_re.escape(page)
    for k in range(first, last):
        m = psl_re.match(r"(\w+):\s*$", lines[k - 1])
        if not m:
            continue
        label = m.group(1)
        for i in range(start, end + 1):
            if psl_re.search(r"\bgoto %s;" % label, lines[i - 1]):
                here = lines[i - 1]
                prev = lines[i - 2] if i > 1 else ""
                if not (psl_re.match(null + r"\s*goto", here)
                        or (psl_re.match(null + r"\s*$", prev) and here.strip() == "goto %s;" % label)):
                    return False
        guarded = False
        for i in range(k + 1, last + 1):
            s = lines[i - 1]
            if psl_re.match(null + r"\s*$", s) and i < len(lines) \
                    and lines[i].strip().startswith("return"):
                guarded = True
                break
            if psl_re.search(r"\b%s\b" % psl_re.escape(page), s):
                break
        if not guarded:
            return False
    return True

def psl_stmt_end(path, line):
    """The last line of the statement that starts on `line` (a block's
    closing brace; the line itself otherwise)."""
    with open(path) as fh:
        lines = fh.read().splitlines()
    if "{" not in lines[line - 1]:
        return line
    depth = 0
    for i in range(line, len(lines) + 1):
        depth += lines[i - 1].count("{") - lines[i - 1].count("}")
        if depth <= 0:
            return i
    return line

psl_uses = {}
psl_assigned = {}
psl_taken = set()
psl_local = set()

@psl_known exists@
identifier f, P, L;
expression E, E2, R;
position pn, pu;
@@
f(...) {
  ... when any
(
  P@pn = virt_to_head_page(E);
|
  if (!P@pn) return R;
|
  if (!P@pn) { ... return R; }
|
  if (unlikely(!P@pn)) return R;
|
  if (unlikely(!P@pn)) { ... return R; }
|
  if (!P@pn) {
    ...
    P = E;
    if (!P) goto L;
    ... when != P = E2
  }
|
  if (unlikely(!P@pn)) {
    ...
    P = E;
    if (unlikely(!P)) goto L;
    ... when != P = E2
  }
|
  if (!P@pn) {
    ...
    P = E;
    if (!P) return R;
    ... when != P = E2
  }
|
  if (unlikely(!P@pn)) {
    ...
    P = E;
    if (unlikely(!P)) return R;
    ... when != P = E2
  }
)
  ... when != P = E2
      when != &P
      when any
  page_slab@pu(P)
  ... when any
}

@script:python psl_count@
f << psl_known.f;
P << psl_known.P;
pn << psl_known.pn;
pu << psl_known.pu;
@@
psl_uses.setdefault((f, P, pn[0].line), set()).add((pu[0].line, pu[0].column))

@psl_decl_seen exists@
identifier psl_known.f, psl_known.P;
position pd;
@@
f(...) {
  ... when any
  struct page *P@pd;
  ... when any
}

@script:python psl_decl_ok@
f << psl_known.f;
P << psl_known.P;
pd << psl_decl_seen.pd;
@@
psl_local.add((f, P))

@psl_assign exists@
identifier psl_known.f, psl_known.P;
expression E;
position pa;
@@
f(...) {
  ... when any
(
  P@pa = E
|
  &P@pa
)
  ... when any
}

@script:python psl_assign_seen@
f << psl_known.f;
P << psl_known.P;
pa << psl_assign.pa;
@@
psl_assigned.setdefault((f, P), []).append(int(pa[0].line))

@psl_named exists@
identifier psl_known.f;
symbol slab;
position pz;
@@
f(...) {
  ... when any
  slab@pz
  ... when any
}

@script:python psl_named_seen@
f << psl_known.f;
pz << psl_named.pz;
@@
psl_taken.add(f)

@psl_named_param@
identifier psl_known.f;
symbol slab;
type T;
position pz;
@@
f(..., T slab@pz, ...) {
  ... when any
}

@script:python psl_named_param_seen@
f << psl_known.f;
pz << psl_named_param.pz;
@@
psl_taken.add(f)

@psl_named_decl exists@
identifier psl_known.f;
symbol slab;
type T;
expression E;
position pz;
@@
f(...) {
  ... when any
(
  T slab@pz;
|
  T slab@pz = E;
)
  ... when any
}

@script:python psl_named_decl_seen@
f << psl_known.f;
pz << psl_named_decl.pz;
@@
psl_taken.add(f)

@script:python psl_sel@
f << psl_known.f;
P << psl_known.P;
pn << psl_known.pn;
g;
q;
@@
line = int(pn[0].line)
later = [a for a in psl_assigned.get((f, P), []) if a > psl_stmt_end(pn[0].file, line)]
# the point must be a statement of the function's body itself (one tab in),
# not inside a branch: then it comes before every use after it
with open(pn[0].file) as psl_f:
    text = psl_f.read().splitlines()[line - 1]
top = text.startswith("\t") and not text.startswith("\t\t")
ok_labels = psl_labels_ok(pn[0].file, line, P,
                          max(int(l) for l, _ in psl_uses.get((f, P, pn[0].line), {(line, 0)})))
if (len(psl_uses.get((f, P, pn[0].line), ())) < 2 or f in psl_taken
        or (f, P) not in psl_local or later or not top or not ok_labels):
    cocci.include_match(False)
else:
    coccinelle.g = f
    coccinelle.q = P

// the slab, taken once where the page is known not to be NULL
@psl_ins depends on patch@
identifier psl_sel.g, psl_sel.q;
position psl_known.pn;
identifier L;
expression E, R;
position pi;
@@
g@pi(...) {
  ... when any
(
  q@pn = virt_to_head_page(E);
+ slab = page_slab(q);
|
  if (!q@pn) return R;
+ slab = page_slab(q);
|
  if (!q@pn) { ... return R; }
+ slab = page_slab(q);
|
  if (unlikely(!q@pn)) return R;
+ slab = page_slab(q);
|
  if (unlikely(!q@pn)) { ... return R; }
+ slab = page_slab(q);
|
  if (!q@pn) {
    ...
    q = E;
    if (!q) goto L;
    ...
  }
+ slab = page_slab(q);
|
  if (unlikely(!q@pn)) {
    ...
    q = E;
    if (unlikely(!q)) goto L;
    ...
  }
+ slab = page_slab(q);
|
  if (!q@pn) {
    ...
    q = E;
    if (!q) return R;
    ...
  }
+ slab = page_slab(q);
|
  if (unlikely(!q@pn)) {
    ...
    q = E;
    if (unlikely(!q)) return R;
    ...
  }
+ slab = page_slab(q);
)
  ... when any
}

// only where the slab was set (the rules below change nothing elsewhere)
@script:python psl_done@
g << psl_sel.g;
q << psl_sel.q;
pi << psl_ins.pi;
dg;
dq;
@@
coccinelle.dg = g
coccinelle.dq = q

@psl_use depends on patch@
identifier psl_done.dg;
identifier psl_done.dq;
@@
dg(...) {
  ... when any
  slab = page_slab(dq);
  <...
- page_slab(dq)
+ slab
  ...>
}

@psl_decl depends on patch@
identifier psl_done.dg;
identifier psl_done.dq;
@@
dg(...) {
  ... when any
  struct page *dq;
+ struct slab *slab;
  ... when any
}

// A slab local set earlier: later page_slab(page) are the slab
@initialize:python@
@@
psa_set = {}
psa_passign = {}
psa_sassign = {}
psa_uses = {}

@psa_set_seen exists@
identifier f, S, P;
position pf, ps;
@@
f@pf(...) {
  ... when any
  S@ps = page_slab(P);
  ... when any
}

@script:python psa_set_rec@
f << psa_set_seen.f;
S << psa_set_seen.S;
P << psa_set_seen.P;
pf << psa_set_seen.pf;
ps << psa_set_seen.ps;
@@
psa_set.setdefault((f, S, P, pf[0].file, pf[0].line), []).append(int(ps[0].line))

@psa_pa exists@
identifier psa_set_seen.f, psa_set_seen.P;
position psa_set_seen.pf;
expression E;
position pa;
@@
f@pf(...) {
  ... when any
(
  P@pa = E
|
  &P@pa
)
  ... when any
}

@script:python psa_pa_rec@
f << psa_set_seen.f;
S << psa_set_seen.S;
P << psa_set_seen.P;
pf << psa_set_seen.pf;
pa << psa_pa.pa;
@@
psa_passign.setdefault((f, S, P, pf[0].file, pf[0].line), set()).add(int(pa[0].line))

@psa_sa exists@
identifier psa_set_seen.f, psa_set_seen.S;
position psa_set_seen.pf;
expression E;
position pa;
@@
f@pf(...) {
  ... when any
(
  S@pa = E
|
  &S@pa
)
  ... when any
}

@script:python psa_sa_rec@
f << psa_set_seen.f;
S << psa_set_seen.S;
P << psa_set_seen.P;
pf << psa_set_seen.pf;
pa << psa_sa.pa;
@@
psa_sassign.setdefault((f, S, P, pf[0].file, pf[0].line), set()).add(int(pa[0].line))

@psa_use exists@
identifier psa_set_seen.f, psa_set_seen.P;
position psa_set_seen.pf;
position pu;
@@
f@pf(...) {
  ... when any
  page_slab@pu(P)
  ... when any
}

@script:python psa_use_rec@
f << psa_set_seen.f;
S << psa_set_seen.S;
P << psa_set_seen.P;
pf << psa_set_seen.pf;
pu << psa_use.pu;
@@
psa_uses.setdefault((f, S, P, pf[0].file, pf[0].line), set()).add(int(pu[0].line))

@script:python psa_sel@
f << psa_set_seen.f;
S << psa_set_seen.S;
P << psa_set_seen.P;
pf << psa_set_seen.pf;
af;
asl;
ap;
@@
k = (f, S, P, pf[0].file, pf[0].line)
sets = psa_set.get(k, [])
ok = len(sets) == 1 and psa_sassign.get(k, set()) == {sets[0]}
if ok:
    at = sets[0]
    later = [u for u in psa_uses.get(k, ()) if u > at]
    ok = (bool(later) and not [a for a in psa_passign.get(k, ()) if a > at]
          and psl_labels_ok(pf[0].file, at, P, max(later)))
if not ok:
    cocci.include_match(False)
else:
    coccinelle.af = f
    coccinelle.asl = S
    coccinelle.ap = P

@psa_again depends on patch@
identifier psa_sel.af, psa_sel.asl, psa_sel.ap;
@@
af(...) {
  ... when any
  asl = page_slab(ap);
  <...
- page_slab(ap)
+ asl
  ...>
}
