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
from pathlib import Path

import pytest

from report import patches as P
from report import review
from slabconv import paths

TIMEOUT = 120                   # seconds for one Chromium run
SIZE = (1280, 2000)
HEADER_RGB = (0x22, 0x31, 0x3F)   # review.CSS: header{background:#22313f}


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
    for sid, name in review.SECTIONS:
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
