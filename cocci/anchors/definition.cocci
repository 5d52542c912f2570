// SPDX-License-Identifier: GPL-2.0-only
/// Locate the top-level definition or declaration of a named symbol.
///
/// Used by the regeneration driver to place a template (new code that
/// exists nowhere in the tree) just before an existing definition: the
/// driver asks this rule where `anchor` is declared, then inserts the
/// template above that declaration and any comment that belongs to it.
/// Prints one "ANCHOR <file>:<line>" per match, in file order.
//
// Confidence: High
// Options: --no-includes -D anchor=<name>

virtual report

@fn depends on report@
identifier virtual.anchor;
position p;
@@
anchor@p(...) {...}

@proto depends on report@
identifier virtual.anchor;
type T;
position p;
@@
T anchor@p(...);

@tag depends on report@
identifier virtual.anchor;
position p;
@@
(
struct anchor@p {...};
|
enum anchor@p {...};
|
union anchor@p {...};
)

@script:python depends on report@
p << fn.p;
@@
print("ANCHOR %s:%s" % (p[0].file, p[0].line))

@script:python depends on report@
p << proto.p;
@@
print("ANCHOR %s:%s" % (p[0].file, p[0].line))

@script:python depends on report@
p << tag.p;
@@
print("ANCHOR %s:%s" % (p[0].file, p[0].line))
