// SPDX-License-Identifier: GPL-2.0-only
/// Convert the local variable `var` of function `fn` from `struct page *`
/// to `struct slab *` named `to`.
///
/// The step "Convert fn() to use a struct slab" for a local.  In fn:
///   struct page *var;             -> struct slab *to;
///   struct page *var = E;         -> struct slab *to = page_slab(E);
///   var = NULL                    -> to = NULL
///   var = slab_page(E)            -> to = E        (E is already a slab)
///   var = E                       -> to = page_slab(E)
///   var->F (a struct slab field)  -> to->F  (var->pages -> to->slabs)
///   I(..., var, ...) S            -> I(..., to, ...) S  (the cursor of an
///                                    iterator such as list_for_each_entry)
///   any other use of var          -> slab_page(to)
/// A slab local `to` that already holds page_slab(var), set once by
/// `to = page_slab(var);` with no new value of var after it (as
/// page_slab_local.cocci makes it), is var's slab: its declaration and that
/// assignment go, and var becomes it.
/// A multiple declaration (`struct page *var, *other;`) is split by the
/// driver (regen/declsplit.py) first, as the directive below asks:
/// Coccinelle cannot match one of its declarators.  The uses wrapped in slab_page() are then narrowed by
/// slab_fold.cocci (slab_address(), slab_nid(), NULL tests, arguments of
/// functions that already take a struct slab).
//
// Confidence: High (the variable's every use is rewritten; only its type
//  changes, never what it points to)
// Options: --no-includes -D fn=<function> -D var=<local> -D to=<new name>
//  [-D same_name when var and to are the same: members are left as they are]
// slabconv: split-declaration var in fn

virtual patch
virtual same_name

// A slab local that holds page_slab(var): var's slab, merged with it
@initialize:python@
@@
mg_set = []
mg_to = set()
mg_var = set()

@mg_s depends on patch exists@
identifier virtual.fn, virtual.var, virtual.to;
type T;
position ps;
@@
T fn(...) {
  ... when any
  to@ps = page_slab(var);
  ... when any
}

@script:python mg_s_seen@
ps << mg_s.ps;
@@
mg_set.append(int(ps[0].line))

@mg_t depends on patch exists@
identifier virtual.fn, virtual.to;
type T;
expression E;
position pa;
@@
T fn(...) {
  ... when any
(
  to@pa = E
|
  &to@pa
)
  ... when any
}

@script:python mg_t_seen@
pa << mg_t.pa;
@@
mg_to.add(int(pa[0].line))

@mg_v depends on patch exists@
identifier virtual.fn, virtual.var;
type T;
expression E;
position pa;
@@
T fn(...) {
  ... when any
(
  var@pa = E
|
  &var@pa
)
  ... when any
}

@script:python mg_v_seen@
pa << mg_v.pa;
@@
mg_var.add(int(pa[0].line))

@script:python mg_ok@
to << virtual.to;
var << virtual.var;
mt;
@@
if (len(mg_set) == 1 and to != var and mg_to == set(mg_set)
        and not [a for a in mg_var if a > mg_set[0]]):
    coccinelle.mt = to
else:
    cocci.include_match(False)

@mg_rm depends on patch@
identifier virtual.fn, virtual.var;
identifier mg_ok.mt;
type T;
@@
T fn(...) {
  <...
- mt = page_slab(var);
  ...>
}

@mg_d0 depends on patch@
identifier mg_ok.mt;
position p;
@@
struct slab *mt@p;

@script:python mg_d1@
p << mg_d0.p;
fn << virtual.fn;
@@
if p[0].current_element != fn:
    cocci.include_match(False)

@mg_decl depends on patch@
identifier mg_ok.mt;
position mg_d0.p;
@@
- struct slab *mt@p;

// The declaration may sit inside an #ifdef of the body, where a
// `fn(...) { ... }` context does not reach: match it anywhere and keep
// the matches whose enclosing function is fn.
@d0 depends on patch@
identifier virtual.var;
position p;
@@
(
 struct page *var@p;
|
 struct page *var@p = ...;
)

@script:python d1@
p << d0.p;
fn << virtual.fn;
@@
if p[0].current_element != fn:
    cocci.include_match(False)

@decl@
identifier virtual.var, virtual.to;
position d0.p;
expression E;
@@
(
-struct page *var@p;
+struct slab *to;
|
-struct page *var@p = NULL;
+struct slab *to = NULL;
|
-struct page *var@p = E;
+struct slab *to = page_slab(E);
)

// The members first, so that an assignment such as `var = var->next`
// reads `to = to->next` below.
@fields depends on decl && !same_name@
identifier virtual.fn, virtual.var, virtual.to;
type T;
identifier F = {flags, slab_list, next, pobjects, rcu_head, slab_cache, freelist,
                s_mem, counters, inuse, objects, frozen, active, units};
@@
 T fn(...)
 {
 <...
(
-var->F
+to->F
|
-var->pages
+to->slabs
)
 ...>
 }

@assign depends on decl@
identifier virtual.fn, virtual.var, virtual.to;
expression E;
type T;
identifier F;
@@
 T fn(...)
 {
 <...
(
-var = NULL
+to = NULL
|
-var = to->F
+to = to->F
|
-var = slab_page(E)
+to = E
|
-var = E
+to = page_slab(E)
)
 ...>
 }

// An iterator's cursor (list_for_each_entry(var, ...)) is renamed, not
// wrapped: its positions are recorded so that the use rule skips them
// (also when var and to are the same name).
@initialize:python@
@@
cursors = set()

@cursor depends on decl@
identifier virtual.var;
iterator I;
expression list es;
statement S;
position p;
@@
 I(es, var@p, ...) S

@script:python keep_cursor@
p << cursor.p;
fn << virtual.fn;
@@
if p[0].current_element == fn:
    cursors.add((p[0].current_element, p[0].line, p[0].column))

@rename_cursor depends on decl@
identifier virtual.var, virtual.to;
iterator I;
expression list es;
statement S;
position p : script:python() { (p[0].current_element, p[0].line, p[0].column) in cursors };
@@
 I(es,
-var@p
+to
 ,...) S

// What the rules above converted is left alone (when var and to are the
// same name, as SLOB's sp, they would otherwise match again); a member
// that struct slab does not have (page->mem_cgroup) is reached through
// slab_page().
@uses depends on decl@
identifier virtual.fn, virtual.var, virtual.to;
type T;
expression E;
identifier F = {flags, slab_list, next, pobjects, rcu_head, slab_cache, freelist,
                s_mem, counters, inuse, objects, frozen, active, units, slabs};
position q : script:python() { (q[0].current_element, q[0].line, q[0].column) not in cursors };
@@
 T fn(...)
 {
 <...
(
 var = E
|
 var->F
|
-var@q
+slab_page(to)
)
 ...>
 }
