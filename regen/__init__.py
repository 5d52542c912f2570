"""regen: apply the series manifest (cocci/series.toml) to a kernel tree.

manifest.py  the manifest schema (entries, steps, expected effects)
worktree.py  the git work tree: baseline commit, commits, format-patch
spatch.py    running one SmPL rule
template.py  inserting a template at an anchor that a SmPL rule locates
tidy.py      removing preprocessor conditionals that a step emptied
effects.py   checking an entry's expected effects
series.py    the driver tying these together
"""
