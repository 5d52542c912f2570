"""Two runs that share the cache never break or corrupt each other (issue 27).

Fast: the lock serializes processes (and the check that proves it catches
a missing lock); a waiting run names the holder's pid; runs get work tree
slots of their own (and the check catches a planted shared slot); stale
git locks and half-made slots of a killed run are recovered; spatch cache
entries a killed run half wrote are detected; spatch and git die with a
driver killed by SIGKILL (and the check catches a child that does not).

Slow (the load test, on the real 5.10 tree and the cache of the
environment): four regenerations in four clones at once, a regeneration
beside `slabconv layout`, and regenerations killed with SIGKILL at random
points (seeds printed; $SLABCONV_KILL_SEEDS replays them), each followed
by one that must succeed; every series byte-identical to the committed
generated-patches/5.10/.  Each subprocess is bounded in time.
"""
from __future__ import annotations

import filecmp
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PY = "/usr/bin/python3"
sys.path.insert(0, str(REPO))


def _env(**extra) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _spawn(code: str, *args, **env) -> subprocess.Popen:
    return subprocess.Popen([PY, "-c", textwrap.dedent(code), *map(str, args)], cwd=REPO,
                            env=_env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _finish(procs, timeout=120):
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=timeout)
        outs.append((p.returncode, out, err))
    return outs


def _intervals(log: Path) -> list[tuple[str, float, float]]:
    """(what, enter, leave) of each critical section recorded in `log`."""
    enter, out = {}, []
    for line in log.read_text().splitlines():
        ev, who, what, t = line.split()
        if ev == "enter":
            enter[who] = float(t)
        else:
            out.append((what, enter.pop(who), float(t)))
    return out


def _overlapping(iv) -> list:
    """Pairs of sections on the same thing that were in progress at once."""
    return [(a, b) for i, a in enumerate(iv) for b in iv[i + 1:]
            if a[0] == b[0] and a[1] < b[2] and b[1] < a[2]]


# --- the flock --------------------------------------------------------------

CRITICAL = """
    import contextlib, os, sys, time
    from pathlib import Path
    from base.lock import locked
    lock, log, planted = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "1"
    cm = contextlib.nullcontext() if planted else locked(lock, "the test's section")
    with cm:
        with open(log, "a") as f:
            f.write(f"enter {os.getpid()} x {time.monotonic()}\\n")
        time.sleep(0.4)
        with open(log, "a") as f:
            f.write(f"leave {os.getpid()} x {time.monotonic()}\\n")
"""


def _run_critical(tmp_path, planted: bool):
    log = tmp_path / f"log-{planted}"
    procs = [_spawn(CRITICAL, tmp_path / "x.lock", log, int(planted)) for _ in range(3)]
    res = _finish(procs)
    assert all(rc == 0 for rc, _, _ in res), res
    return _intervals(log), res


def test_the_lock_lets_one_process_at_a_time_into_its_section(tmp_path):
    iv, res = _run_critical(tmp_path, planted=False)
    assert len(iv) == 3 and not _overlapping(iv), iv
    waits = [err for _, _, err in res if "waiting for another slabconv run (pid " in err]
    assert waits and all("on the test's section" in w for w in waits), res


def test_the_check_catches_a_section_without_the_lock(tmp_path):
    """The planted defect: the same processes without the lock overlap, and
    the check above says so."""
    iv, _ = _run_critical(tmp_path, planted=True)
    assert len(iv) == 3 and _overlapping(iv), iv


def test_the_waiting_message_names_the_holders_pid(tmp_path):
    from base import lock
    holder = _spawn("""
        import sys, time
        from base.lock import locked
        with locked(__import__("pathlib").Path(sys.argv[1]), "x"):
            print("held", flush=True)
            time.sleep(1.5)
    """, tmp_path / "l.lock")
    assert holder.stdout.readline().strip() == "held"
    assert lock.holder(tmp_path / "l.lock") == holder.pid
    assert lock.is_locked(tmp_path / "l.lock")
    assert lock.acquire(tmp_path / "l.lock", block=False) is None
    msg = lock.waiting_message(tmp_path / "l.lock", "the regen work tree /w")
    assert msg == f"waiting for another slabconv run (pid {holder.pid}) on the regen work tree /w"
    holder.kill()          # SIGKILL: the lock goes with the process
    holder.wait()
    holder.stdout.close()
    holder.stderr.close()
    fd = lock.acquire(tmp_path / "l.lock", block=False)
    assert fd is not None
    lock.release(fd)


# --- work tree slots --------------------------------------------------------

def _small_tree(root: Path) -> Path:
    t = root / "src"
    (t / "mm").mkdir(parents=True)
    (t / "Makefile").write_text("VERSION = 5\n")
    (t / "mm" / "slub.c").write_text("int x;\n")
    return t


SLOT_USER = """
    import os, sys, time
    from pathlib import Path
    from regen import worktree
    from regen.worktree import Identity, WorkTree
    src, work, log, planted = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    if planted == "1":       # the defect: every run in the one shared tree, no lock
        worktree.claim_slot = lambda workdir: 0
    wt = WorkTree.prepare(src, "t", work, Identity("A", "a@example.org"), "2021-10-04T14:45:48+01:00")
    with open(log, "a") as f:
        f.write(f"enter {os.getpid()} {wt.path} {time.monotonic()}\\n")
    (wt.path / "mm" / "slub.c").write_text(f"int x_{os.getpid()};\\n")
    imp = wt.importer()
    imp.commit("mine", wt.snapshot(["mm/slub.c"]))
    imp.close()
    wt.sync_index()
    time.sleep(1.5)
    body = wt.git("show", "HEAD:mm/slub.c")
    assert body == f"int x_{os.getpid()};\\n", body
    with open(log, "a") as f:
        f.write(f"leave {os.getpid()} {wt.path} {time.monotonic()}\\n")
    print(wt.slot)
"""


def _run_slots(tmp_path, planted: bool, n: int = 3):
    src = _small_tree(tmp_path)
    log = tmp_path / f"slots-{planted}.log"
    procs = [_spawn(SLOT_USER, src, tmp_path / "work", log, int(planted),
                    SLABCONV_CACHE=tmp_path / "cache") for _ in range(n)]
    return _finish(procs), log


def test_runs_at_once_get_work_trees_of_their_own(tmp_path):
    res, log = _run_slots(tmp_path, planted=False)
    assert all(rc == 0 for rc, _, _ in res), res
    iv = _intervals(log)
    assert len(iv) == 3 and not _overlapping(iv), iv
    at_once = [(a, b) for i, a in enumerate(iv) for b in iv[i + 1:] if a[1] < b[2] and b[1] < a[2]]
    assert at_once, f"the runs did not overlap in time, nothing was shown: {iv}"
    assert len({int(out) for _, out, _ in res}) >= 2, res
    work = tmp_path / "work"
    assert (work / "slots" / "1" / "linux" / ".git").is_file()     # a git worktree
    # each slot on a branch of its own: nothing shared is written
    branches = subprocess.run(["git", "-C", str(work / "linux"), "branch", "--list"],
                              capture_output=True, text=True).stdout
    assert {"slabconv-0", "slabconv-1"} <= set(branches.replace("*", " ").replace("+", " ").split())
    # the baseline repository's own work tree is never checked out by a run
    head = subprocess.run(["git", "-C", str(work / "linux"), "symbolic-ref", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    assert head == "refs/heads/slabconv", head


def test_a_run_waits_for_a_free_slot_when_all_are_taken(tmp_path):
    src = _small_tree(tmp_path)
    code = """
        import sys, time
        from pathlib import Path
        from regen.worktree import Identity, WorkTree
        wt = WorkTree.prepare(Path(sys.argv[1]), "t", Path(sys.argv[2]),
                              Identity("A", "a@example.org"), "2021-10-04T14:45:48+01:00")
        print(wt.slot, time.monotonic(), flush=True)
        time.sleep(float(sys.argv[3]))
    """
    first = _spawn(code, src, tmp_path / "work", 2.0, SLABCONV_WORKTREES=1)
    slot, t_first = first.stdout.readline().split()
    second = _spawn(code, src, tmp_path / "work", 0, SLABCONV_WORKTREES=1)
    (rc1, _, err1), (rc2, out2, err2) = _finish([first, second])
    assert rc1 == 0 and rc2 == 0, (err1, err2)
    assert slot == "0" and out2.split()[0] == "0"
    assert float(out2.split()[1]) >= float(t_first) + 1.5, "the second run did not wait"
    assert (f"waiting for another slabconv run (pids {first.pid}) on the regen work trees"
            in err2), err2


def test_the_check_catches_runs_sharing_one_work_tree(tmp_path):
    """The planted defect: no slots, every run in the shared tree at once;
    the sections overlap on one path (and a run may see another's commit)."""
    res, log = _run_slots(tmp_path, planted=True)
    iv = _intervals(log)
    assert _overlapping(iv) or any(rc != 0 for rc, _, _ in res), (iv, res)


def test_a_killed_runs_git_locks_and_unfinished_am_are_removed(tmp_path, capsys, cache):
    from regen import worktree
    from regen.worktree import Identity, WorkTree
    src = _small_tree(tmp_path)
    work = tmp_path / "work"
    ident = Identity("A", "a@example.org")
    wt = WorkTree.prepare(src, "t", work, ident, "2021-10-04T14:45:48+01:00")
    wt.release()
    own = wt.git_dir()
    assert own.parent.name == "worktrees"       # the slot's own index, HEAD and am state
    # what a run killed inside git checkout or git am leaves behind
    (own / "index.lock").write_text("")
    (work / "linux" / ".git" / "refs" / "heads" / "slabconv-0.lock").write_text("")
    (own / "rebase-apply").mkdir()
    capsys.readouterr()
    wt = WorkTree.prepare(src, "t", work, ident, "2021-10-04T14:45:48+01:00")
    err = capsys.readouterr().err
    assert wt.slot == 0
    assert not (own / "index.lock").exists()
    assert not (work / "linux" / ".git" / "refs" / "heads" / "slabconv-0.lock").exists()
    assert not (own / "rebase-apply").exists()
    assert re.search(r"removing .*index\.lock: a stale git lock left by a slabconv run that "
                     r"was killed", err), err
    assert "an unfinished git am" in err, err
    wt.release()
    assert str(work) not in worktree._HELD


def test_a_slot_a_killed_run_left_half_made_is_made_again(tmp_path, capsys, cache):
    from regen.worktree import Identity, WorkTree
    src = _small_tree(tmp_path)
    work = tmp_path / "work"
    ident = Identity("A", "a@example.org")
    # another process holds slot 0 while this one takes slot 1
    holder = _spawn("""
        import sys, time
        from pathlib import Path
        from regen.worktree import Identity, WorkTree
        WorkTree.prepare(Path(sys.argv[1]), "t", Path(sys.argv[2]), Identity("A", "a@example.org"),
                         "2021-10-04T14:45:48+01:00")
        print("held", flush=True)
        time.sleep(30)
    """, src, work, SLABCONV_CACHE=cache)
    try:
        assert holder.stdout.readline().strip() == "held", holder.stderr.read()
        (work / "slots" / "1" / "linux").mkdir(parents=True)     # killed inside git worktree add
        (work / "slots" / "1" / "linux" / "junk").write_text("x")
        capsys.readouterr()
        wt = WorkTree.prepare(src, "t", work, ident, "2021-10-04T14:45:48+01:00")
        err = capsys.readouterr().err
        assert wt.slot == 1 and (wt.path / "mm" / "slub.c").read_text() == "int x;\n"
        assert not (wt.path / "junk").exists()
        assert "removing the one a killed run left half made" in err, err
        wt.release()
    finally:
        holder.kill()
        holder.communicate()


# --- the spatch result cache ------------------------------------------------

def test_a_half_written_spatch_result_is_detected_and_made_again(tmp_path, cache, capsys):
    from regen import spatch
    hit = tmp_path / "c" / "ab" / "abkey"
    spatch._store(hit, "out\n", [b"one", b"two"])
    assert spatch._cached(hit, 2) == [b"out\n", b"one", b"two"]
    (hit / "1").write_bytes(b"tw")              # cut short (a full disk, an old writer)
    capsys.readouterr()
    assert spatch._cached(hit, 2) is None and not hit.exists()
    assert "not whole" in capsys.readouterr().err
    spatch._store(hit, "out\n", [b"one", b"two"])
    (hit / "0").unlink()
    assert spatch._cached(hit, 2) is None and not hit.exists()
    # a killed run's temporary entry: removed once its writer is gone
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = hit.with_name(f"{hit.name}.tmp{dead.pid}-1")
    left.mkdir()
    (left / "0").write_bytes(b"o")
    live = hit.with_name(f"{hit.name}.tmp{os.getpid()}-1")
    live.mkdir()
    assert spatch._cached(hit, 2) is None
    assert not left.exists() and live.exists()
    assert "a killed run did not finish storing" in capsys.readouterr().err


# --- children die with the driver ------------------------------------------

def test_spatch_and_git_die_with_a_driver_killed_by_sigkill(tmp_path):
    """A warm-start spatch blocks on its named pipe until its turn comes;
    left behind by a driver killed with SIGKILL it would wait forever (and
    an ordinary one would go on writing into the work tree)."""
    os.mkfifo(tmp_path / "fifo")
    drv = _spawn("""
        import subprocess, sys
        from base.proc import tied
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        p = subprocess.Popen(tied(["sleep", "300"]), **quiet)
        q = subprocess.Popen(tied(["sh", "-c", "exec cat " + sys.argv[1]]), **quiet)  # blocks on a fifo
        print(p.pid, q.pid, flush=True)
        p.wait()
    """, tmp_path / "fifo")
    pids = [int(x) for x in drv.stdout.readline().split()]
    assert len(pids) == 2
    time.sleep(0.3)
    drv.send_signal(signal.SIGKILL)
    drv.communicate()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids), pids


def test_the_check_catches_a_child_that_outlives_its_driver(tmp_path):
    """The planted defect: a child started without tied() survives the
    driver's SIGKILL, and the check above sees it."""
    drv = _spawn("""
        import subprocess
        p = subprocess.Popen(["sleep", "300"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        print(p.pid, flush=True)
        p.wait()
    """)
    pid = int(drv.stdout.readline())
    drv.send_signal(signal.SIGKILL)
    drv.communicate()
    time.sleep(0.5)
    try:
        assert _alive(pid), "an untied child should have outlived its driver"
    finally:
        os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# --- the load test (slow: the 5.10 tree, minutes) -----------------------------

REGEN_TIMEOUT = 900          # seconds per regeneration (one warm: 15-60 s on 2 cores)
COMMITTED = REPO / "generated-patches" / "5.10"


def _clone(dst: Path, series: bool = True) -> Path:
    """A clone of this checkout, with its uncommitted changes: another
    user's checkout of the project.  series=False: without the committed
    patches, which a regen of the clone must then write there."""
    subprocess.run(["git", "clone", "-q", "--shared", str(REPO), str(dst)], check=True)
    changed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "-m", "-o",
                              "--exclude-standard"], capture_output=True, check=True).stdout
    for rel in filter(None, changed.decode().split("\0")):
        src = REPO / rel
        if src.is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            (dst / rel).write_bytes(src.read_bytes())
    if not series:      # SOURCE stays: it makes generated-patches/5.10 regen's output
        for p in (dst / "generated-patches" / "5.10").glob("*.patch"):
            p.unlink()
    return dst


def _regen(cwd: Path, *args) -> subprocess.Popen:
    """`slabconv regen` of the checkout `cwd`, its own launcher and code (a
    launcher imports the code beside it, whatever PYTHONPATH says)."""
    env = _env()
    env["PYTHONPATH"] = str(cwd)
    # a series written elsewhere than generated-patches/ takes the committed identity too
    ident = re.search(r"^identity: (.*)$", (COMMITTED / "SOURCE").read_text(), re.M)
    env["SLABCONV_IDENTITY"] = ident.group(1)
    return subprocess.Popen([str(cwd / "slabconv"), "regen", "--kernel", "5.10", *args],
                            cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _same_as_committed(series: Path) -> list[str]:
    """The files of `series` that differ from the committed series (or are
    missing or extra)."""
    names = sorted({p.name for p in COMMITTED.iterdir()} | {p.name for p in series.iterdir()})
    return [n for n in names if not ((series / n).is_file() and (COMMITTED / n).is_file()
                                     and filecmp.cmp(series / n, COMMITTED / n, shallow=False))]


def _orphans(session: int) -> list[str]:
    """The processes left in the session of a killed driver (started with
    start_new_session: its pid is the session's id, and its spatch and git
    children inherit it): whichever process they were re-parented to, init
    or a subreaper."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if int(fields[3]) == session and fields[0] != "Z":
            out.append(f"{d.name} (parent {fields[1]}): {cmd.strip()}")
    return out


def _left_running(session: int, within: float = 60.0) -> list[str]:
    """_orphans(session) once they are gone, or after `within` seconds:
    the children die of the driver's death (PR_SET_PDEATHSIG) but a loaded
    machine may take a while to reap them; what is still there then has
    outlived it."""
    deadline = time.monotonic() + within
    while (left := _orphans(session)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def test_the_orphan_scan_sees_a_child_re_parented_to_a_subreaper(tmp_path):
    """The planted defect: a driver's child outlives its SIGKILL and is
    re-parented to a subreaper, not to init; the scan must list it."""
    helper = _spawn("""
        import ctypes, signal, subprocess, sys, time
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)   # PR_SET_CHILD_SUBREAPER
        drv = subprocess.Popen([sys.executable, "-c",
                                "import subprocess; subprocess.Popen(['sleep', '300']); "
                                "import time; time.sleep(300)"], start_new_session=True)
        time.sleep(0.5)
        drv.send_signal(signal.SIGKILL)
        drv.wait()
        print(drv.pid, flush=True)
        time.sleep(300)
    """)
    session = int(helper.stdout.readline())
    try:
        left = _orphans(session)
        assert len(left) == 1 and "sleep 300" in left[0], left
        assert f"(parent {helper.pid})" in left[0], left
    finally:
        os.killpg(session, signal.SIGKILL)
        helper.kill()
        helper.communicate()
    assert not _orphans(session)


@pytest.mark.slow
def test_four_regenerations_in_four_clones_at_once(tmp_path):
    clones = [_clone(tmp_path / f"clone{i}", series=False) for i in range(4)]
    t0 = time.monotonic()
    procs = [_regen(c) for c in clones]
    res = _finish(procs, timeout=REGEN_TIMEOUT)
    wall = time.monotonic() - t0
    print(f"four regenerations at once: {wall:.1f}s")
    for c, (rc, _, err) in zip(clones, res):
        assert rc == 0, err[-3000:]
        diff = _same_as_committed(c / "generated-patches" / "5.10")
        assert not diff, f"{c}: differs from the committed series: {diff[:5]}"


@pytest.mark.slow
def test_a_regeneration_and_layout_at_once(tmp_path):
    clone = _clone(tmp_path / "clone", series=False)
    regen = _regen(clone)
    layout = subprocess.Popen([str(REPO / "slabconv"), "layout", "--kernel", "5.10"], cwd=REPO,
                              env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True)
    (rc_r, _, err_r), (rc_l, out_l, err_l) = _finish([regen, layout], timeout=REGEN_TIMEOUT)
    assert rc_r == 0, err_r[-3000:]
    assert rc_l == 0, (out_l + err_l)[-3000:]
    assert not _same_as_committed(clone / "generated-patches" / "5.10")


def _kill_seeds() -> list[int]:
    env = os.environ.get("SLABCONV_KILL_SEEDS")
    if env:
        return [int(x) for x in env.split(",")]
    return [random.SystemRandom().randrange(1 << 31) for _ in range(3)]


_ENTRY = re.compile(r"^\[regen\] \[(\d+)/(\d+)\]")


def _kill_at_entry(p: subprocess.Popen, entry: int, delay: float) -> list[str]:
    """SIGKILL the driver `delay` seconds after it starts entry `entry` of
    the series (0: its first line); the lines it printed on stderr up to
    then.  Fails if the run ended first: a kill must happen."""
    lines = []
    for line in p.stderr:
        lines.append(line.rstrip("\n"))
        m = _ENTRY.match(line)
        if (entry == 0 and line.startswith("[regen]")) or (m and int(m.group(1)) >= entry):
            time.sleep(delay)
            os.kill(p.pid, signal.SIGKILL)      # the driver only: its children must follow
            break
    p.communicate(timeout=REGEN_TIMEOUT)
    assert p.returncode == -signal.SIGKILL, (
        f"the run ended (rc {p.returncode}) before entry {entry} + {delay:.2f}s: "
        f"nothing was killed; last lines: {lines[-3:]}")
    return lines


def _fake_run(lines: list[str], then: str) -> subprocess.Popen:
    return _spawn(f"""
        import sys, time
        for l in {lines!r}:
            print(l, file=sys.stderr, flush=True)
        {then}
    """)


def test_a_kill_at_an_entry_kills_the_run_there():
    p = _fake_run(["[regen] Linux 5.10", "[regen] [1/3] a", "[regen] [2/3] b"], "time.sleep(300)")
    assert _kill_at_entry(p, 2, 0.1)[-1] == "[regen] [2/3] b"
    assert p.returncode == -signal.SIGKILL


@pytest.mark.parametrize("entry", [0, 3])
def test_a_run_that_ends_before_its_kill_fails_the_kill_test(entry):
    """The planted defect: the run is over before the point chosen to kill
    it (no line at all, or not that entry); nothing was killed, and the
    kill test must say so rather than check a run that was never killed."""
    p = _fake_run([] if entry == 0 else ["[regen] Linux 5.10", "[regen] [1/3] a"], "pass")
    with pytest.raises(AssertionError, match="nothing was killed"):
        _kill_at_entry(p, entry, 0.1)


@pytest.mark.slow
def test_a_regeneration_killed_at_random_points_never_breaks_the_next(tmp_path):
    seeds = _kill_seeds()
    print(f"SIGKILL seeds (SLABCONV_KILL_SEEDS={','.join(map(str, seeds))} replays them)")
    # the kills fall inside the run by its progress, not by a time that a
    # waiting or faster run may outlast: after the start of a random entry
    # of the series (0: before the first), a random fraction of a second in
    entries = len(series_entries())
    for seed in seeds:
        rng = random.Random(seed)
        entry, delay = rng.randrange(0, entries - 2), rng.uniform(0, 0.5)
        out = tmp_path / f"s{seed}"
        p = _regen(REPO, "--output", out)
        last = _kill_at_entry(p, entry, delay)[-1:]
        left = _left_running(p.pid)
        assert not left, f"seed {seed}: left running: {left}"
        rc, _, err = _finish([_regen(REPO, "--output", out)], REGEN_TIMEOUT)[0]
        assert rc == 0, f"seed {seed} (killed in entry {entry} + {delay:.2f}s): {err[-3000:]}"
        recovered = [l for l in err.splitlines() if "removing" in l or "waiting" in l]
        print(f"seed {seed}: killed in entry {entry} + {delay:.2f}s (last: {last}); "
              f"the next run: rc 0, {recovered or 'nothing to recover'}")
        diff = _same_as_committed(out)
        assert not diff, f"seed {seed}: the series after the kill differs: {diff[:5]}"
    # and killed inside git: the moment its `git checkout` of the slot runs
    out = tmp_path / "in-git"
    p = _regen(REPO, "--output", out)
    seen = _wait_for_child(p, "checkout", timeout=REGEN_TIMEOUT)
    assert seen, f"the run ended (rc {p.poll()}) without a git checkout seen: nothing to kill inside git"
    os.kill(p.pid, signal.SIGKILL)
    p.communicate()
    assert p.returncode == -signal.SIGKILL, f"the run ended (rc {p.returncode}) before the kill"
    left = _left_running(p.pid)
    assert not left, f"left running: {left}"
    rc, _, err = _finish([_regen(REPO, "--output", out)], REGEN_TIMEOUT)[0]
    assert rc == 0, err[-3000:]
    assert not _same_as_committed(out)
    recovered = [l for l in err.splitlines() if "removing" in l]
    print(f"killed inside {seen}; the next run: rc 0, {recovered or 'nothing to recover'}")


def series_entries() -> list:
    from regen import manifest
    return manifest.load(REPO / "cocci" / "series.toml").entries


def _wait_for_child(p: subprocess.Popen, word: str, timeout: float) -> str | None:
    """Wait until a child of `p` runs git with `word` in its command line
    (the driver runs git itself: setpriv execs it); that command line (None:
    `p` ended or the time ran out first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and p.poll() is None:
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if ppid != p.pid:
                    continue
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except (OSError, IndexError, ValueError):
                continue
            if re.search(rf"\bgit\b.*\b{word}\b", cmd):
                return cmd.strip()
        time.sleep(0.005)
    return None
