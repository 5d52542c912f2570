"""A newcomer's path: `make` in a fresh clone with an empty cache, then
`make review` and `make mail` with no options; both show what `make`
proved.

`make` runs its own command line, pipeline, regen record, comparison with
the committed series, result records and closing lines; only the slow
steps whose real runs the suite proves elsewhere are stand-ins, given to
`make` as its launcher (SLABCONV=): the download of the kernel source
(tests/test_fetch.py), the regeneration (tests/test_e2e.py: byte for byte;
here the committed series signed off by the newcomer, as regen writes it
into the cache), `git am` (tests/test_e2e.py), the builds with their
checks (tests/test_verify_real.py) and the boot (tests/test_boot_qemu.py).
`make review` and `make mail` run as they are."""
import json
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

from report import patches as P

REPO = Path(__file__).resolve().parent.parent
COMMITTED = REPO / "generated-patches" / "5.10"
NAME, EMAIL = "New Comer", "new.comer@example.org"

LAUNCHER = '''
import json, os, shutil, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONF = json.loads((HERE / "stand-ins.json").read_text())
sys.path.insert(0, CONF["clone"])

from boot import BootResult, ktap
from cli import apply, checks, main, pipeline, prefetch
from regen import series
from regen.source import Source
from report import results
from verify import kbuild, VerifyResult
from verify.gates import Gates

TREE = Path(CONF["tree"])


def inputs(kernel, tree, deb_version, boot_configs=()):
    return Source(TREE, "5.10", CONF["source"], True)


class Regen:
    entries, skipped, converted_at, verdicts, seconds = [], [], None, [], 1.0


def regenerate(tree, source_id, *, version, output, identity, until=None,
               subject_prefix=None):
    """The committed series as regen writes it for `identity`."""
    out = Path(output)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    who = f"{identity.name} <{identity.email}>"
    r = Regen()
    r.output, r.written = out, {}
    n = len([p for p in Path(CONF["committed"]).glob("[0-9]*.patch")
             if not p.name.startswith("0000-")])
    for p in sorted(Path(CONF["committed"]).iterdir()):
        text = p.read_text()
        for old, new in (("From: slabconv <slabconv@localhost>", f"From: {who}"),
                         ("Signed-off-by: slabconv <slabconv@localhost>",
                          f"Signed-off-by: {who}"),
                         (f"\\nslabconv ({n}):\\n", f"\\n{identity.name} ({n}):\\n"),
                         ("identity: slabconv <slabconv@localhost>", f"identity: {who}")):
            text = text.replace(old, new)
        (out / p.name).write_text(text)
        if p.name[0].isdigit() and not p.name.startswith("0000-"):
            r.written[p.name] = text.encode()
    return r


def apply_series(src, patches_dir, written=None):
    snap = Path(CONF["work"]) / "series"
    snap.mkdir(parents=True, exist_ok=True)
    for name, data in sorted(written.items()):
        (snap / name).write_bytes(data)
    ap = apply.Applied(src, TREE, "0" * 40, sorted(snap.glob("*.patch")), ["mm/slub.c"])
    ap.series_dir = Path(patches_dir)     # where the patches were read, as git am's run
    return ap


def verify_applied(ap, configs, bisect_set, **kw):
    b = kbuild.BuildResult(ok=True, seconds=60.0, warnings=[], log=TREE / "log",
                           image=TREE / "bzImage", compiled=600)
    g = Gates(ap.src.version, ap.src.source_id, len(ap.patches), builds=[
        VerifyResult(ok=True, config=c, baseline=b, patched=b, new_warnings=[],
                     patched_out=TREE, patched_src=TREE) for c in configs])
    g.not_run.update({c: "not asked for" for c in (
        "checkpatch", "messages", "whitespace", "nullcheck", "per-patch", "compiled-lines",
        "field-users", "residue", "layout")})
    checks.record_verify(ap, g)
    return g


def boot_all(g, jobs=None):
    out = {}
    for c in (v.config for v in g.builds):
        run = Path(CONF["work"]) / "boot" / c
        run.mkdir(parents=True, exist_ok=True)
        counts = ktap.Counts(passed=51, skipped=7)
        (run / "summary.json").write_text(json.dumps(
            {"accel": "tcg", "counts": counts.as_dict()}))
        res = BootResult(passed=True, ktap="KTAP version 1\\n", console_log=run / "console.log",
                         seconds=10.6, failures=[], counts=counts)
        results.record_boot(g.kernel, g.stamp, c, res, run)
        out[c] = res
    return out


prefetch.inputs = inputs
series.regenerate = regenerate
pipeline.apply_series = apply_series
pipeline.verify_applied = verify_applied
pipeline.boot_all = boot_all
sys.exit(main.main())
'''


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def _clone(dst: Path) -> Path:
    """A fresh clone of this checkout, its uncommitted changes committed."""
    subprocess.run(["git", "clone", "-q", "--shared", str(REPO), str(dst)], check=True)
    changed = _git(REPO, "diff", "-z", "--name-only", "--diff-filter=d", "HEAD") + \
        _git(REPO, "ls-files", "-z", "-o", "--exclude-standard")
    for rel in filter(None, changed.split("\0")):
        if (REPO / rel).is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            (dst / rel).write_bytes((REPO / rel).read_bytes())
    for rel in filter(None, _git(REPO, "diff", "-z", "--name-only", "--diff-filter=D",
                                 "HEAD").split("\0")):
        (dst / rel).unlink(missing_ok=True)
    if _git(dst, "status", "--porcelain"):
        _git(dst, "add", "-A")
        _git(dst, "-c", "user.name=t", "-c", "user.email=t@l", "commit", "-q", "-m",
             "the checkout's changes")
    return dst


def _tree(d: Path) -> Path:
    """A stand-in kernel tree: what the main job reads of it itself (the
    version, the allocators' Kconfig symbols)."""
    (d / "mm").mkdir(parents=True)
    (d / "Makefile").write_text("VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 262\n")
    (d / "mm" / "slub.c").write_text("")
    (d / "init").mkdir()
    (d / "init" / "Kconfig").write_text("".join(
        f"config {s}\n\tbool\n\n" for s in ("SLUB", "SLAB", "SLOB", "SLUB_DEBUG", "MEMCG",
                                            "KASAN", "FAILSLAB", "FAULT_INJECTION")))
    return d


def _run(args, cwd, env):
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_make_then_make_review_and_make_mail_show_what_make_proved(tmp_path):
    clone = _clone(tmp_path / "slabconv")
    cache = tmp_path / "cache"
    stand = tmp_path / "stand-ins"
    stand.mkdir()
    (stand / "stand-ins.json").write_text(json.dumps({
        "clone": str(clone), "tree": str(_tree(tmp_path / "linux")),
        "committed": str(clone / "generated-patches" / "5.10"),
        "source": P.read_source(COMMITTED)["source"], "work": str(tmp_path / "work")}))
    (stand / "launcher.py").write_text(textwrap.dedent(LAUNCHER))
    (tmp_path / "gitconfig").write_text(f"[user]\n\tname = {NAME}\n\temail = {EMAIL}\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLABCONV_", "MAKE", "MFLAGS", "GIT_"))}
    env.update(SLABCONV_CACHE=str(cache), GIT_CONFIG_GLOBAL=str(tmp_path / "gitconfig"),
               GIT_CONFIG_NOSYSTEM="1")
    assert not cache.exists()

    made = _run(["make", f"SLABCONV=/usr/bin/python3 {stand / 'launcher.py'}"], clone, env)
    assert made.returncode == 0, made.stdout + made.stderr
    out = cache / "out" / P.read_source(COMMITTED)["source"] / "patches"
    first = P.numbered_patches(out)[0].read_text()
    assert f"From: {NAME} <{EMAIL}>" in first and f"Signed-off-by: {NAME} <{EMAIL}>" in first
    err = made.stderr
    assert "the rules reproduce generated-patches/5.10: identical except identity and date" in err
    assert re.search(r"\[all\] next: make review \(.*\) and make mail \(", err), err[-2000:]
    assert "SERIES=" not in err

    review = _run(["make", "review"], clone, env)
    assert review.returncode == 0, review.stdout + review.stderr
    text = (cache / "review" / "5.10" / "review.txt").read_text()
    summary = text.split("\n1. Summary\n")[1].split("\n2. Rules and templates\n")[0]
    assert re.search(r"^reproduced: +yes \(this machine, \d{4}-\d\d-\d\d \d\d:\d\d UTC\)$",
                     summary, re.M), summary
    for row in ("verify: every check", "verify slub", "boot slub"):
        assert re.search(rf"^{re.escape(row)}: +passed$", summary, re.M), (row, summary)
    assert re.search(r"^per-patch builds: +not run$", summary, re.M)
    assert f"results of:         {out} ({NAME} <{EMAIL}>, " in summary
    html = (cache / "review" / "5.10" / "review.html").read_text()
    assert '<tr><th>verify slub</th><td><span class="ok">passed</span>' in html

    mailed = _run(["make", "mail"], clone, env)
    assert mailed.returncode == 0, mailed.stdout + mailed.stderr
    cover = (cache / "mail" / "5.10" / "0000-cover-letter.patch").read_text()
    flat = " ".join(cover.split())
    assert "From: slabconv <slabconv@localhost>" in cover      # the committed series' copy
    assert "\nTesting\n-------\n" in cover
    assert f"on the series in {out} ({NAME} <{EMAIL}>," in flat
    assert "slub: ok; 0 new compiler warnings" in flat
    assert "slub: passed; 58 in-guest tests, 51 passed, 0 failed, 7 skipped" in flat
    assert "None recorded" not in cover
