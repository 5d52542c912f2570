"""Keep a function's kernel-doc in step with a parameter the series renamed.

Coccinelle does not match comments, so when a conversion renames a
parameter (`struct page *page` becomes `struct slab *slab`), the comment
block right above the definition would still document `@page`, and
scripts/kernel-doc would complain.  This renames `@old` to `@new` in that
block only (the comment that ends on the line before the definition),
and lets the parameter's description follow (`phrases`: the "kernel-doc"
phrases of cocci/comments.toml, applied after the colon of that line).
"""
from __future__ import annotations

import re


def rename_param(src: str, function: str, old: str, new: str, phrases=()) -> str:
    if old == new:
        return src
    lines = src.splitlines(keepends=True)
    out = list(lines)
    defn = re.compile(r"^[A-Za-z_].*\b%s\s*\(" % re.escape(function))
    for i, line in enumerate(lines):
        if not defn.match(line) or line.rstrip().endswith(";"):
            continue
        j = i - 1                       # the comment must end right above
        if j < 0 or not lines[j].strip().endswith("*/"):
            continue
        k = j
        while k >= 0 and not lines[k].lstrip().startswith("/*"):
            k -= 1
        if k < 0:
            continue
        for n in range(k, j + 1):
            doc = re.sub(r"@%s\b" % re.escape(old), "@" + new, out[n])
            at = doc.find(":", doc.find("@" + new)) + 1
            if doc != out[n] and at > 0:
                desc = doc[at:]
                for p in phrases:
                    if p.where == "kernel-doc":
                        desc = re.sub(p.old, p.new, desc)
                doc = doc[:at] + desc
            out[n] = doc
    return "".join(out)
