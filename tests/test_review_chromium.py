"""The review page of the committed 5.10 series in headless Chromium.

Debian's `chromium` (scripts/install-deps.sh installs it) takes a
screenshot and dumps the DOM it built.  The test fails when Chromium is
missing, when the screenshot is missing or nearly uniform (an empty or
unstyled page), when the DOM lacks a section, a rule file or template, or
when it shows another number of patches than the series has.  The checks
are run on an empty page too, which they must reject.  Chromium runs with
a time limit (its whole process group is killed) and a profile in a temp
directory.
"""
import os
import re
import shutil
import signal
import struct
import subprocess
import zlib
from html import escape
from pathlib import Path

import pytest

from report import patches as P
from report import review
from base import paths

TIMEOUT = 120                   # seconds for one Chromium run
SIZE = (1280, 2000)
HEADER_RGB = (0x22, 0x31, 0x3F)   # review.html_page.CSS: header{background:#22313f}


def chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("chromium")
    if exe is None:
        pytest.fail("chromium is not installed: `sh scripts/install-deps.sh` installs it "
                    "(Debian package chromium)")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
           "--no-first-run", "--disable-extensions", "--hide-scrollbars",
           "--disable-dev-shm-usage", *args]
    env = dict(os.environ, HOME=str(profile))    # nothing written to the real home
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail(f"chromium did not finish in {TIMEOUT}s: {' '.join(cmd)}")
    return subprocess.CompletedProcess(cmd, p.returncode, out.decode(errors="replace"),
                                       err.decode(errors="replace"))


def screenshot(url: str, png: Path, profile: Path) -> subprocess.CompletedProcess:
    return chromium([f"--screenshot={png}", f"--window-size={SIZE[0]},{SIZE[1]}", url], profile)


def dump_dom(url: str, profile: Path) -> str:
    cp = chromium(["--dump-dom", url], profile)
    assert cp.returncode == 0, cp.stderr[-2000:]
    return cp.stdout


def png_problems(png: Path) -> list[str]:
    """Why the screenshot is not a rendered review page ([] if it is)."""
    if not png.is_file() or png.stat().st_size == 0:
        return ["no screenshot"]
    data = png.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return ["not a PNG"]
    pos, idat, ihdr = 8, b"", None
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        if zlib.crc32(kind + chunk) != struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]:
            return [f"bad CRC in chunk {kind!r}"]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    if ihdr is None or not idat:
        return ["no IHDR or IDAT chunk"]
    if (ihdr[0], ihdr[1]) != SIZE:
        return [f"size {ihdr[0]}x{ihdr[1]}, not {SIZE[0]}x{SIZE[1]}"]
    zlib.decompress(idat)            # the image data is whole
    from PIL import Image
    with Image.open(png) as im:
        rgb = im.convert("RGB")
    colors = rgb.getcolors(maxcolors=1 << 16)      # None: more than 65536 colours
    problems = []
    if colors is not None:
        top = max(c for c, _ in colors)
        if len(colors) < 16:
            problems.append(f"only {len(colors)} colours")
        if top > 0.97 * SIZE[0] * SIZE[1]:
            problems.append(f"nearly uniform: one colour covers {top / (SIZE[0] * SIZE[1]):.1%}")
    # the page's own styling is there: the header band, and text below it
    if rgb.getpixel((4, 4)) != HEADER_RGB:
        problems.append(f"no header band (pixel (4,4) is {rgb.getpixel((4, 4))})")
    band = rgb.crop((0, 300, SIZE[0], 900)).getcolors(maxcolors=1 << 16)
    if band is not None and len(band) < 8:
        problems.append("nothing rendered below the header")
    return problems


def dom_problems(dom: str, n_patches: int, sources: list[str]) -> list[str]:
    """Why the dumped DOM is not the whole review page ([] if it is)."""
    problems = []
    for sid, name in ((s.id, s.title) for s in review.SECTIONS):
        if not re.search(rf'<section id="{sid}"><h2>\d+\. {re.escape(name)}</h2>', dom):
            problems.append(f"section {sid} missing")
        if f'href="#{sid}"' not in dom:
            problems.append(f"no table-of-contents link to {sid}")
    for key in sources:
        anchor = "src-" + re.sub(r"[^A-Za-z0-9]+", "-", key).strip("-")
        if f'id="{anchor}"' not in dom or f"<strong>{key}</strong>" not in dom:
            problems.append(f"{key} missing")
    shown = re.findall(r'<article class="patch box" id="patch-(\d{4})">', dom)
    if len(shown) != n_patches:
        problems.append(f"{len(shown)} patches shown, the series has {n_patches}")
    elif shown != [f"{i:04d}" for i in range(1, n_patches + 1)]:
        problems.append("patches out of order or misnumbered")
    m = re.search(r'id="patch-count">(\d+)<', dom)
    if not m or int(m.group(1)) != n_patches:
        problems.append(f"summary shows {m.group(1) if m else 'no'} patches, not {n_patches}")
    return problems


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """The review of the committed 5.10 series (empty private cache: every
    result "not run"), its screenshot and its DOM, and an empty page's."""
    tmp = tmp_path_factory.mktemp("review")
    old = os.environ.get("SLABCONV_CACHE")
    os.environ["SLABCONV_CACHE"] = str(tmp / "cache")
    try:
        rv = review.build("5.10")
    finally:
        if old is None:
            os.environ.pop("SLABCONV_CACHE", None)
        else:
            os.environ["SLABCONV_CACHE"] = old
    html, _ = review.write(rv, tmp / "out")
    profile = tmp / "profile"
    profile.mkdir()
    png = tmp / "review.png"
    shot = screenshot(html.as_uri(), png, profile)
    dom = dump_dom(html.as_uri(), profile)
    empty = tmp / "empty.html"
    empty.write_text("<!DOCTYPE html><html><body></body></html>\n")
    empty_png = tmp / "empty.png"
    screenshot(empty.as_uri(), empty_png, profile)
    return {"review": rv, "png": png, "shot": shot, "dom": dom, "empty_png": empty_png}


def _sources() -> list[str]:
    return ([f"cocci/rules/{f.name}" for f in sorted((paths.COCCI / "rules").glob("*.cocci"))]
            + [f"cocci/templates/{f.name}" for f in sorted((paths.COCCI / "templates").glob("*"))]
            + ["regen/members.py"])


def test_screenshot_shows_the_page(rendered):
    assert rendered["shot"].returncode == 0, rendered["shot"].stderr[-2000:]
    assert png_problems(rendered["png"]) == []


def test_dom_has_every_section_rule_and_patch(rendered):
    n = len(P.numbered_patches(paths.GENERATED / "5.10"))
    assert n == len(rendered["review"].patches) > 0
    assert dom_problems(rendered["dom"], n, _sources()) == []
    # the results of an empty cache are "not run", never invented
    dom = rendered["dom"]
    for sid in ("verify", "residue", "boot"):
        part = dom.split(f'<section id="{sid}">')[1].split("</section>")[0]
        assert "not run" in part and 'class="ok"' not in part


def test_the_checks_reject_an_empty_page(rendered):
    assert png_problems(rendered["empty_png"]) != []
    assert png_problems(rendered["empty_png"].with_name("missing.png")) == ["no screenshot"]
    n = len(rendered["review"].patches)
    assert dom_problems("<html><head></head><body></body></html>", n, _sources()) != []
    # a page that lost a rule or a patch is caught too
    dom = rendered["dom"]
    assert any("missing" in p for p in dom_problems(
        dom.replace('<strong>cocci/rules/slab_fold.cocci</strong>', ''), n, _sources()))
    assert dom_problems(dom, n + 1, _sources()) != []


# ---------------------------------------------------------------------------
# the page with what the commands record: exact attribution, range-diff, regen

# the IOMMU patch, found by its subject
PLANTED = ("iommu-Use-put_pages_list", "+\tlist_add_tail(&p->lru, list);", "+\tlist_add(&p->lru, list);")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The committed 5.10 series reviewed with what `slabconv regen` (into a
    scratch directory, with the committed series' identity), `slabconv
    attribute` and `slabconv range-diff` (HEAD against the working copy)
    record, and a planted series (one line of the IOMMU patch changed, as a rule
    change would) reviewed with its range-diff against HEAD.  The commands
    run on the session's cache (seconds to a minute or two when warm; cold,
    the fetch, the baseline and ~300 single-rule spatch runs: ~6 min); their
    records are copied into a private cache that the review reads."""
    from report import attribution as A
    from report import rangediff as RD
    from report import reproduce
    from cli.main import main
    tmp = tmp_path_factory.mktemp("recorded")
    priv = tmp / "cache"
    committed = paths.GENERATED / "5.10"
    mp = pytest.MonkeyPatch()
    mp.setenv("SLABCONV_IDENTITY", P.read_source(committed)["identity"])
    try:
        assert main(["regen", "--kernel", "5.10", "--output", str(tmp / "regen")]) == 0
    finally:
        mp.undo()
    d = reproduce.digest(tmp / "regen")
    rec = paths.cache_root() / "runs" / "regen-5.10" / f"{d}.json"
    (priv / "runs" / "regen-5.10").mkdir(parents=True)
    shutil.copy(rec, priv / "runs" / "regen-5.10" / rec.name)
    at = A.attribute("5.10", committed)
    A.record(at, priv)
    old = RD.side_from_rev("HEAD", "5.10", tmp / "old")
    old.baseline = RD.baseline_of(old)
    new = RD.side_from_dir(committed, "5.10", "working copy")
    new.baseline = old.baseline
    RD.record(RD.range_diff(old, new, tmp / "rd1"), priv)
    planted = tmp / "planted"
    shutil.copytree(committed, planted)
    (p57,) = [p for p in P.numbered_patches(planted) if PLANTED[0] in p.name]
    text = p57.read_text()
    assert text.count(PLANTED[1]) == 1
    p57.write_text(text.replace(PLANTED[1], PLANTED[2]))
    psd = RD.side_from_dir(planted, "5.10", "planted")
    psd.baseline = old.baseline
    RD.record(RD.range_diff(old, psd, tmp / "rd2"), priv)
    mp = pytest.MonkeyPatch()
    mp.setenv("SLABCONV_CACHE", str(priv))
    try:
        rv = review.build("5.10")
        rvp = review.build("5.10", planted)
    finally:
        mp.undo()
    html, _ = review.write(rv, tmp / "out")
    phtml, _ = review.write(rvp, tmp / "planted-out")
    profile = tmp / "profile"
    profile.mkdir()
    png = tmp / "recorded.png"
    shot = screenshot(html.as_uri(), png, profile)
    same = subprocess.run(["git", "-C", str(paths.REPO), "diff", "--quiet", "HEAD", "--",
                           str(committed)]).returncode == 0
    return {"review": rv, "at": at, "dom": dump_dom(html.as_uri(), profile),
            "pdom": dump_dom(phtml.as_uri(), profile), "png": png, "shot": shot,
            "regen_same": d == reproduce.digest(committed), "same_as_head": same}


def _part(dom: str, sid: str) -> str:
    return dom.split(f'<section id="{sid}">')[1].split("</section>")[0]


def rule_rows(dom: str) -> dict[str, tuple[int, int]]:
    """The rule table as shown: source -> (hunks, own)."""
    return {m[0]: (int(m[1]), int(m[2])) for m in re.findall(
        r'<tr data-source="([^"]+)">.*?<td class="n hunks">(\d+)</td>'
        r'<td class="n own">(\d+)', dom)}


def test_recorded_page_renders(recorded):
    assert recorded["shot"].returncode == 0, recorded["shot"].stderr[-2000:]
    assert png_problems(recorded["png"]) == []
    rv = recorded["review"]
    assert dom_problems(recorded["dom"], len(rv.patches), _sources()) == []


def test_every_hunk_is_attributed_and_own_is_what_was_recorded(recorded):
    from report import attribution as A
    rv, at, dom = recorded["review"], recorded["at"], recorded["dom"]
    assert all(e.exact for e in at.entries), [e.entry for e in at.entries if not e.exact]
    n = len(rv.patches)
    assert f"{n} of {n} patches attributed hunk by hunk" in _part(dom, "summary")
    # one caption per hunk, in the patches section
    hunks = sum(len(p.hunks) for p in rv.patches)
    assert _part(dom, "patches").count('<span class="made">hunk ') == hunks
    # the table shows the recorded figures: each rule's hunks and own
    rows = rule_rows(dom)
    fig = A.per_source(at, rv.patches)
    for key, (h, o) in rows.items():
        want = fig.get(key, {"hunks": set(), "own": set()})
        assert (h, o) == (len(want["hunks"]), len(want["own"])), key
    # a conversion's rules no longer all claim the same hunks and own none
    conv = ["cocci/rules/slab_param.cocci", "cocci/rules/slab_callers.cocci"]
    assert all(rows[k][1] > 0 for k in conv), {k: rows[k] for k in conv}
    assert len({rows[k][0] for k in conv + ["cocci/rules/slab_fold.cocci"]}) == 3
    assert sum(o for _, o in rows.values()) <= hunks


def test_each_rule_box_has_its_smpl_and_its_cases(recorded):
    dom = _part(recorded["dom"], "rules")
    for f in sorted((paths.COCCI / "rules").glob("*.cocci")):
        anchor = "src-" + re.sub(r"[^A-Za-z0-9]+", "-", f"cocci/rules/{f.name}").strip("-")
        box = dom.split(f'id="{anchor}"')[1].split('<details class="box source"')[0]
        assert '<details class="smpl">' in box, f.name
        first = next(ln for ln in f.read_text().splitlines() if ln.startswith("///"))
        assert escape(first, quote=False) in box, f.name     # as the DOM serialises text
        n = len(list((paths.COCCI / "tests" / f.stem).glob("*.c")))
        assert box.count("data-case=") == n, (f.name, n)


def test_each_patch_shows_its_manifest_entry(recorded):
    rv, dom = recorded["review"], _part(recorded["dom"], "patches")
    for p in rv.patches:
        art = dom.split(f'id="patch-{p.tag}"')[1].split("</article>")[0]
        entry = rv.entry_of[p.number]
        assert '<details class="entry">' in art and f'id = "{entry}"' in art.replace("&quot;", '"'), p.tag


def test_the_byte_for_byte_line_comes_from_the_regen_record(recorded):
    rv, dom = recorded["review"], recorded["dom"]
    line = re.search(r'<p id="reproduced" class="(\w+)">(.*?)</p>', dom)
    assert line is not None
    if not recorded["regen_same"]:
        assert line[1] == "norepro" and "No regen in this cache" in line[2]
        pytest.fail("the rules do not reproduce the committed series: regen wrote other bytes")
    rec = rv.reproduced
    assert rec is not None and rec["spatch"] in line[2] and rec["commit"][:12] in line[2]
    if rec["dirty"]:
        assert line[1] == "norepro" and line[2].startswith("Not a reproduction by a commit")
    elif rec["committed"]:
        assert line[1] == "repro" and "reproduce the committed series byte for byte" in line[2]


def test_range_diffs_show_exactly_the_changed_patch(recorded):
    rv = recorded["review"]
    n = len(rv.patches)
    statuses = re.findall(r'<tr data-status="(.)">', _part(recorded["dom"], "rangediff"))
    assert len(statuses) == n
    if recorded["same_as_head"]:
        assert statuses == ["="] * n
    part = _part(recorded["pdom"], "rangediff")
    rows = re.findall(r'<tr data-status="(.)"><td class="n">(\d+|-)</td>', part)
    k = next(int(p.name[:4]) for p in P.numbered_patches(paths.GENERATED / "5.10")
             if PLANTED[0] in p.name)
    assert [s for s, _ in rows] == ["="] * (k - 1) + ["!"] + ["="] * (n - k)
    changed = part.split('<tr data-status="!">')[1].split("</tr>")[0]
    assert f'href="#patch-{k:04d}"' in changed and "list_add(&amp;p-&gt;lru, list);" in changed
    # the planted series is no series regen wrote, nor one the attribution was made of
    assert "No regen in this cache wrote exactly these files" in recorded["pdom"]
    assert "not recorded for this series" in _part(recorded["pdom"], "summary")
