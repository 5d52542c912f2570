"""An object's functions as normalised text: one objdump call, then every
instruction rendered without what moves when unrelated code moves (see
the package's header: Normalisations)."""
from __future__ import annotations

import bisect as _bisect
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from base.log import SlabconvError
from base import arches
from .elf import (EM_386, EM_AARCH64, EM_X86_64, SHF_MERGE, SHF_STRINGS, SHT_NOBITS, STB_LOCAL, STT_FILE,
                  STT_FUNC, STT_OBJECT, STT_SECTION, Reloc, Section, Symbol, Elf)


OBJDUMP_ARGS = ("-d", "-z", "-w", "--no-show-raw-insn")

_INSN = re.compile(r"^\s*([0-9a-f]+):\t(.*)$")
_SECTION = re.compile(r"^Disassembly of section (.+):$")
_PREFIX = r"(?:(?:bnd|notrack|cs|ds|data16|addr32|rex\.?\w*)\s)*"
_BRANCH = re.compile(r"^(" + _PREFIX + r"(?:call|jmp|j[a-z]{1,4}|loop[a-z]*|jecxz|jrcxz|jcxz|"
                     r"xbegin)[a-z]?(?:,p[tn])?)\s+([0-9a-f]+)(?:\s+<[^>]*>)?$")
_RIP = re.compile(r"(-?0x[0-9a-f]+)\(%rip\)")
_COMMENT = re.compile(r"\s+#\s*([0-9a-f]+)?.*$")
_PADDING = re.compile(r"^(?:(?:data16|cs|ds)\s)*(?:nop[wlq]?\b.*|xchg\s+%ax,%ax|int3|"
                      r"lea\s+0x0\(%[er]?si(?:,%[er]iz,1)?\),%[er]?si|"
                      r"lea\s+0x0\(%[er]?di(?:,%[er]iz,1)?\),%[er]?di|"
                      r"mov\s+%esi,%esi|mov\s+%edi,%edi)$")
_CLONE = re.compile(r"\.(?:cold|constprop|isra|part|lto_priv|localalias)(?:\.\d+)?")
_COLD = re.compile(r"^(.+)\.cold(?:\.\d+)?$")
_NUMBERED = re.compile(r"^(.+)\.\d+$")
_UNIQUE = re.compile(r"^(__UNIQUE_ID_\w*?)\d+$")

# function -> argument number of __LINE__ (1-based)
LINE_CALLEES = {"__might_sleep": 2, "___might_sleep": 2, "__cant_sleep": 2,
                "__cant_migrate": 2, "__might_fault": 2, "__might_resched": 2,
                "lockdep_rcu_suspicious": 2, "warn_slowpath_fmt": 2}
_ARG_REGS = {EM_X86_64: ("rdi", "rsi", "rdx", "rcx", "r8", "r9"),
             EM_386: ("eax", "edx", "ecx")}                 # the kernel's -mregparm=3
_LINE_LOOKBACK = 12

# AArch64 (objdump's text, whitespace collapsed): a direct branch, a
# compare-and-branch, a test-and-branch, adr/adrp: the target address last
# ("b.ne 3c <f+0x3c>", "cbz x0, 40 <f+0x40>", "tbnz w1, #3, 1c <f+0x1c>").
_A64_BRANCH = re.compile(r"^((?:bl?|b\.\w+|cbn?z [wx]\d+,|tbn?z [wx]\d+, #(?:0x)?[0-9a-f]+,|"
                         r"adrp? x\d+,))\s*([0-9a-f]+)(?:\s+<[^>]*>)?$")
_A64_PADDING = re.compile(r"^(?:nop|udf #0x0|\.inst 0x00000000.*)$")


@dataclass(frozen=True)
class _Isa:
    """What the normalisation needs to know of an instruction set."""
    branch: re.Pattern      # group 1: mnemonic and operands before the target; 2: the target
    padding: re.Pattern     # alignment padding, not code
    call: str               # the call mnemonic
    arg_regs: tuple         # each argument register's set of names, first argument first
    flow: tuple             # mnemonics that leave straight-line code
    skip: tuple             # prefixes before a mnemonic
    const: re.Pattern       # a constant loaded into a register: groups mnemonic, register
    dest_last: bool         # the destination is the last operand (AT&T) or the first
    comment: re.Pattern     # objdump's comment after an instruction (group 1: an address)


def _x86(em: int) -> _Isa:
    return _Isa(_BRANCH, _PADDING, "call", tuple(_reg_names(r) for r in _ARG_REGS[em]),
                ("j", "call", "ret", "loop", "ud2", "int3"),
                ("bnd", "notrack", "cs", "ds", "data16", "addr32", "lock", "rep", "repz",
                 "repnz"),
                re.compile(r"^(mov[lq]?) \$0x[0-9a-f]+,(%\w+)$"), True, _COMMENT)


def _isa(em: int) -> _Isa:
    if em == EM_AARCH64:
        return _Isa(_A64_BRANCH, _A64_PADDING, "bl",
                    tuple({f"x{i}", f"w{i}"} for i in range(8)),
                    ("b", "ret", "cbz", "cbnz", "tbz", "tbnz", "brk", "eret"), (),
                    re.compile(r"^(mov[kz]?) ([wx]\d+), #0x[0-9a-f]+$"), False,
                    re.compile(r"\s+//\s*()?.*$"))
    return _x86(em)


def clone_base(name: str) -> str:
    """foo.constprop.0.isra.0 / foo.cold / foo.part.1 -> foo."""
    return _CLONE.sub("", name)



def _reg_names(r: str) -> set:
    low = {"rdi": {"rdi", "edi", "di", "dil"}, "rsi": {"rsi", "esi", "si", "sil"},
           "rdx": {"rdx", "edx", "dx", "dl"}, "rcx": {"rcx", "ecx", "cx", "cl"},
           "r8": {"r8", "r8d", "r8w", "r8b"}, "r9": {"r9", "r9d", "r9w", "r9b"},
           "eax": {"eax", "ax", "al"}, "edx": {"edx", "dx", "dl"}, "ecx": {"ecx", "cx", "cl"}}
    return {"%" + x for x in low[r]}


def objdump_path(arch: str = "x86_64") -> str:
    """The objdump for an architecture's objects (base/arches.py)."""
    a = arches.get(arch)
    exe = shutil.which(a.objdump)
    if exe is None:
        raise SlabconvError(f"{a.objdump} not found (Debian package "
                            f"{'binutils' if not a.cross_compile else a.toolchain_package})",
                            exit_code=3)
    return exe


def _disassemble(path: Path, arch: str = "x86_64") -> list:
    """[(section name, [(addr, text)])] in objdump's order."""
    cp = subprocess.run([objdump_path(arch), *OBJDUMP_ARGS, str(path)], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, env={**os.environ, "LC_ALL": "C"})
    if cp.returncode != 0:
        raise SlabconvError(f"objdump failed on {path}: "
                            f"{cp.stderr.decode(errors='replace').strip()}", exit_code=1)
    out, cur = [], None
    for line in cp.stdout.decode("utf-8", "replace").splitlines():
        m = _INSN.match(line)
        if m and cur is not None:
            cur[1].append((int(m.group(1), 16), m.group(2)))
            continue
        m = _SECTION.match(line)
        if m:
            cur = (m.group(1), [])
            out.append(cur)
    return out


def _quote(b: bytes, limit: int = 160) -> str:
    s = []
    for c in b[:limit]:
        if c in (0x22, 0x5c):
            s.append("\\" + chr(c))
        elif 0x20 <= c < 0x7f:
            s.append(chr(c))
        elif c == 10:
            s.append("\\n")
        elif c == 9:
            s.append("\\t")
        else:
            s.append(f"\\x{c:02x}")
    q = '"' + "".join(s) + '"'
    if len(b) > limit:
        q += f"...#{hashlib.sha256(b).hexdigest()[:12]}"
    return q


@dataclass
class FuncCode:
    size: int
    digest: str
    text: str
    section: str = ""
    aliases: tuple = ()              # other names of the same code (identical code folding)

    def to_dict(self) -> dict:
        return {"size": self.size, "digest": self.digest, "section": self.section,
                "lines": self.text.count("\n") + 1, "aliases": list(self.aliases)}



@dataclass
class _Insn:
    addr: int
    end: int
    text: str                       # whitespace collapsed
    relocs: list                    # Reloc inside [addr, end)


@dataclass
class _Func:
    name: str                       # as in the object
    sec: Section
    start: int
    size: int


@dataclass
class _Snippet:
    sec: Section
    start: int
    end: int
    insns: list
    owner: Optional[str] = None     # function name it is attached to
    how: str = ""                   # "ref" | "table" | "jump"
    site: int = 0                   # offset in the owner (table/jump attribution)


class _Object:
    """An object's functions and everything needed to render their code."""

    def __init__(self, path, rename: Optional[dict] = None):
        self.path = Path(path)
        self.elf = Elf(path)
        self.rename = dict(rename or {})
        # a string equal to a renamed function's name (its __func__), unless
        # only the clone suffix changed (foo.isra.0 -> foo: __func__ is "foo")
        self.str_rename = {clone_base(k): clone_base(v) for k, v in self.rename.items()
                           if clone_base(k) != clone_base(v)}
        self.em = self.elf.machine
        self.isa = _isa(self.em)
        arch = arches.by_elf(2 if self.elf.is64 else 1, self.em).name
        secs = self.elf.sections
        with tempfile.TemporaryDirectory(prefix="objdiff-") as td:
            tmp = Path(td) / self.path.name
            dis = _disassemble(tmp if self.elf.zeroed_copy(tmp) else self.path, arch)
        # map objdump's section names to ELF sections, in order
        queue = {}
        for s in secs:
            if s.exec and s.type != SHT_NOBITS and s.size:
                queue.setdefault(s.name, []).append(s)
        self.insns = {}                 # section index -> [_Insn]
        self.starts = {}                # section index -> [addr]
        for name, lines in dis:
            q = queue.get(name)
            if not q:
                continue
            sec = q.pop(0)
            rl = self.elf.relocs.get(sec.index, [])
            roffs = [r.offset for r in rl]
            lst = []
            for i, (addr, text) in enumerate(lines):
                end = lines[i + 1][0] if i + 1 < len(lines) else sec.size
                lo = _bisect.bisect_left(roffs, addr)
                hi = _bisect.bisect_left(roffs, end)
                text = " ".join(text.split())
                if self.isa.comment is not _COMMENT:   # a comment that says nothing of a place
                    text = self.isa.comment.sub("", text)
                lst.append(_Insn(addr, end, text, rl[lo:hi]))
            self.insns[sec.index] = lst
            self.starts[sec.index] = [x.addr for x in lst]
        # symbols per section, for "which symbol covers this offset"
        self.by_sec = {}
        for s in self.elf.symbols:
            # not AArch64's mapping symbols ($x: code follows, $d: data)
            if s.defined and s.type not in (STT_SECTION, STT_FILE) and s.name \
                    and not s.name.startswith("$"):
                self.by_sec.setdefault(s.shndx, []).append(s)
        for lst in self.by_sec.values():
            lst.sort(key=lambda s: (s.value, -s.size, s.type != STT_FUNC,
                                    s.type != STT_OBJECT, s.name))
        self.sym_values = {k: [s.value for s in v] for k, v in self.by_sec.items()}
        self.funcs = {}                 # name -> _Func
        self.franges = {}               # section index -> sorted [(start, end, name)]
        for s in self.elf.symbols:
            if (s.type == STT_FUNC and s.defined and s.size > 0
                    and secs[s.shndx].exec and s.name):
                if s.name not in self.funcs:
                    self.funcs[s.name] = _Func(s.name, secs[s.shndx], s.value, s.size)
                self.franges.setdefault(s.shndx, []).append((s.value, s.value + s.size, s.name))
        self.group = {}                 # name -> all names of its range (aliases), if > 1
        for k, v in self.franges.items():
            v.sort()
            grouped = []
            for a, b, n in v:
                if grouped and grouped[-1][:2] == (a, b):
                    grouped[-1][2].append(n)
                else:
                    grouped.append((a, b, [n]))
            self.franges[k] = [(a, b, ns[0]) for a, b, ns in grouped]
            for _, _, ns in grouped:
                if len(ns) > 1:
                    for n in ns:
                        self.group[n] = tuple(ns)
        self.fstarts = {k: [a for a, _, _ in v] for k, v in self.franges.items()}
        self._refs = self._referenced_offsets()
        self.snippets = self._find_snippets()

    # ---- names --------------------------------------------------------
    def rn(self, name: str) -> str:
        """A name as it is compared (renames applied to it or its clone base)."""
        if name in self.rename:
            return self.rename[name]
        base, dot, rest = name.partition(".")
        if dot and base in self.rename:
            return self.rename[base] + "." + rest
        return name

    def fname(self, name: str) -> str:
        """A function as a target: its name, or {alias:a|b} when several
        names share its code (GCC's identical code folding makes a new
        function an alias of an old one); compare() picks one of them."""
        g = self.group.get(name)
        if g is None:
            return self.rn(name)
        return "{alias:" + "|".join(sorted(self.rn(x) for x in g)) + "}"

    def rn_string(self, b: bytes) -> bytes:
        try:
            s = b.decode()
        except UnicodeDecodeError:
            return b
        return self.str_rename[s].encode() if s in self.str_rename else b

    def sym_name(self, s: Symbol, depth: int = 0) -> str:
        if s.type == STT_FUNC:
            return self.rn(s.name)
        m = _UNIQUE.match(s.name)
        if m:
            return m.group(1) + "#"
        m = _NUMBERED.match(s.name)
        if s.bind == STB_LOCAL and m and s.type != STT_FUNC:
            name = m.group(1) + ".#"
            sec = self.elf.sections[s.shndx]
            if not sec.writable and sec.type != SHT_NOBITS and s.size and depth == 0:
                data = self.elf.section_data(sec)[s.value:s.value + s.size]
                name += "=" + self._content(data, sec, s.value)
            return name
        return self.rn(s.name)

    def _content(self, data: bytes, sec: Section, start: int) -> str:
        """A read-only object's content: a string, or its size, a digest of
        its bytes (relocated fields zeroed) and its relocations' targets."""
        rel = [r for r in self.elf.relocs.get(sec.index, [])
               if start <= r.offset < start + len(data)]
        if not rel and data.endswith(b"\0") and b"\0" not in data[:-1]:
            return _quote(self.rn_string(data[:-1]))
        buf = bytearray(data)
        targets = []
        for r in rel:
            o = r.offset - start
            buf[o:o + r.width] = bytes(len(buf[o:o + r.width]))
            t = self._target(r, None)
            targets.append(self.render_place(t[1], t[2], None, 1) if t[0] == "sec"
                           else self._render_target(t, None))
        txt = f"{len(buf)}:{hashlib.sha256(bytes(buf)).hexdigest()[:12]}"
        return txt + ("[" + ",".join(targets) + "]" if targets else "")

    # ---- where things are ------------------------------------------
    def func_at(self, shndx: int, off: int):
        rs = self.franges.get(shndx)
        if not rs:
            return None
        i = _bisect.bisect_right(self.fstarts[shndx], off) - 1
        for j in range(i, max(-1, i - 8), -1):
            a, b, name = rs[j]
            if a <= off < b:
                return name
        return None

    def sym_at(self, shndx: int, off: int) -> Optional[Symbol]:
        lst = self.by_sec.get(shndx)
        if not lst:
            return None
        vals = self.sym_values[shndx]
        i = _bisect.bisect_right(vals, off) - 1
        best = None
        j = i
        while j >= 0 and j > i - 64:
            s = lst[j]
            if s.value <= off < s.value + s.size or (s.size == 0 and s.value == off):
                if best is None or _rank(s) < _rank(best):
                    best = s
            j -= 1
        return best

    def _target(self, r: Reloc, insn_end: Optional[int]):
        """A relocation's target: ("sym", name, off) for a global or undefined
        symbol, ("sec", shndx, off) for a place in this object."""
        adj = (insn_end - r.offset) if (r.pcrel and insn_end is not None) else 0
        if r.sym == 0 or r.sym >= len(self.elf.symbols):
            return ("abs", None, r.addend + adj)
        s = self.elf.symbols[r.sym]
        if s.defined and (s.bind == STB_LOCAL or s.type == STT_SECTION):
            return ("sec", s.shndx, s.value + r.addend + adj)
        return ("sym", s.name, r.addend + adj)

    def _referenced_offsets(self) -> dict:
        """section index -> sorted offsets any relocation refers to."""
        refs = {}
        for shndx, lst in self.elf.relocs.items():
            sec = self.elf.sections[shndx]
            insns = self.insns.get(shndx)
            starts = self.starts.get(shndx)
            for r in lst:
                end = None
                if sec.exec and insns:
                    i = _bisect.bisect_right(starts, r.offset) - 1
                    if i >= 0:
                        end = insns[i].end
                t = self._target(r, end)
                if t[0] == "sec":
                    refs.setdefault(t[1], set()).add(t[2])
        # branches without relocations into uncovered code (inside a section)
        for shndx, insns in self.insns.items():
            for ins in insns:
                if ins.relocs:
                    continue
                m = self.isa.branch.match(ins.text)
                if m:
                    refs.setdefault(shndx, set()).add(int(m.group(2), 16))
        return {k: sorted(v) for k, v in refs.items()}

    # ---- code no function covers ----------------------------------------
    def _find_snippets(self) -> dict:
        """section index -> [_Snippet] of uncovered, non-padding code."""
        out = {}
        for shndx, insns in self.insns.items():
            sec = self.elf.sections[shndx]
            refs = set(self._refs.get(shndx, ()))
            cur = None
            lst = []
            for ins in insns:
                if self.func_at(shndx, ins.addr) is not None:
                    cur = None
                    continue
                if self.isa.padding.match(ins.text) and not ins.relocs:
                    cur = None
                    continue
                if cur is None or ins.addr in refs:
                    cur = _Snippet(sec, ins.addr, ins.end, [])
                    lst.append(cur)
                cur.insns.append(ins)
                cur.end = ins.end
            if lst:
                out[shndx] = lst
        self._attach_by_tables(out)
        self._attach_by_jumps(out)
        return out

    def snippet_at(self, shndx: int, off: int) -> Optional[_Snippet]:
        for sn in self.snippets.get(shndx, ()):
            if sn.start <= off < sn.end:
                return sn
        return None

    def _attach_by_tables(self, snippets: dict) -> None:
        """A table entry pointing at a function's instruction, next to one
        pointing at a snippet (.altinstructions: site, replacement)."""
        for shndx, lst in self.elf.relocs.items():
            sec = self.elf.sections[shndx]
            if sec.exec:
                continue
            by_off = {r.offset: r for r in lst}
            for r in lst:
                t = self._target(r, None)
                if t[0] != "sec" or t[1] not in snippets:
                    continue
                sn = next((x for x in snippets[t[1]] if x.start == t[2]), None)
                if sn is None or sn.owner:
                    continue
                for o in (r.offset - 4, r.offset + 4):
                    q = by_off.get(o)
                    if q is None:
                        continue
                    u = self._target(q, None)
                    if u[0] == "sec" and self.elf.sections[u[1]].exec:
                        f = self.func_at(u[1], u[2])
                        if f is not None:
                            sn.owner, sn.how = f, "table"
                            sn.site = u[2] - self.funcs[f].start if f in self.funcs else 0
                            break

    def _attach_by_jumps(self, snippets: dict) -> None:
        """A snippet that jumps back into a function (.fixup)."""
        for shndx, lst in snippets.items():
            for sn in lst:
                if sn.owner:
                    continue
                for ins in sn.insns:
                    tgt = None
                    for r in ins.relocs:
                        t = self._target(r, ins.end)
                        if t[0] == "sec" and self.elf.sections[t[1]].exec:
                            tgt = t
                            break
                    if tgt is None:
                        m = self.isa.branch.match(ins.text)
                        if m:
                            tgt = ("sec", shndx, int(m.group(2), 16))
                    if tgt is None:
                        continue
                    f = self.func_at(tgt[1], tgt[2])
                    if f is not None:
                        sn.owner, sn.how = f, "jump"
                        sn.site = tgt[2] - self.funcs[f].start if f in self.funcs else 0
                        break

    # ---- rendering --------------------------------------------------
    def render_place(self, shndx: int, off: int, ctx, depth: int = 0) -> str:
        secs = self.elf.sections
        if shndx >= len(secs):
            return f"?{shndx}+{off:#x}"
        sec = secs[shndx]
        if sec.exec:
            f = self.func_at(shndx, off)
            if f is not None:
                start = self.funcs[f].start if f in self.funcs else off
                if ctx is not None and any(x in ctx.selves for x in self.group.get(f, (f,))):
                    return f"{self.fname(f)}+{off - start:#x}"
                return self.fname(f) if off == start else f"{self.fname(f)}+{off - start:#x}"
            sn = self.snippet_at(shndx, off)
            if sn is not None:
                if ctx is not None and sn is ctx.snippet:
                    return f"[{sec.name}]+{off - sn.start:#x}"
                if ctx is not None and ctx.func is not None:
                    if sn.owner is None:
                        sn.owner, sn.how = ctx.func, "ref"
                    if sn.owner == ctx.func:
                        k = ctx.ref(sn)
                        return f"[{sec.name}:{k}]" + (f"+{off - sn.start:#x}"
                                                     if off != sn.start else "")
                return f"[{sec.name}]"
            return f"{sec.name}:{'end' if off >= sec.size else 'padding'}"
        if sec.flags & SHF_MERGE and sec.flags & SHF_STRINGS and sec.type != SHT_NOBITS:
            data = self.elf.section_data(sec)
            if 0 <= off < len(data):
                end = data.find(b"\0", off)
                end = len(data) if end < 0 else end
                return _quote(self.rn_string(data[off:end]))
            return f"{sec.name}:out-of-range"
        if sec.flags & SHF_MERGE and sec.entsize and sec.type != SHT_NOBITS:
            data = self.elf.section_data(sec)
            return f"const:{data[off:off + sec.entsize].hex()}"
        s = self.sym_at(shndx, off)
        if s is not None:
            nm = self.sym_name(s, depth)
            return nm if off == s.value else f"{nm}+{off - s.value:#x}"
        if sec.writable or sec.type == SHT_NOBITS or depth > 0:
            return f"{sec.name}:anon"
        return self._anon(sec, off, ctx)

    def _anon(self, sec: Section, off: int, ctx) -> str:
        """Read-only data with no symbol: its content up to the next place
        anything refers to (a symbol, a relocation's target, the end)."""
        bounds = self._refs.get(sec.index, [])
        i = _bisect.bisect_right(bounds, off)
        end = min(bounds[i] if i < len(bounds) else sec.size, sec.size, off + 256)
        vals = self.sym_values.get(sec.index, [])
        j = _bisect.bisect_right(vals, off)
        if j < len(vals):
            end = min(end, vals[j])
        data = bytearray(self.elf.section_data(sec)[off:end])
        targets = []
        for r in self.elf.relocs.get(sec.index, []):
            if off <= r.offset < end:
                data[r.offset - off:r.offset - off + r.width] = bytes(r.width)
                t = self._target(r, None)
                if t[0] == "sec":
                    place = t[2] - (r.offset - off) if r.pcrel else t[2]   # table-relative
                    targets.append(self.render_place(t[1], place, ctx, 1))
                else:
                    targets.append(self._render_target(t, ctx))
        txt = f"{sec.name}:anon{len(data)}:{hashlib.sha256(bytes(data)).hexdigest()[:12]}"
        if targets:
            txt += "[" + ",".join(targets) + "]"
        return txt

    def _render_target(self, t, ctx) -> str:
        kind, where, off = t
        if kind == "sec":
            return self.render_place(where, off, ctx)
        if kind == "abs":
            return f"ABS{off:+#x}"
        name = self.rn(where)
        return name if off == 0 else f"{name}{off:+#x}"

    def render_insn(self, ins: _Insn, shndx: int, ctx) -> str:
        text = ins.text
        if ins.relocs:
            text = self.isa.comment.sub("", text)
            m = self.isa.branch.match(text)
            targets = [(r, self._render_target(self._target(r, ins.end), ctx))
                       for r in ins.relocs]
            if m and len(ins.relocs) == 1:
                r, t = targets[0]
                return f"{m.group(1)} <{t}> ; {r.name}"
            return text + " ; " + ", ".join(f"{r.name} <{t}>" for r, t in targets)
        m = self.isa.branch.match(text)
        if m:
            return f"{m.group(1)} <{self.render_place(shndx, int(m.group(2), 16), ctx)}>"
        if "(%rip)" in text:
            c = _COMMENT.search(text)
            if c and c.group(1):
                place = self.render_place(shndx, int(c.group(1), 16), ctx)
                text = _RIP.sub(lambda _: f"<{place}>(%rip)", _COMMENT.sub("", text), count=1)
        elif "#" in text and self.isa.comment is _COMMENT:     # x86: "# addr <sym>"
            text = _COMMENT.sub("", text)
        return text

    def _is_flow(self, line: str) -> bool:
        for tok in line.split():
            if tok in self.isa.skip:
                continue
            return tok.startswith(self.isa.flow)
        return False

    def _line_args(self, lines: list, insns: list) -> None:
        """Replace the constant __LINE__ argument of LINE_CALLEES calls."""
        isa = self.isa
        for i, ln in enumerate(lines):
            if not ln.startswith(isa.call):
                continue
            m = re.match(isa.call + r"\S*\s+<([^>+]+)>", ln)
            if not m or m.group(1) not in LINE_CALLEES:
                continue
            argn = LINE_CALLEES[m.group(1)]
            if argn > len(isa.arg_regs):
                continue
            names = isa.arg_regs[argn - 1]
            for j in range(i - 1, max(-1, i - 1 - _LINE_LOOKBACK), -1):
                prev = lines[j]
                if self._is_flow(prev):
                    break
                ops = prev.split(" ", 1)
                args = ops[1] if len(ops) > 1 else ""
                dest = (args.rsplit(",", 1)[-1] if isa.dest_last
                        else args.split(",", 1)[0]).split(" ;")[0]
                if dest not in names:
                    continue
                mm = isa.const.match(prev)
                if mm:
                    lines[j] = (f"{mm.group(1)} $__LINE__,{mm.group(2)}" if isa.dest_last
                                else f"{mm.group(1)} {mm.group(2)}, #__LINE__")
                break

    def code_of(self, func: _Func, ctx) -> list:
        insns = self.insns.get(func.sec.index, [])
        starts = self.starts.get(func.sec.index, [])
        lo = _bisect.bisect_left(starts, func.start)
        hi = _bisect.bisect_left(starts, func.start + func.size)
        chosen = insns[lo:hi]
        lines = [self.render_insn(ins, func.sec.index, ctx) for ins in chosen]
        self._line_args(lines, chosen)
        return lines

    def snippet_code(self, sn: _Snippet, ctx) -> list:
        sub = _Ctx(ctx.func if ctx else None, ctx.selves if ctx else set())
        sub.snippet = sn
        if ctx is not None:
            sub.refs, sub.order = ctx.refs, ctx.order       # shared: nested references
        lines = [self.render_insn(ins, sn.sec.index, sub) for ins in sn.insns]
        self._line_args(lines, sn.insns)
        return lines

    def functions(self) -> dict:
        out = {}
        names = sorted(self.funcs)
        colds = {}
        for n in names:
            m = _COLD.match(n)
            if m and m.group(1) in self.funcs:
                colds.setdefault(m.group(1), []).append(n)
        parts_of = set(x for v in colds.values() for x in v)
        for n in names:
            if n in parts_of:
                continue
            parts = [n] + colds.get(n, [])
            ctx = _Ctx(n, set(parts))
            lines, size = [], 0
            for p in parts:
                f = self.funcs[p]
                lines.append(f"{f.sec.name}:" if p == n
                             else f"-- {self.rn(p)} ({f.sec.name}):")
                lines += self.code_of(f, ctx)
                size += f.size
            # snippets referenced from the code, in order of reference
            done = set()
            while True:
                pending = [sn for sn in ctx.order if id(sn) not in done]
                if not pending:
                    break
                for sn in pending:
                    done.add(id(sn))
                    lines.append(f"-- [{sn.sec.name}:{ctx.refs[id(sn)]}]:")
                    lines += self.snippet_code(sn, ctx)
                    size += sn.end - sn.start
            # snippets attached by a table or by their jumps
            mine = sorted((sn for lst in self.snippets.values() for sn in lst
                           if sn.owner in parts and sn.how in ("table", "jump")
                           and id(sn) not in ctx.refs),
                          key=lambda sn: (sn.how, self.fname(sn.owner), sn.site, sn.sec.name,
                                          sn.start))
            for sn in mine:
                lines.append(f"-- [{sn.sec.name}] {'for' if sn.how == 'table' else 'into'} "
                             f"{self.fname(sn.owner)}+{sn.site:#x}:")
                lines += self.snippet_code(sn, _Ctx(n, set(parts)))
                size += sn.end - sn.start
            text = "\n".join(lines)
            out[self.rn(n)] = FuncCode(size, _digest(size, text), text,
                                       self.funcs[n].sec.name,
                                       tuple(sorted(self.rn(x) for x in self.group.get(n, ())
                                                    if x != n)))
        # what nothing claimed: one pseudo-function per section
        for shndx, lst in sorted(self.snippets.items()):
            rest = [sn for sn in lst if sn.owner is None]
            if not rest:
                continue
            sec = self.elf.sections[shndx]
            lines, size = [f"{sec.name}:"], 0
            for sn in rest:
                lines.append("--")
                lines += self.snippet_code(sn, None)
                size += sn.end - sn.start
            text = "\n".join(lines)
            out[f"[{sec.name}]"] = FuncCode(size, _digest(size, text), text, sec.name)
        return out


class _Ctx:
    """Rendering context: the function being rendered (and its cold parts)."""

    def __init__(self, func, selves):
        self.func = func
        self.selves = selves
        self.snippet = None
        self.refs = {}          # id(snippet) -> ordinal
        self.order = []

    def ref(self, sn) -> int:
        k = self.refs.get(id(sn))
        if k is None:
            k = self.refs[id(sn)] = len(self.refs) + 1
            self.order.append(sn)
        return k


def _rank(s: Symbol) -> tuple:
    """Which of several symbols at a place names it: a sized object or
    function first, a global before a local, a real name before a label."""
    return (s.size == 0, s.type not in (STT_FUNC, STT_OBJECT), s.name.startswith(".L"),
            s.bind == STB_LOCAL, s.name)


def _digest(size: int, text: str) -> str:
    return hashlib.sha256(f"{size}\n{text}".encode()).hexdigest()[:16]


def function_code(obj_path, rename: Optional[dict] = None) -> dict:
    """{function name: FuncCode} of an x86_64, i386 or aarch64 object, normalised
    (see the module header).  `rename` maps names of this object to the
    names to compare them under (compare() passes {new: old} for the
    object after a renaming patch)."""
    return _Object(obj_path, rename).functions()
