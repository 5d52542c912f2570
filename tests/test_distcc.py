"""A distributed build through the project's build path (verify.kbuild.build)
on a farm of two distccd daemons on the loopback (free ports, 127.0.0.1
only, stopped here), against a local build of the same kernel objects.

The 5.10 tree (slub configuration) with two planted changes:
  * mm/slub.c: an unused variable and a swap() of a pointer and a long:
    new warnings, those of swap() reported by a local gcc in the header
    that defines the macro, by a remote gcc compiling preprocessed text at
    the call in mm/slub.c;
  * mm/util.c: a "/* fall through */" comment, which silences
    -Wimplicit-fallthrough in a local compile, but not in a remote one (the
    preprocessed text has no comments).
The gates must be those of a local build: the same warnings (file, function,
message, line, column), the two planted ones new against the unplanted
baseline, no fall-through warning; the daemons' logs must show that they
compiled the objects, both of them; the two objects the remote gcc said
something about are compiled again locally (verify/distccwrap.sh), the
others are not.

A few objects of mm/ (not a kernel: `prepare` and 7 objects per build) keep
it to a few minutes.  Nothing skips: no distccd is a failure.
"""
import os
import shutil
from pathlib import Path

import pytest

from base import paths
from regen.source import resolve
from tests.distccfarm import Farm
from verify import kbuild, kconfig, tree
from verify import warnings as W

pytestmark = [pytest.mark.slow, pytest.mark.network]

OBJS = ("mm/slub.o", "mm/util.o", "mm/slab_common.o", "mm/mmzone.o", "mm/list_lru.o",
        "mm/vmstat.o", "mm/mempool.o")
SLUB_PLANT = """
int slabconv_planted_unused(void);
int slabconv_planted_unused(void)
{
\tint slabconv_unused;

\treturn 0;
}

void slabconv_planted_swap(int *p, long l);
void slabconv_planted_swap(int *p, long l)
{
\tswap(p, l);
}
"""
UTIL_PLANT = """
int slabconv_planted_fallthrough(int x);
int slabconv_planted_fallthrough(int x)
{
\tswitch (x) {
\tcase 1:
\t\tx++;
\t\t/* fall through */
\tcase 2:
\t\tx++;
\t\tbreak;
\t}
\treturn x;
}
"""


def plant(snap: Path, rel: str, text: str) -> None:
    f = snap / rel
    old = f.read_text()
    f.unlink()                      # a hard link to the pristine tree: replace, never edit
    f.write_text(old + text)


def warnings_of(r) -> list:
    return sorted((w.key, w.line, w.col) for w in r.warnings)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """(baseline local, planted local, planted farm, the daemons' compiles, the
    distcc log, the farm's objects built again, the daemons' compiles after it)."""
    assert shutil.which("distccd"), "install the Debian package 'distcc' (make deps-test)"
    src = resolve(paths.DEFAULT_KERNEL, None)
    base = tmp_path_factory.mktemp("distcc")
    snap = tree.snapshot(src.tree, base / "snap")
    mp = pytest.MonkeyPatch()
    mp.delenv("DISTCC_HOSTS", raising=False)
    mp.setenv("SLABCONV_JOBS", "")
    try:
        outs = {}
        for name in ("o-local", "o-farm"):      # configured and prepared, shared ccache
            o = snap / name
            kconfig.configure_named(snap, o, "slub")
            r = kbuild.build(snap, o, targets=("prepare",), jobs=2, label=name)
            assert r.ok, r.failure_message()
            outs[name] = o
        # from here each build has a ccache of its own: every object compiled
        mp.setenv("CCACHE_DIR", str(base / "ccache-local"))
        baseline = kbuild.build(snap, outs["o-local"], targets=OBJS, jobs=2, label="local")
        assert baseline.ok, baseline.failure_message()
        plant(snap, "mm/slub.c", SLUB_PLANT)
        plant(snap, "mm/util.c", UTIL_PLANT)
        local = kbuild.build(snap, outs["o-local"], targets=OBJS, jobs=2, label="local")
        assert local.ok, local.failure_message()
        mp.setenv("CCACHE_DIR", str(base / "ccache-farm"))
        with Farm(2, logdir=base) as farm:
            mp.setenv("DISTCC_HOSTS", farm.hosts)
            remote = kbuild.build(snap, outs["o-farm"], targets=OBJS, jobs=2, label="farm")
            compiles = farm.compiles()
            assert remote.ok, remote.failure_message()
            relog = (outs["o-farm"] / kbuild.DISTCC_LOG_NAME).read_text()
            for o in OBJS:                  # again: every object from the farm's ccache
                (outs["o-farm"] / o).unlink()
            again = kbuild.build(snap, outs["o-farm"], targets=OBJS, jobs=2, label="farm")
            compiles_again = farm.compiles()
            mp.delenv("DISTCC_HOSTS")
        assert again.ok, again.failure_message()
        yield baseline, local, remote, compiles, relog, again, compiles_again
    finally:
        mp.undo()
        tree.remove(base)


def test_objects_were_compiled_by_both_daemons(builds):
    _, _, remote, compiles, *_ = builds
    assert all(compiles), compiles                      # each daemon compiled something
    done = {Path(c).name for per in compiles for c in per}
    assert {Path(o).with_suffix(".c").name for o in OBJS} <= done, compiles
    assert remote.distcc["hosts"] and remote.distcc["local_fallbacks"] == 0, remote.distcc
    assert remote.distcc["jobs"] == kbuild.farm_jobs(remote.distcc["hosts"])
    assert remote.ccache["misses"] >= len(OBJS)         # ccache in front, cold: all misses


def test_only_what_the_remote_gcc_warned_about_is_compiled_again_locally(builds):
    relog = builds[4]
    again = {ln.split("compiled locally: ", 1)[1].split()[0] for ln in relog.splitlines()
             if ln.startswith("slabconv: diagnostics, compiled locally: ")}
    assert again & set(OBJS) == {"mm/slub.o", "mm/util.o"}, relog


def test_gates_equal_a_local_build(builds):
    baseline, local, remote, *_ = builds
    assert warnings_of(remote) == warnings_of(local)
    new_local = W.new_warnings(baseline.warnings, local.warnings)
    new_remote = W.new_warnings(baseline.warnings, remote.warnings)
    assert [w.key for w in new_remote] == [w.key for w in new_local]
    got = [(w.file, w.message) for w in new_remote]
    assert ("mm/slub.c", "unused variable 'slabconv_unused' [-Wunused-variable]") in got, got
    in_macro = [w for w in new_remote if w.flag == "-Wint-conversion"]
    assert in_macro and all(w.file.startswith("include/") and w.function ==
                            "slabconv_planted_swap" for w in in_macro), W.summarise(new_remote)
    assert len(got) == 1 + len(in_macro), W.summarise(new_remote)
    assert not [w for w in remote.warnings if "fall through" in w.message]


def test_ccache_stays_in_front(builds):
    """The objects built again: ccache hits, their diagnostics from the
    cache, nothing sent to the farm."""
    _, local, remote, compiles, _, again, compiles_again = builds
    assert again.compiled == len(OBJS) and again.ccache["hits"] >= len(OBJS), again.ccache
    assert again.ccache["misses"] == 0, again.ccache
    assert compiles_again == compiles
    assert warnings_of(again) == warnings_of(remote) == warnings_of(local)
