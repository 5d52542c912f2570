"""A Debian mirror on the loopback for the network-fault tests.

    repo = Archive(tmp / "archive")
    repo.add("bullseye", [deb], alias="oldoldstable")
    repo.add("bullseye-security", [deb], archs=("amd64",))
    with Mirror(repo.root, fail_first=2, truncate_once=("Packages",)) as m:
        m.value   # "[trusted=yes] http://127.0.0.1:PORT/debian http://...:PORT/debian-security"

Archive writes what apt reads from a mirror, the archive under debian/ and
the -security suites under debian-security/, as on Debian's mirrors:
pool/ with the .deb files, dists/<suite>/main/binary-<arch>/Packages
(Filename, Size, SHA256 from the files) and dists/<suite>/Release with
Suite (the alias, if given, else the name) and Codename, and the
Packages' sizes and SHA256 (unsigned: the sources line says
[trusted=yes]; apt still checks every index against Release, so a
truncated index is apt's real "File has unexpected size ... Mirror sync
in progress?").  An alias is also served as dists/<alias>, a link to the
codename's directory, as Debian's mirrors serve "stable".  A suite the
archive lacks is a 404, as on a real mirror.

Mirror serves it with http.server in a thread (`url`, `security_url`,
and `value`: both for $SLABCONV_APT_MIRROR): the first `fail_first`
requests get 503; a path ending in one of `truncate_once` is served
truncated the first time; one containing one of `broken` always is.
`requests` lists the paths asked for.  dead_url() is a port nobody
listens on.
"""
from __future__ import annotations

import email.utils
import hashlib
import http.server
import socket
import subprocess
import threading
from pathlib import Path

ELF_I386 = (b"\x7fELF\x01\x01\x01" + bytes(9) + (2).to_bytes(2, "little")
            + (3).to_bytes(2, "little") + bytes(44))       # ET_EXEC, EM_386
ELF_ARM64 = (b"\x7fELF\x02\x01\x01" + bytes(9) + (2).to_bytes(2, "little")
             + (183).to_bytes(2, "little") + bytes(60))     # ET_EXEC, EM_AARCH64


def build_deb(dest: Path, package: str, version: str, arch: str,
              files: dict[str, bytes]) -> Path:
    """A .deb holding files (path -> content, mode 0755)."""
    root = dest / f"build-{package}-{arch}"
    (root / "DEBIAN").mkdir(parents=True)
    for rel, data in files.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(data)
        f.chmod(0o755)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {package}\nVersion: {version}\nArchitecture: {arch}\n"
        "Maintainer: slabconv tests <nobody@example.org>\nDescription: test package\n")
    out = dest / f"{package}_{version.replace(':', '%3a')}_{arch}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(root), str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    return out


class Archive:
    """A tiny Debian archive under root/debian and root/debian-security (one
    component, main)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        for top in ("debian", "debian-security"):
            (self.root / top / "pool").mkdir(parents=True, exist_ok=True)

    def add(self, suite: str, debs, archs=("amd64",), *, alias: str | None = None,
            codename: str | None = None, not_automatic: bool = False) -> None:
        """suite (a codename, e.g. "trixie-backports") with debs; alias
        ("stable-backports") is its Suite: and a second name for it."""
        top = self.root / ("debian-security" if suite.endswith("-security") else "debian")
        stanzas = {a: [] for a in archs}
        for deb in debs:
            deb = Path(deb)
            fields = subprocess.run(["dpkg-deb", "-f", str(deb)], check=True, text=True,
                                    stdout=subprocess.PIPE).stdout.strip()
            arch = subprocess.run(["dpkg-deb", "-f", str(deb), "Architecture"], check=True,
                                  text=True, stdout=subprocess.PIPE).stdout.strip()
            pool = f"pool/main/{suite}/{deb.name}"
            (top / pool).parent.mkdir(parents=True, exist_ok=True)
            data = deb.read_bytes()
            (top / pool).write_bytes(data)
            stanza = (f"{fields}\nFilename: {pool}\nSize: {len(data)}\n"
                      f"SHA256: {hashlib.sha256(data).hexdigest()}\n")
            for a in archs:
                if arch in (a, "all"):
                    stanzas[a].append(stanza)
        dists = top / "dists" / suite
        lines = []
        for a in archs:
            rel = f"main/binary-{a}/Packages"
            (dists / rel).parent.mkdir(parents=True, exist_ok=True)
            data = "\n".join(stanzas[a]).encode()
            (dists / rel).write_bytes(data)
            lines.append(f" {hashlib.sha256(data).hexdigest()} {len(data)} {rel}")
        (dists / "Release").write_text(
            f"Origin: slabconv-test\nSuite: {alias or suite}\nCodename: {codename or suite}\n"
            + ("NotAutomatic: yes\nButAutomaticUpgrades: yes\n" if not_automatic else "")
            + f"Date: {email.utils.formatdate(usegmt=True)}\n"
            f"Architectures: {' '.join(archs)}\nComponents: main\nSHA256:\n"
            + "\n".join(lines) + "\n")
        if alias and alias != suite:
            link = top / "dists" / alias
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(suite)


class Mirror:
    """http.server on 127.0.0.1 serving an Archive's root, with faults."""

    def __init__(self, root: Path, *, fail_first: int = 0, truncate_once=(), broken=()):
        self.root = Path(root)
        self.fail_first = fail_first
        self.truncate_once = list(truncate_once)
        self.broken = tuple(broken)
        self.requests: list[str] = []
        self.lock = threading.Lock()
        mirror = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def __init__(self, *a, **k):
                super().__init__(*a, directory=str(mirror.root), **k)

            def log_message(self, *a):
                pass

            def do_GET(self):
                with mirror.lock:
                    mirror.requests.append(self.path)
                    n = len(mirror.requests)
                    cut = any(b in self.path for b in mirror.broken)
                    for suffix in list(mirror.truncate_once):
                        if self.path.endswith(suffix):
                            mirror.truncate_once.remove(suffix)
                            cut = True
                if n <= mirror.fail_first:
                    self.send_error(503, "Service Unavailable (fake mirror)")
                    return
                f = Path(self.translate_path(self.path))
                if cut and f.is_file():
                    data = f.read_bytes()[:-7]          # a mirror caught mid-sync
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                super().do_GET()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/debian"
        self.security_url = self.url + "-security"
        self.value = f"[trusted=yes] {self.url} {self.security_url}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def source(self, suite: str) -> str:
        url = self.security_url if suite.endswith("-security") else self.url
        return f"deb [trusted=yes] {url} {suite} main"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def dead_url() -> str:
    """An http URL on the loopback where nothing listens (connection refused)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/debian"
