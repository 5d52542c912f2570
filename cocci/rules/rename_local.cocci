// SPDX-License-Identifier: GPL-2.0-only
/// Rename the local variable `from` of function `fn` to `to`.
///
/// The counters that go with a converted variable follow its name: in
/// put_cpu_partial() the number of cpu partial slabs, `pages`, becomes
/// `slabs`, as struct slab's member is called (seed 004).
//
// Confidence: High (declaration and every use inside fn only)
// Options: --no-includes -D fn=<function> -D from=<local> -D to=<new name>

virtual patch

// The declaration may sit inside an #ifdef of the body (it does in
// put_cpu_partial()), where a `fn(...) { ... }` context does not reach:
// match it anywhere and keep the one in fn.
@initialize:python@
@@
in_fn = set()

@d0 depends on patch@
identifier virtual.from;
type V;
position p;
@@
(
 V from@p;
|
 V from@p = ...;
)

@script:python@
p << d0.p;
fn << virtual.fn;
@@
if p[0].current_element == fn:
    in_fn.add((p[0].current_element, p[0].line, p[0].column))

@decl depends on patch@
identifier virtual.from, virtual.to;
type V;
expression E;
position p : script:python() { (p[0].current_element, p[0].line, p[0].column) in in_fn };
@@
(
 V
-from@p
+to
 ;
|
 V
-from@p
+to
 = E;
)

@uses depends on decl@
identifier virtual.fn, virtual.from, virtual.to;
type T;
@@
 T fn(...)
 {
 <...
-from
+to
 ...>
 }
