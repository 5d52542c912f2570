"""The Debian mirrors of the machine's apt configuration (fetch/mirrors.py):
deb822 and one-line files, disabled files, the archive and the security
archive, $SLABCONV_APT_MIRROR, and the errors, each naming file and line.
Every configuration here is a fake /etc/apt in a temporary directory."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from base.log import SlabconvError  # noqa: E402
from fetch import mirrors, suites  # noqa: E402

LOCAL = "http://mirror.invalid/debian"
LOCAL_SEC = "http://mirror.invalid/debian-security"
KEY = "/usr/share/keyrings/local-mirror.gpg"

DEB822 = f"""\
# the archive, by a local mirror
Types: deb deb-src
URIs: {LOCAL}
# a comment inside the stanza
Suites: bookworm
  bookworm-updates
Components: main contrib
Signed-By: {KEY}
Architectures: amd64

Types: deb
URIs: http://security.invalid/debian-security
Suites: bookworm-security
Components: main
Signed-By: {KEY}
"""


def etc(tmp_path: Path, files: dict[str, str], codename: str = "bookworm") -> Path:
    """A fake /etc/apt with files (path under it -> text), and an os-release."""
    root = tmp_path / "etc-apt"
    (root / "sources.list.d").mkdir(parents=True)
    for rel, text in files.items():
        (root / rel).write_text(text)
    (tmp_path / "os-release").write_text(f'NAME="Debian GNU/Linux"\n'
                                         f'VERSION_CODENAME={codename}\n')
    return root


@pytest.fixture(autouse=True)
def no_override(monkeypatch):
    monkeypatch.delenv(mirrors.ENV, raising=False)


def config(tmp_path, files, **kw) -> mirrors.Mirrors:
    root = etc(tmp_path, files, **kw)
    return mirrors.from_config(root, tmp_path / "os-release")


def test_deb822_stanzas_fields_comments_and_continuation_lines(tmp_path):
    entries, problems = mirrors.parse_deb822(DEB822, "x.sources")
    assert problems == []
    a, s = entries
    assert a.types == ("deb", "deb-src") and a.uris == (LOCAL,)
    assert a.suites == ("bookworm", "bookworm-updates") and a.components == ("main", "contrib")
    assert ("signed-by", KEY) in a.options and a.where == "x.sources:2"
    assert s.suites == ("bookworm-security",) and s.where == "x.sources:11"


def test_one_line_entries_options_and_comments():
    text = (f"# deb http://old.invalid/debian bookworm main\n"
            f"deb [arch=amd64 signed-by={KEY}] {LOCAL} bookworm main  # trailing comment\n"
            f"deb-src {LOCAL} bookworm main\n\n"
            f"deb {LOCAL_SEC} bookworm-security main contrib\n")
    entries, problems = mirrors.parse_one_line(text, "sources.list")
    assert problems == []
    assert [(e.types, e.uris, e.suites, e.components, e.where) for e in entries] == [
        (("deb",), (LOCAL,), ("bookworm",), ("main",), "sources.list:2"),
        (("deb-src",), (LOCAL,), ("bookworm",), ("main",), "sources.list:3"),
        (("deb",), (LOCAL_SEC,), ("bookworm-security",), ("main", "contrib"),
         "sources.list:5")]
    assert entries[0].options == (("arch", "amd64"), ("signed-by", KEY))


def test_a_machine_with_another_mirror_is_used_as_configured(tmp_path):
    m = config(tmp_path, {"sources.list.d/debian.sources": DEB822})
    assert (m.archive, m.security) == (LOCAL, "http://security.invalid/debian-security")
    assert m.line("bullseye") == f"deb [signed-by={KEY}] {LOCAL} bullseye main"
    assert m.line("stable-security") == \
        f"deb [signed-by={KEY}] http://security.invalid/debian-security stable-security main"
    assert m.origin.endswith("debian.sources:2") and m.security_origin.endswith(
        "debian.sources:11")


def test_one_line_sources_list_and_parts_in_apt_order(tmp_path):
    m = config(tmp_path, {
        "sources.list": f"deb [trusted=yes] {LOCAL} bookworm main\n",
        "sources.list.d/a-other.list": "deb http://other.invalid/debian bookworm main\n",
        "sources.list.d/security.list": f"deb {LOCAL_SEC} bookworm-security main\n"})
    assert (m.archive, m.options, m.security) == (LOCAL, "[trusted=yes]", LOCAL_SEC)
    assert m.line("sid") == f"deb [trusted=yes] {LOCAL} sid main"
    assert m.line("bookworm-security") == f"deb {LOCAL_SEC} bookworm-security main"


def test_disabled_files_and_entries_and_other_repositories_are_ignored(tmp_path):
    m = config(tmp_path, {
        "sources.list.d/0-old.sources.disabled-by-admin":
            "Types: deb\nURIs: http://disabled.invalid/debian\nSuites: bookworm\n"
            "Components: main\n",
        "sources.list.d/1-old.list.save": "deb http://saved.invalid/debian bookworm main\n",
        "sources.list.d/2-off.sources":
            "Types: deb\nURIs: http://off.invalid/debian\nSuites: bookworm\n"
            "Components: main\nEnabled: no\n",
        "sources.list.d/3-vendor.list": "deb http://vendor.invalid/apt nodistro main\n",
        "sources.list.d/4-cloud.list": "deb http://cloud.invalid/apt cloud-sdk-bookworm main\n",
        "sources.list.d/5-debian.sources": DEB822})
    assert m.archive == LOCAL


def test_without_a_security_entry_the_security_archive_is_the_sibling(tmp_path):
    m = config(tmp_path, {"sources.list": f"deb {LOCAL}/ stable main\n"})
    assert (m.archive, m.security) == (LOCAL, LOCAL_SEC)
    assert m.security_origin.startswith("derived from ") and m.options == ""
    assert mirrors.derive_security("http://mirror.invalid") == LOCAL_SEC


def test_no_usable_debian_entry_is_an_error_naming_files_and_lines(tmp_path):
    with pytest.raises(SlabconvError) as e:
        config(tmp_path, {
            "sources.list": "# nothing\n",
            "sources.list.d/vendor.list": "\ndeb http://vendor.invalid/apt nodistro main\n",
            "sources.list.d/sec.sources":
                f"Types: deb\nURIs: {LOCAL_SEC}\nSuites: bookworm-security\n"
                "Components: main\n",
            "sources.list.d/broken.sources": "Types: deb\nSuites: bookworm\n"})
    msg = str(e.value)
    assert e.value.exit_code == 2
    assert msg.startswith("no Debian archive in the apt configuration (")
    root = tmp_path / "etc-apt"
    assert f"{root}/sources.list.d/vendor.list:2: suite nodistro is not a Debian suite" in msg
    assert f"{root}/sources.list.d/broken.sources:1: a stanza without URIs" in msg
    assert f"{root}/sources.list.d/sec.sources:1: only a security archive" in msg
    assert msg.endswith("Set SLABCONV_APT_MIRROR=URI (the Debian archive to use) to go on.")


def test_an_empty_configuration_is_an_error(tmp_path):
    with pytest.raises(SlabconvError) as e:
        config(tmp_path, {})
    assert "no sources.list or sources.list.d files in" in str(e.value)
    assert e.value.exit_code == 2


def test_the_variable_overrides_the_configuration(tmp_path, monkeypatch):
    root = etc(tmp_path, {"sources.list.d/debian.sources": DEB822})
    monkeypatch.setattr(mirrors, "APT_ETC", root)
    monkeypatch.setattr(mirrors, "OS_RELEASE", tmp_path / "os-release")
    assert mirrors.machine().archive == LOCAL
    monkeypatch.setenv(mirrors.ENV, "http://other.invalid/debian")
    m = mirrors.machine()
    assert (m.archive, m.security, m.options) == ("http://other.invalid/debian",
                                                 "http://other.invalid/debian-security", "")
    assert m.origin == "$SLABCONV_APT_MIRROR"
    assert m.security_origin == "derived from $SLABCONV_APT_MIRROR"
    monkeypatch.setenv(mirrors.ENV, f"[signed-by={KEY}] {LOCAL} http://sec.invalid/ds")
    m = mirrors.machine()
    assert m.line("trixie-security") == \
        f"deb [signed-by={KEY}] http://sec.invalid/ds trixie-security main"
    assert suites.named("bookworm-i386").sources == (f"deb [signed-by={KEY}] {LOCAL} "
                                                     f"bookworm main",)


@pytest.mark.parametrize("bad", ["mirror.invalid", "http://a.invalid http://b.invalid x://c",
                                 "[arch=i386] http://a.invalid/debian"])
def test_a_bad_variable_is_an_error(monkeypatch, bad):
    monkeypatch.setenv(mirrors.ENV, bad)
    with pytest.raises(SlabconvError) as e:
        mirrors.machine()
    assert e.value.exit_code == 2 and "$SLABCONV_APT_MIRROR" in str(e.value)


def test_this_machines_configuration_has_a_debian_archive():
    """The machine the tests run on is configured for Debian (its apt
    sources list a Debian suite): what `make fetch` uses."""
    m = mirrors.from_config()
    assert m.archive.split(":", 1)[0] in ("http", "https", "file", "mirror", "mirror+http",
                                          "mirror+https", "tor+http", "tor+https", "ftp")
