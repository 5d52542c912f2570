"""slabconv: regenerate the struct slab conversion series from SmPL rules.

Shared plumbing only (paths, logging, subprocess).  Each stage of the
pipeline lives in its own top-level package: fetch -> regen -> verify ->
boot -> report.
"""
