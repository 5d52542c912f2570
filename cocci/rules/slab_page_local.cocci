// SPDX-License-Identifier: GPL-2.0-only
/// A function that takes slab_page() of the same slab more than twice holds
/// the page in a local instead: struct page *page = slab_page(slab); as its
/// first declaration (with a blank line after it when the body has no
/// declarations), and each slab_page(slab) becomes page.  Under a
/// preprocessor conditional: when at least one use is outside every
/// conditional of the function, the local goes at the top as above (it is
/// used whatever the configuration); when every use is inside the one
/// conditional block the body starts with, the local is that block's first
/// declaration; otherwise the function is left as it is (the local would be
/// unused where a conditional leaves the uses out).  The local goes into
/// the definition the uses were counted in, not into another definition of
/// the same name (a stub under #else).
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
// slabconv: acts-where 3 \bslab_page\((\w+)\)
// slabconv: acts-where 1 \bstruct\s+page\s*\*\s*\w+\s*=\s*slab_page\(
// slabconv: acts-where 1 ^\s*\w+\s*=\s*slab_page\(\w+\);

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
  <+...
- page_slab(P)
+ S
  ...+>
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

// The same for a local that is the first declaration of the conditional
// block the body starts with (a declaration under a conditional is not
// matched in the context of its function: the function's text says where
// it is, and the rules name its line).
@initialize:python@
@@
import re as splb_re
splb_back = set()

def splb_range(path, line):
    """The lines of the function whose name is on `line`: to its closing
    brace in the first column."""
    with open(path) as fh:
        lines = fh.read().splitlines()
    end = line
    while end < len(lines) and lines[end - 1] != "}":
        end += 1
    return lines, line, end

def splb_local(path, line, S, P):
    """The function holds struct page *P = slab_page(S); under the
    conditional its body starts with, and assigns neither S nor P."""
    lines, first, end = splb_range(path, line)
    body = "\n".join(lines[first - 1:end])
    decl = splb_re.findall(r"^\s*struct page \*%s = slab_page\(%s\);" % (P, S), body, splb_re.M)
    if len(decl) != 1:
        return False
    code = splb_re.sub(r"^\s*struct page \*%s = slab_page\(%s\);" % (P, S), "", body, flags=splb_re.M)
    for n in (S, P):
        if splb_re.search(r"(?<![\w.>])%s\s*=(?!=)|&\s*%s\b" % (n, n), code):
            return False
    return True

@splb_fn exists@
identifier fn, P, S;
type T;
position pf, pu;
@@
T fn@pf(..., struct slab *S, ...) {
  ... when any
  page_slab@pu(P)
  ... when any
}

@script:python splb_sel@
fn << splb_fn.fn;
P << splb_fn.P;
S << splb_fn.S;
pf << splb_fn.pf;
pu << splb_fn.pu;
bf;
bp;
bs;
@@
if splb_local(pf[0].file, int(pf[0].line), S, P):
    splb_back.add((fn, P, S))
    coccinelle.bf = fn
    coccinelle.bp = P
    coccinelle.bs = S
else:
    cocci.include_match(False)

@splb_back depends on patch@
identifier splb_sel.bf, splb_sel.bp, splb_sel.bs;
@@
bf(...) {
  <...
- page_slab(bp)
+ bs
  ...>
}

// what is left of the page, read again after the fold back
@initialize:python@
@@
splb_used = set()
splb_fns = {}
splb_gone = set()

@splb_fn2@
identifier splb_sel.bf;
type T;
position pf;
@@
T bf@pf(...) {
  ... when any
}

@script:python splb_fn2_seen@
fn << splb_sel.bf;
pf << splb_fn2.pf;
@@
splb_fns.setdefault(fn, []).append((pf[0].file, int(pf[0].line)))

@splb_use exists@
identifier splb_sel.bf, splb_sel.bp;
type T;
position pu;
@@
T bf(...) {
  ... when any
  bp@pu
  ... when any
}

@script:python splb_use_seen@
fn << splb_sel.bf;
P << splb_sel.bp;
pu << splb_use.pu;
@@
splb_used.add((fn, P))

@splb_decl@
identifier P, S;
position pd;
@@
struct page *P@pd = slab_page(S);

@script:python splb_decl_seen@
P << splb_decl.P;
S << splb_decl.S;
pd << splb_decl.pd;
@@
for (fn, bp, bs) in splb_back:
    if bp != P or bs != S or (fn, P) in splb_used:
        continue
    for (path, line) in splb_fns.get(fn, []):
        _, first, end = splb_range(path, line)
        if path == pd[0].file and first < int(pd[0].line) < end:
            splb_gone.add((pd[0].file, pd[0].line, pd[0].column))

@splb_rm depends on patch@
identifier P, S;
position pd : script:python() { (pd[0].file, pd[0].line, pd[0].column) in splb_gone };
@@
- struct page *P@pd = slab_page(S);

@initialize:python@
@@
import re as spl_re
spl_seen = {}
spl_taken = set()
spl_file = {}
# (file, line, column) of the name of each function that gets the local
# at its top, and (file, line) of the declaration it goes before when it
# goes into the conditional block the body starts with
spl_top = set()
spl_inblock = set()
spl_at = {}
spl_slab = {}

def spl_seen_slab(pb, v):
    return spl_slab.get((pb[0].file, pb[0].line)) == str(v)

def spl_stacks(lines, start, uses):
    """The conditional blocks open at each use line (1-based), counted
    from the function's first line `start`: a tuple of block numbers."""
    out, stack, n = {}, [], 0
    last = max(uses)
    for i in range(start, last + 1):
        if i in uses:
            out[i] = tuple(stack)
        t = lines[i - 1].lstrip()
        if spl_re.match(r"#\s*if", t):
            n += 1
            stack.append(n)
        elif spl_re.match(r"#\s*(else|elif)", t) and stack:
            n += 1
            stack[-1] = n
        elif spl_re.match(r"#\s*endif", t) and stack:
            stack.pop()
    return out

def spl_place(path, fline, uses):
    """'top', ('block', line of the declaration the local goes before),
    or None (left alone)."""
    with open(path) as f:
        lines = f.read().splitlines()
    st = spl_stacks(lines, fline, set(uses))
    if any(not s for s in st.values()):
        return "top"
    i = fline
    while i <= len(lines) and "{" not in lines[i - 1]:
        i += 1
    rest = [(k, lines[k - 1]) for k in range(i + 1, len(lines) + 1) if lines[k - 1].strip()]
    if len(rest) < 2 or not spl_re.match(r"\s*#\s*if", rest[0][1]):
        return None
    if not all(s and s[0] == 1 for s in st.values()):
        return None
    k, first = rest[1]
    if not spl_re.match(r"\s*(?:const\s+)?(?:struct\s+\w+|unsigned|signed|int|long|char|void|bool"
                        r"|short|u8|u16|u32|u64|\w+_t)\b[^;(]*[=;]", first):
        return None
    return ("block", k)

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
spl_key = (fn, s, pf[0].file, pf[0].line, pf[0].column)
spl_seen.setdefault(spl_key, set()).add((int(p[0].line), int(p[0].column)))

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
pf << spl_uses.pf;
f;
v;
@@
spl_key = (fn, s, pf[0].file, pf[0].line, pf[0].column)
spl_where = None
spl_twins = [k for k in spl_seen if k[:3] == spl_key[:3] and k != spl_key]
if len(spl_seen.get(spl_key, ())) >= 3 and (fn, s) not in spl_taken \
        and (fn, None) not in spl_taken and not spl_twins:
    spl_where = spl_place(pf[0].file, int(pf[0].line), [l for l, _ in spl_seen[spl_key]])
if spl_where is None:
    cocci.include_match(False)
else:
    if spl_where == "top":
        spl_top.add((pf[0].file, pf[0].line, pf[0].column))
    else:
        spl_inblock.add((pf[0].file, str(spl_where[1])))
        spl_at[(pf[0].file, str(spl_where[1]))] = (pf[0].file, pf[0].line, pf[0].column)
        spl_slab[(pf[0].file, str(spl_where[1]))] = s
    coccinelle.f = fn
    coccinelle.v = s

// The local goes first, as in the seeds; a body that starts with a
// statement gets a blank line after it.  (`when any`: the other
// declarations match d too.)  Each rule below names the definition by the
// position of its name, so a same-named stub under #else is not touched.
@initialize:python@
@@
spl_has_decl = set()

@spl_first@
identifier spl_sel.f;
declaration d;
position p0;
position pf : script:python() { (pf[0].file, pf[0].line, pf[0].column) in spl_top };
@@
f@pf(...) {
  d@p0
  ... when any
}

@script:python spl_first_seen@
pf << spl_first.pf;
p0 << spl_first.p0;
@@
spl_has_decl.add((pf[0].file, pf[0].line, pf[0].column))

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
position pd : script:python() { (pd[0].file, pd[0].line, pd[0].column) in spl_has_decl };
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
coccinelle.hb = f
coccinelle.ub = v

@spl_decl_bare depends on patch@
identifier spl_ok_bare.hb;
identifier spl_ok_bare.ub;
position pd : script:python() { (pd[0].file, pd[0].line, pd[0].column) in spl_top
                                and (pd[0].file, pd[0].line, pd[0].column) not in spl_has_decl };
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

// every use inside the conditional block the body starts with: the local
// is the block's first declaration (a declaration under a conditional is
// not matched in the context of its function, so the rule names its line)
@spl_decl_block depends on patch@
identifier spl_sel.v;
identifier x;
type T;
expression E;
position pb : script:python(v) { (pb[0].file, pb[0].line) in spl_inblock
                                 and spl_seen_slab(pb, v) };
@@
(
+ struct page *page = slab_page(v);
  T x@pb = E;
|
+ struct page *page = slab_page(v);
  T x@pb;
)

@script:python spl_declared_block@
f << spl_sel.f;
v << spl_sel.v;
pb << spl_decl_block.pb;
g;
w;
@@
coccinelle.g = f
coccinelle.w = v

@spl_use_block depends on patch@
identifier spl_declared_block.g;
identifier spl_declared_block.w;
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
