"""Object-code equivalence: did a patch change the compiled code, and where?

Most patches of the series only change types (struct slab overlays struct
page, slab_page() is a cast), so they must leave the code of every function
exactly as it was.  This module compares two builds of an object function by
function, after normalising away what moves when unrelated code moves.

    from verify import objdiff
    objdiff.snapshot(o_dir, ["mm/slub.o"], keep)       # before a patch's build
    d = objdiff.compare(keep / "mm/slub.o", o_dir / "mm/slub.o",
                        renames={"print_page_info": "print_slab_info"},
                        label="mm/slub.o")
    d.equal, d.changed, d.added, d.removed, d.text(), d.to_dict()
    unexpected, missing = objdiff.judge(entry.code, [d], patch="43/58 ...")
    objdiff.bloat(old_vmlinux, new_vmlinux, kernel_src)   # scripts/bloat-o-meter

    # one patch: every object, judged against its manifest entry
    entry = objdiff.entry_for_subject(series, pr.subject)          # or None
    r = objdiff.check_patch(keep, o_dir, objects, entry, objdiff.renames_of(entry),
                            patch=f"{pr.index}/{n} {pr.subject}")
    r.ok, r.unexpected, r.missing, r.text(), r.to_dict()

    python3 -m verify.objdiff BEFORE.o AFTER.o [--rename old=new] [--diff] [--json]
    python3 -m verify.objdiff --dump - OBJ.o         # the normalised code

What is compared
----------------
`function_code(obj)` reads the ELF file itself (sections, symbols, REL and
RELA relocations; x86_64 and i386, little endian; standard library only) and
disassembles it with one `objdump -d -z -w --no-show-raw-insn` call.  Every
executable section counts (.text, .text.unlikely, .init.text, .exit.text,
.ref.text, .noinstr.text, ...).  A function is an STT_FUNC symbol with its
ELF size (the padding after it is not its code); its text starts with its
section's name, then one line per instruction, without addresses.

Normalisations (each makes code that is the same compare equal when its
position, or the position of something it refers to, moved):

* Addresses are dropped.  A direct call/jmp/jcc without a relocation (the
  assembler resolved it: a static function or a label in the same section)
  is written as the target symbol, plus the offset from that symbol: a jump
  inside the function is `<fn+0x3c>`, a call of another function `<other>`.
  RIP-relative operands without a relocation likewise (`<sym+off>(%rip)`).
* Relocations are written as their type and target (`; PC32 <target>`), and
  a relocated field is shown as 0: the addend is in the relocation (RELA),
  and for REL objects (i386) the implicit addend is read and the field
  zeroed in a private copy before disassembly.  PC-relative targets are
  corrected by the distance from the field to the end of the instruction,
  so `call foo` reads `<foo>` whatever the field's position.
* A target given as section+offset (a local symbol: `.text+0x1c0`,
  `.bss+0x40`, `.rodata+0x18`, `.data+0x8`) is the symbol that covers that
  offset: a function (`fn+0x12`), a static object (`counter.#`).
* Strings: a target in a mergeable string section (`.rodata.str1.1`,
  `.rodata.str1.8`) is the string's content (`"SLUB: %s\\n"`), so a string
  table that shifts does not count; a mergeable constant (`.rodata.cst16`)
  is its bytes.
* GCC's numbered local objects (`__func__.12`, `__warned.3`, `CSWTCH.45`,
  `descriptor.7`, `__key.2`, `__UNIQUE_ID_x123`): the number is a counter
  over the whole file, so it moves when another function gains one; it is
  written `#`, and a read-only one is followed by its content
  (`__func__.#="kfree"`), so two of them stay distinguishable.
* Code no function symbol covers (`.altinstr_replacement`, `.altinstr_aux`,
  `.fixup`): cut into snippets at every offset a relocation refers to, each
  attached to the function that refers to it, that a table pairs it with
  (`.altinstructions`: site, then replacement), or that it jumps back into;
  what is left is a pseudo-function `[section]`.  Padding (nop, int3) is
  not code.
* `X.cold` (GCC's split-off cold part, in `.text.unlikely`) is part of X:
  appended to X's text, its size added.
* Anonymous read-only data (no symbol: a jump table, an unnamed constant)
  is its content, up to the next offset anything refers to: bytes, and the
  targets of the relocations in it (a jump table's labels, relative to the
  function); anonymous writable data (`.data`, `.bss`, KASAN's global
  descriptors) is just `section:anon`, it is data, not code.
* `__LINE__`: the line argument of `__might_sleep()`, `___might_sleep()`,
  `__cant_sleep()`, `__cant_migrate()`, `__might_fault()`,
  `lockdep_rcu_suspicious()` and `warn_slowpath_fmt()` (the second
  argument: %esi on x86_64, %edx with i386's regparm) is written
  `$__LINE__` when it is a constant loaded within the few instructions
  before the call: any patch that adds or removes a line above it moves it
  (DEBUG_ATOMIC_SLEEP, PROVE_LOCKING).  The file name argument is a string
  and stays.
* Renames (`compare(renames={old: new})`): in the object after the patch a
  new name (a function, its `.cold`/`.constprop.N`/`.isra.N`/`.part.N`
  clones, a call target) reads as the old one, and so does a string equal
  to a new name (its `__func__`); the function is compared under its old
  name.  Renames nobody declared are found: a function gone and one new
  whose code is the same but for the name (`slab_order()` ->
  `calc_slab_order()`, made by a rule of its own), or a clone GCC no longer
  needs (`setup_object.isra.0` -> `setup_object` once the source drops the
  parameter the clone dropped); `ObjDiff.found_renames`, compared again
  with them.
* Identical code folding: GCC makes a new function whose code is an old
  one's an alias of it (`virt_to_slab` = `virt_to_head_page`, same address
  and size).  One function, named by a name both objects have; a call of
  either name is the same call (`ObjDiff.aliases` lists the new names).
* Objects whose code bytes, relocations, symbols and the data the code
  refers to are the same byte for byte are equal without disassembling
  (`ObjDiff.quick`): a header change usually moves only `__bug_table`.

Reported as changes, deliberately (the code is not the same, though the
source means the same): register allocation, block order, a static inline
helper that `-Os` inlines once a caller is gone (the note "X inlined"), a
call `page_slab()` adds (`compound_head()`, out of line at -Os), a stack
frame that is no longer realigned.  A changed function lists the calls it
gained and lost (`FuncChange.notes`); its diff excerpt masks the offsets
of jumps inside it (`<fn+?>`) so it shows the change, not every jump after
it.

Not compared, with the reason:

* Data sections and their tables (`__bug_table`, `__ex_table`,
  `.altinstructions`, `__jump_table`, `.static_call_sites`, `.orc_unwind*`,
  `.discard.*`, `__ksymtab*`, `.modinfo`), debug sections, `.comment`,
  notes (a linked image's build-id): they are not code.  x86's WARN/BUG keep
  their line in `__bug_table` (`ud2` plus a table entry), not in the code,
  so a moved WARN_ON() leaves the code equal.
* Relaxation: the assembler picks a 2-byte jump when the target is near,
  so a direct jump to another function of the same section (a tail call
  of an adjacent static function) may change size when the code between
  them changes.  Not normalised: it shows as a size change with the same
  instructions.  The kernel's `-falign-jumps=1 -falign-loops=1` keeps loop
  padding from depending on position.
* String arguments are compared by content: a string whose text changed
  is a change (a renamed function's `__func__` excepted, see above).
"""
from __future__ import annotations

import bisect as _bisect
from collections import Counter
import difflib
import fnmatch
import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from base.log import guarded, SlabconvError


OBJDUMP_ARGS = ("-d", "-z", "-w", "--no-show-raw-insn")
EXCERPT_LINES = 24

# --------------------------------------------------------------------------
# ELF (enough of it: sections, symbols, relocations; little endian)

SHT_SYMTAB, SHT_RELA, SHT_NOBITS, SHT_REL, SHT_SYMTAB_SHNDX = 2, 4, 8, 9, 18
SHF_WRITE, SHF_EXECINSTR, SHF_MERGE, SHF_STRINGS = 0x1, 0x4, 0x10, 0x20
STT_OBJECT, STT_FUNC, STT_SECTION, STT_FILE = 1, 2, 3, 4
STB_LOCAL = 0
SHN_UNDEF, SHN_LORESERVE, SHN_ABS, SHN_COMMON, SHN_XINDEX = 0, 0xff00, 0xfff1, 0xfff2, 0xffff
EM_386, EM_X86_64 = 3, 62

# type -> (name, field size, pc-relative)
_RELOCS = {
    EM_X86_64: {1: ("64", 8, False), 2: ("PC32", 4, True), 3: ("GOT32", 4, False),
                4: ("PLT32", 4, True), 9: ("GOTPCREL", 4, True), 10: ("32", 4, False),
                11: ("32S", 4, False), 12: ("16", 2, False), 13: ("PC16", 2, True),
                14: ("8", 1, False), 15: ("PC8", 1, True), 24: ("PC64", 8, True),
                41: ("GOTPCRELX", 4, True), 42: ("REX_GOTPCRELX", 4, True)},
    EM_386: {1: ("32", 4, False), 2: ("PC32", 4, True), 3: ("GOT32", 4, False),
             4: ("PLT32", 4, True), 9: ("GOTOFF", 4, False), 10: ("GOTPC", 4, True),
             20: ("16", 2, False), 21: ("PC16", 2, True), 22: ("8", 1, False),
             23: ("PC8", 1, True), 43: ("GOT32X", 4, False)},
}


@dataclass
class Section:
    index: int
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int

    @property
    def exec(self) -> bool:
        return bool(self.flags & SHF_EXECINSTR)

    @property
    def writable(self) -> bool:
        return bool(self.flags & SHF_WRITE)


@dataclass
class Symbol:
    index: int
    name: str
    value: int
    size: int
    type: int
    bind: int
    shndx: int

    @property
    def defined(self) -> bool:
        return self.shndx not in (SHN_UNDEF, SHN_ABS, SHN_COMMON) and self.shndx < SHN_LORESERVE


@dataclass
class Reloc:
    offset: int             # in the section it applies to
    type: int
    sym: int                # symbol index
    addend: int
    name: str               # type name (PC32, ...)
    width: int              # field size in bytes
    pcrel: bool


class Elf:
    """An ELF relocatable object, read with struct."""

    def __init__(self, path):
        self.path = Path(path)
        self.data = self.path.read_bytes()
        d = self.data
        if d[:4] != b"\x7fELF":
            raise SlabconvError(f"{path}: not an ELF file", exit_code=2)
        if d[5] != 1:
            raise SlabconvError(f"{path}: big-endian ELF is not supported", exit_code=2)
        self.is64 = d[4] == 2
        if self.is64:
            (self.type, self.machine, _, _, _, shoff, _, _, _, _, shentsize, shnum,
             shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", d, 16)
        else:
            (self.type, self.machine, _, _, _, shoff, _, _, _, _, shentsize, shnum,
             shstrndx) = struct.unpack_from("<HHIIIIIHHHHHH", d, 16)
        if self.machine not in _RELOCS:
            raise SlabconvError(f"{path}: machine {self.machine} is not x86_64 or i386",
                                exit_code=2)
        fmt = "<IIQQQQIIQQ" if self.is64 else "<IIIIIIIIII"
        raw = []
        if shoff:
            first = struct.unpack_from(fmt, d, shoff)
            if shnum == 0:
                shnum = first[5]
            if shstrndx == SHN_XINDEX:
                shstrndx = first[6]
            for i in range(shnum):
                raw.append(struct.unpack_from(fmt, d, shoff + i * shentsize))
        names = raw[shstrndx] if raw else None
        self.sections = []
        for i, r in enumerate(raw):
            nm, typ, flags, _addr, off, size, link, info, _align, entsize = r
            name = self._cstr(names[4] + nm) if names else ""
            self.sections.append(Section(i, name, typ, flags, off, size, link, info, entsize))
        self.symbols = self._read_symbols()
        self.relocs = self._read_relocs()        # section index -> [Reloc] by offset

    def _cstr(self, off: int) -> str:
        end = self.data.index(b"\0", off)
        return self.data[off:end].decode("utf-8", "surrogateescape")

    def section_data(self, sec: Section) -> bytes:
        if sec.type == SHT_NOBITS:
            return b""
        return self.data[sec.offset:sec.offset + sec.size]

    def _read_symbols(self) -> list:
        symtab = next((s for s in self.sections if s.type == SHT_SYMTAB), None)
        if symtab is None:
            return []
        xindex = next((s for s in self.sections
                       if s.type == SHT_SYMTAB_SHNDX and s.link == symtab.index), None)
        strtab = self.sections[symtab.link]
        fmt, size = ("<IBBHQQ", 24) if self.is64 else ("<IIIBBH", 16)
        out = []
        for i in range(symtab.size // size):
            if self.is64:
                nm, info, _other, shndx, value, sz = struct.unpack_from(
                    fmt, self.data, symtab.offset + i * size)
            else:
                nm, value, sz, info, _other, shndx = struct.unpack_from(
                    fmt, self.data, symtab.offset + i * size)
            if shndx == SHN_XINDEX and xindex is not None:
                shndx = struct.unpack_from("<I", self.data, xindex.offset + 4 * i)[0]
            name = self._cstr(strtab.offset + nm) if nm else ""
            typ = info & 0xf
            if typ == STT_SECTION and not name and shndx < len(self.sections):
                name = self.sections[shndx].name
            out.append(Symbol(i, name, value, sz, typ, info >> 4, shndx))
        return out

    def _read_relocs(self) -> dict:
        table = _RELOCS[self.machine]
        out = {}
        for s in self.sections:
            if s.type not in (SHT_REL, SHT_RELA) or s.info >= len(self.sections):
                continue
            target = self.sections[s.info]
            rela = s.type == SHT_RELA
            if self.is64:
                fmt, size = ("<QQq", 24) if rela else ("<QQ", 16)
            else:
                fmt, size = ("<IIi", 12) if rela else ("<II", 8)
            tdata_off = target.offset
            lst = out.setdefault(target.index, [])
            for i in range(s.size // size):
                vals = struct.unpack_from(fmt, self.data, s.offset + i * size)
                off, info = vals[0], vals[1]
                if self.is64:
                    sym, typ = info >> 32, info & 0xffffffff
                else:
                    sym, typ = info >> 8, info & 0xff
                name, width, pcrel = table.get(typ, (f"R{typ}", 4, False))
                if rela:
                    addend = vals[2]
                elif target.type == SHT_NOBITS or off + width > target.size:
                    addend = 0
                else:
                    raw = self.data[tdata_off + off:tdata_off + off + width]
                    addend = int.from_bytes(raw, "little", signed=True)
                lst.append(Reloc(off, typ, sym, addend, name, width, pcrel))
        for lst in out.values():
            lst.sort(key=lambda r: r.offset)
        return out

    def zeroed_copy(self, dest: Path) -> bool:
        """Write a copy whose relocated fields in code are 0 (objdump then
        shows the same placeholder for REL as for RELA).  False when every
        such field is 0 already (nothing written)."""
        buf = None
        for idx, lst in self.relocs.items():
            sec = self.sections[idx]
            if not sec.exec or sec.type == SHT_NOBITS:
                continue
            for r in lst:
                a = sec.offset + r.offset
                if r.offset + r.width <= sec.size and any(self.data[a:a + r.width]):
                    if buf is None:
                        buf = bytearray(self.data)
                    buf[a:a + r.width] = bytes(r.width)
        if buf is None:
            return False
        Path(dest).write_bytes(bytes(buf))
        return True


# --------------------------------------------------------------------------
# results

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
class FuncChange:
    function: str
    old_size: int
    new_size: int
    excerpt: str = ""
    new_name: str = ""               # the name after the patch, if renamed
    notes: list = field(default_factory=list)   # calls gained or lost, inlining

    @property
    def delta(self) -> int:
        return self.new_size - self.old_size

    def to_dict(self) -> dict:
        d = {"function": self.function, "old_size": self.old_size,
             "new_size": self.new_size, "delta": self.delta, "excerpt": self.excerpt}
        if self.new_name:
            d["new_name"] = self.new_name
        if self.notes:
            d["notes"] = list(self.notes)
        return d


@dataclass
class FuncSize:
    function: str
    size: int

    def to_dict(self) -> dict:
        return {"function": self.function, "size": self.size}


@dataclass
class ObjDiff:
    object: str
    changed: list = field(default_factory=list)       # FuncChange
    added: list = field(default_factory=list)         # FuncSize
    removed: list = field(default_factory=list)       # FuncSize
    compared: int = 0                                 # functions in both
    renames: dict = field(default_factory=dict)       # old -> new, as given
    missing_before: bool = False                      # no object before (new file)
    missing_after: bool = False
    present: frozenset = frozenset()                  # function names in either object
    quick: bool = False                               # equal without disassembling
    aliases: list = field(default_factory=list)       # "new = old": a new name of old code
    found_renames: dict = field(default_factory=dict)  # old -> new, same code (not declared)

    @property
    def equal(self) -> bool:
        return not (self.changed or self.added or self.removed)

    @property
    def delta(self) -> int:
        return (sum(c.delta for c in self.changed) + sum(a.size for a in self.added)
                - sum(r.size for r in self.removed))

    def to_dict(self) -> dict:
        return {"object": self.object, "equal": self.equal, "compared": self.compared,
                "delta": self.delta, "missing_before": self.missing_before,
                "missing_after": self.missing_after, "renames": dict(self.renames),
                "quick": self.quick, "aliases": list(self.aliases),
                "found_renames": dict(self.found_renames),
                "changed": [c.to_dict() for c in self.changed],
                "added": [a.to_dict() for a in self.added],
                "removed": [r.to_dict() for r in self.removed],
                "present": sorted(self.present) if not self.equal else []}

    @classmethod
    def from_dict(cls, d: dict) -> "ObjDiff":
        """The stored form back (to_dict()): enough to judge it again."""
        return cls(d["object"],
                   changed=[FuncChange(c["function"], c["old_size"], c["new_size"],
                                       c.get("excerpt", ""), c.get("new_name", ""),
                                       list(c.get("notes", []))) for c in d.get("changed", [])],
                   added=[FuncSize(a["function"], a["size"]) for a in d.get("added", [])],
                   removed=[FuncSize(r["function"], r["size"]) for r in d.get("removed", [])],
                   compared=d.get("compared", 0), renames=dict(d.get("renames", {})),
                   present=frozenset(d.get("present", ())))

    def lines(self) -> list:
        out = []
        for c in self.changed:
            nm = c.function + (f" (now {c.new_name})" if c.new_name else "")
            out.append(f"{self.object}: {nm}: {c.delta:+d} bytes ({c.old_size} -> {c.new_size})")
        for a in self.added:
            out.append(f"{self.object}: {a.function}: added ({a.size} bytes)")
        for r in self.removed:
            out.append(f"{self.object}: {r.function}: removed ({r.size} bytes)")
        return out

    def text(self, excerpts: bool = False) -> str:
        found = "".join(f"; {a} renamed {b}, same code" for a, b in self.found_renames.items())
        if self.equal:
            return f"{self.object}: code unchanged ({self.compared} functions){found}"
        lines = self.lines()
        out = []
        for i, ln in enumerate(lines):
            out.append(ln)
            if excerpts and i < len(self.changed) and self.changed[i].notes:
                out.append("    (" + "; ".join(self.changed[i].notes) + ")")
            if excerpts and i < len(self.changed) and self.changed[i].excerpt:
                out.extend("    " + x for x in self.changed[i].excerpt.splitlines())
        if found:
            out.append(f"{self.object}: {found[2:]}")
        return "\n".join(out)


# --------------------------------------------------------------------------
# disassembly

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


def _reg_names(r: str) -> set:
    low = {"rdi": {"rdi", "edi", "di", "dil"}, "rsi": {"rsi", "esi", "si", "sil"},
           "rdx": {"rdx", "edx", "dx", "dl"}, "rcx": {"rcx", "ecx", "cx", "cl"},
           "r8": {"r8", "r8d", "r8w", "r8b"}, "r9": {"r9", "r9d", "r9w", "r9b"},
           "eax": {"eax", "ax", "al"}, "edx": {"edx", "dx", "dl"}, "ecx": {"ecx", "cx", "cl"}}
    return {"%" + x for x in low[r]}


def objdump_path() -> str:
    exe = shutil.which("objdump")
    if exe is None:
        raise SlabconvError("objdump not found (Debian package binutils)", exit_code=3)
    return exe


def _disassemble(path: Path) -> list:
    """[(section name, [(addr, text)])] in objdump's order."""
    cp = subprocess.run([objdump_path(), *OBJDUMP_ARGS, str(path)], stdout=subprocess.PIPE,
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
        secs = self.elf.sections
        with tempfile.TemporaryDirectory(prefix="objdiff-") as td:
            tmp = Path(td) / self.path.name
            dis = _disassemble(tmp if self.elf.zeroed_copy(tmp) else self.path)
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
                lst.append(_Insn(addr, end, " ".join(text.split()), rl[lo:hi]))
            self.insns[sec.index] = lst
            self.starts[sec.index] = [x.addr for x in lst]
        # symbols per section, for "which symbol covers this offset"
        self.by_sec = {}
        for s in self.elf.symbols:
            if s.defined and s.type not in (STT_SECTION, STT_FILE) and s.name:
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
                m = _BRANCH.match(ins.text)
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
                if _PADDING.match(ins.text) and not ins.relocs:
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
                        m = _BRANCH.match(ins.text)
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
            text = _COMMENT.sub("", text)
            m = _BRANCH.match(text)
            targets = [(r, self._render_target(self._target(r, ins.end), ctx))
                       for r in ins.relocs]
            if m and len(ins.relocs) == 1:
                r, t = targets[0]
                return f"{m.group(1)} <{t}> ; {r.name}"
            return text + " ; " + ", ".join(f"{r.name} <{t}>" for r, t in targets)
        m = _BRANCH.match(text)
        if m:
            return f"{m.group(1)} <{self.render_place(shndx, int(m.group(2), 16), ctx)}>"
        if "(%rip)" in text:
            c = _COMMENT.search(text)
            if c and c.group(1):
                place = self.render_place(shndx, int(c.group(1), 16), ctx)
                text = _RIP.sub(lambda _: f"<{place}>(%rip)", _COMMENT.sub("", text), count=1)
        elif "#" in text:
            text = _COMMENT.sub("", text)
        return text

    @staticmethod
    def _is_flow(line: str) -> bool:
        for tok in line.split():
            if tok in ("bnd", "notrack", "cs", "ds", "data16", "addr32", "lock", "rep",
                       "repz", "repnz"):
                continue
            return tok.startswith(("j", "call", "ret", "loop", "ud2", "int3"))
        return False

    def _line_args(self, lines: list, insns: list) -> None:
        """Replace the constant __LINE__ argument of LINE_CALLEES calls."""
        regs = _ARG_REGS[self.em]
        for i, ln in enumerate(lines):
            if not ln.startswith("call"):
                continue
            m = re.match(r"call\S*\s+<([^>+]+)>", ln)
            if not m or m.group(1) not in LINE_CALLEES:
                continue
            argn = LINE_CALLEES[m.group(1)]
            if argn > len(regs):
                continue
            names = _reg_names(regs[argn - 1])
            for j in range(i - 1, max(-1, i - 1 - _LINE_LOOKBACK), -1):
                prev = lines[j]
                if self._is_flow(prev):
                    break
                ops = prev.split(" ", 1)
                dest = ops[1].rsplit(",", 1)[-1] if len(ops) > 1 else ""
                if dest.split(" ;")[0] not in names:
                    continue
                mm = re.match(r"^(mov[lq]?) \$0x[0-9a-f]+,(%\w+)$", prev)
                if mm:
                    lines[j] = f"{mm.group(1)} $__LINE__,{mm.group(2)}"
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
    """{function name: FuncCode} of an x86_64 or i386 object, normalised
    (see the module header).  `rename` maps names of this object to the
    names to compare them under (compare() passes {new: old} for the
    object after a renaming patch)."""
    return _Object(obj_path, rename).functions()


# --------------------------------------------------------------------------
# comparing

def _excerpt(a: str, b: str, name: str = "", limit: int = EXCERPT_LINES) -> str:
    """A unified diff of two normalised texts.  The offsets of jumps inside
    the function (`<fn+0x1c8>`) are masked (`<fn+?>`) so that the diff shows
    what changed, not every jump past it; when only offsets differ (the same
    instructions encoded at other sizes) the diff is of the texts as they
    are."""
    if name:
        base = re.escape(clone_base(name))
        mask = re.compile(r"<((?:\{alias:[^{}]*\}|" + base + r"[.\w]*))\+0x[0-9a-f]+>")
        ma, mb = mask.sub(r"<\1+?>", a), mask.sub(r"<\1+?>", b)
        if ma != mb:
            a, b = ma, mb
    d = list(difflib.unified_diff(a.splitlines(), b.splitlines(), "before", "after", n=2,
                                  lineterm=""))[2:]
    if len(d) > limit:
        d = d[:limit] + [f"... ({len(d) - limit} more diff lines)"]
    return "\n".join(d)


def _elf_functions(elf: Elf) -> list:
    """The function names function_code() would give, from the symbols alone
    (X.cold folded into X; the pseudo-functions of unclaimed code left out)."""
    by_range = {}
    for s in elf.symbols:
        if (s.type == STT_FUNC and s.defined and s.size > 0 and s.name
                and elf.sections[s.shndx].exec):
            by_range.setdefault((s.shndx, s.value, s.size), set()).add(s.name)
    names = {n for g in by_range.values() for n in g}
    firsts = {min(g) for g in by_range.values()}        # aliases count once
    return sorted(n for n in firsts
                  if not (_COLD.match(n) and _COLD.match(n).group(1) in names))


def _quick_equal(a: Elf, b: Elf) -> bool:
    """True when everything the normalised code is made of is the same in
    both objects, so the code is equal without disassembling: the bytes of
    every code section, every relocation (by symbol name or section name),
    the symbol tables, and the bytes of every section a relocation in code
    refers to.  (A header change typically moves only __bug_table's line
    numbers, which nothing here reads.)  False means "look closer"."""
    if a.machine != b.machine or len(a.sections) != len(b.sections):
        return False

    def syms(e: Elf):
        return sorted((s.name, s.type, s.bind, e.sections[s.shndx].name if s.defined else "",
                       s.value, s.size) for s in e.symbols if s.type != STT_FILE)

    def rels(e: Elf, idx: int):
        out = []
        for r in e.relocs.get(idx, []):
            s = e.symbols[r.sym] if r.sym < len(e.symbols) else None
            out.append((r.offset, r.type, r.addend, s.name if s else "",
                        e.sections[s.shndx].name if s is not None and s.defined else ""))
        return out

    referenced = set()
    for sa, sb in zip(a.sections, b.sections):
        if (sa.name, sa.type, sa.flags, sa.size, sa.entsize) != (
                sb.name, sb.type, sb.flags, sb.size, sb.entsize):
            return False
        if rels(a, sa.index) != rels(b, sb.index):
            return False
        if sa.exec:
            if a.section_data(sa) != b.section_data(sb):
                return False
            for r in a.relocs.get(sa.index, []):
                s = a.symbols[r.sym] if r.sym < len(a.symbols) else None
                if s is not None and s.defined:
                    referenced.add(s.shndx)
    if syms(a) != syms(b):
        return False
    return all(a.section_data(a.sections[i]) == b.section_data(b.sections[i])
               for i in referenced)


_ALIAS = re.compile(r"\{alias:([^{}]+)\}")


def _fold_aliases(fa: dict, fb: dict):
    """Names that share one function's code (an alias made by identical
    code folding) are that one function: each group is named by one of its
    names, preferring a name both objects have (the old function a new one
    was folded into), and the others are not functions of their own.
    Returns the two dicts and the aliases after the patch that are new."""
    both = set(fa) & set(fb)

    def rep(group) -> str:
        inb = sorted(n for n in group if n in both)
        return inb[0] if inb else sorted(group)[0]

    def fold(funcs: dict) -> dict:
        out = {}
        for name, fc in funcs.items():
            if fc.aliases and rep((name,) + fc.aliases) != name:
                continue
            text = _ALIAS.sub(lambda m: rep(tuple(m.group(1).split("|"))), fc.text)
            if text != fc.text or fc.aliases:
                fc = FuncCode(fc.size, _digest(fc.size, text), text, fc.section, fc.aliases)
            out[name] = fc
        return out

    new_aliases = sorted(f"{a} = {n}" for n, fc in fb.items() if n in fb
                         for a in fc.aliases if a not in fa
                         and rep((n,) + fc.aliases) == n)
    return fold(fa), fold(fb), new_aliases


def _same_code_renames(fa: dict, fb: dict) -> dict:
    """{old: new} for functions only in fa and only in fb whose code is the
    same once the new name (in its own jumps, its cold part, its __func__)
    reads as the old one; each name in one pair at most.  Also a function
    whose GCC clone changed (setup_object.isra.0 -> setup_object) with the
    same code."""
    gone = {n: f for n, f in fa.items() if n not in fb and not n.startswith("[")}
    new = {n: f for n, f in fb.items() if n not in fa and not n.startswith("[")}
    out, used = {}, set()
    for b in sorted(new):
        y = new[b]
        base_b = clone_base(b)
        for a in sorted(gone):
            x = gone[a]
            if a in used or x.size != y.size:
                continue
            base_a = clone_base(a)
            if base_a == base_b:
                # the same function, cloned otherwise (foo.isra.0 -> foo: the
                # parameter GCC's clone dropped is gone from the source)
                old, new_, strings = a, b, False
            elif b[len(base_b):] == a[len(base_a):]:      # the same clone suffix
                old, new_, strings = base_a, base_b, True
            else:
                continue
            q = "" if strings else '"'
            pat = re.compile(r"(?<![\w.%s])%s(?![\w%s])" % (q, re.escape(new_), q))
            if pat.sub(old, y.text) == x.text:
                out[old] = new_
                used.add(a)
                break
    return out


def _renamed(name: str, renames: dict) -> str:
    """The name after the patch of a function compared under `name`, or ""."""
    base, dot, rest = name.partition(".")
    if base in renames:
        return renames[base] + dot + rest
    return ""


def compare(before_obj, after_obj, renames: Optional[dict] = None, *,
            label: Optional[str] = None, quick: bool = True,
            detect_renames: bool = True) -> ObjDiff:
    """Compare the functions of two builds of an object.  `renames` {old:
    new}: a function the patch renamed is compared under its old name, and
    its new name in calls and its `__func__` read as the old one.  A missing
    file is an object with no functions (a new or a deleted object).
    quick: objects whose code, relocations, symbols and referenced data are
    the same byte for byte are equal without disassembling them (ObjDiff.
    quick; with renames only identical files).
    detect_renames: a function that disappeared and one that appeared with
    the same code but for its own name (a rename the caller did not
    declare, such as slab_order() -> calc_slab_order()) are a rename:
    ObjDiff.found_renames, and the comparison is made again with it."""
    renames = dict(renames or {})
    inv = {new: old for old, new in renames.items()}
    a_path, b_path = Path(before_obj), Path(after_obj)
    d = ObjDiff(label or str(after_obj), renames=dict(renames),
                missing_before=not a_path.is_file(), missing_after=not b_path.is_file())
    if quick and a_path.is_file() and b_path.is_file():
        ea, eb = Elf(a_path), Elf(b_path)
        if ea.data == eb.data or (not renames and _quick_equal(ea, eb)):
            names = _elf_functions(ea)
            d.compared, d.present, d.quick = len(names), frozenset(names), True
            return d
    raw_a = fa = function_code(a_path) if a_path.is_file() else {}
    fb = function_code(b_path, inv) if b_path.is_file() else {}
    fa, fb, d.aliases = _fold_aliases(raw_a, fb)
    found = _same_code_renames(fa, fb) if detect_renames else {}
    if found:
        # compare again with them: the callers then call the old name
        d.found_renames = found
        renames.update(found)
        inv.update({new: old for old, new in found.items()})
        fb = function_code(b_path, inv)
        fa, fb, d.aliases = _fold_aliases(raw_a, fb)
    d.present = frozenset(fa) | frozenset(fb)
    for name in sorted(set(fa) | set(fb)):
        x, y = fa.get(name), fb.get(name)
        if x is None:
            d.added.append(FuncSize(_renamed(name, renames) or name, y.size))
        elif y is None:
            d.removed.append(FuncSize(name, x.size))
        else:
            d.compared += 1
            if x.digest != y.digest:
                d.changed.append(FuncChange(name, x.size, y.size, _excerpt(x.text, y.text, name),
                                            new_name=_renamed(name, renames)))
    gone = {r.function for r in d.removed}
    new = {a.function for a in d.added} | {n for n in fb if n not in fa}
    for c in d.changed:
        c.notes = _call_notes(c.function, fa[c.function].text, fb[c.function].text, gone, new)
    return d


_CALL = re.compile(r"^(?:call|jmp)\S*\s+<([^<>+]+)>", re.M)


def _call_notes(name: str, a: str, b: str, gone: set, new: set) -> list:
    """What a changed function calls that it did not, and the reverse: a
    static helper the compiler now inlines (its out-of-line copy gone), a
    new call (page_slab()'s compound_head())."""
    own = clone_base(name)

    def calls(t):
        return Counter(x for x in _CALL.findall(t)
                       if clone_base(x) != own and not x.startswith("["))
    ca, cb = calls(a), calls(b)
    notes = []
    for x in sorted(set(ca) | set(cb)):
        if not cb[x]:
            notes.append(f"{x} inlined (no out-of-line copy left)" if x in gone
                         else f"no longer calls {x}")
        elif not ca[x]:
            notes.append(f"calls {x}, now out of line" if x in new else f"now calls {x}")
        elif ca[x] != cb[x]:
            notes.append(f"{cb[x] - ca[x]:+d} call{'s' if abs(cb[x] - ca[x]) > 1 else ''} "
                         f"of {x}")
    return notes[:6]


def stable(obj_a, obj_b) -> bool:
    """Two builds of the same source: every function compares equal."""
    return compare(obj_a, obj_b).equal


def compare_objects(before_dir, after_dir, objects: Iterable[str],
                    renames: Optional[dict] = None) -> list:
    """compare() for each object (paths relative to both directories)."""
    return [compare(Path(before_dir) / o, Path(after_dir) / o, renames, label=o)
            for o in objects]


@dataclass
class PatchCode:
    """The object-code check of one patch: every object compared, and the
    changes judged against the patch's declared expectations."""
    patch: str
    diffs: list                       # ObjDiff
    unexpected: list                  # Finding
    missing: list                     # Finding
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.unexpected

    @property
    def changed(self) -> list:
        return [d for d in self.diffs if not d.equal]

    def to_dict(self) -> dict:
        return {"patch": self.patch, "ok": self.ok, "seconds": round(self.seconds, 2),
                "objects": len(self.diffs), "objects_changed": len(self.changed),
                "diffs": [d.to_dict() for d in self.changed],
                "unexpected": [f.to_dict() for f in self.unexpected],
                "missing": [f.to_dict() for f in self.missing]}

    def text(self) -> str:
        n_fn = sum(len(d.changed) + len(d.added) + len(d.removed) for d in self.changed)
        out = [f"{self.patch + ': ' if self.patch else ''}{len(self.diffs)} objects compared, "
               f"{n_fn} functions with changed code in {len(self.changed)}; "
               f"{len(self.unexpected)} unexpected, {len(self.missing)} expected but missing"]
        for d in self.changed:
            out.extend("  " + ln for ln in d.lines())
        out.extend("  UNEXPECTED " + f.text() for f in self.unexpected)
        out.extend("  missing " + f.text() for f in self.missing)
        return "\n".join(out)


def check_patch(before_dir, after_dir, objects: Iterable[str], expectations=None,
                renames: Optional[dict] = None, patch: str = "") -> PatchCode:
    """Compare `objects` (relative paths) of a snapshot taken before a
    patch's build with O= after it, and judge the changes (see judge)."""
    import time
    t0 = time.monotonic()
    diffs = compare_objects(before_dir, after_dir, sorted(set(objects)), renames)
    unexpected, missing = judge(expectations, diffs, patch)
    return PatchCode(patch, diffs, unexpected, missing, time.monotonic() - t0)


# objects whose code is not the kernel's own functions compiled from source:
# the link's products (vmlinux.o, kallsyms), the boot code that wraps the
# compressed vmlinux, host programs and tools, module glue
NOT_COMPARED = ("scripts/", "tools/", "usr/", "arch/x86/boot/", ".tmp_", "vmlinux.o")


def list_objects(o_dir) -> list:
    """The kernel objects of a build directory O= (relative paths) whose
    functions the check compares: every .o but those of NOT_COMPARED and
    the modules' .mod.o glue."""
    o_dir = Path(o_dir)
    out = []
    for dirpath, dirnames, filenames in os.walk(o_dir):
        rel = os.path.relpath(dirpath, o_dir)
        rel = "" if rel == "." else rel + "/"
        if rel.startswith(NOT_COMPARED):
            dirnames[:] = []
            continue
        for f in filenames:
            path = rel + f
            if (f.endswith(".o") and not f.endswith(".mod.o")
                    and not path.startswith(NOT_COMPARED) and not f.startswith(".tmp_")):
                out.append(path)
    return sorted(out)


def snapshot(o_dir, objects: Optional[Iterable[str]], dest) -> list:
    """Copy the objects (paths relative to O=; None: list_objects(o_dir))
    that exist into dest, keeping their relative paths; returns the ones
    copied (a new object has no previous version)."""
    o_dir, dest = Path(o_dir), Path(dest)
    copied = []
    for rel in (list_objects(o_dir) if objects is None else objects):
        src = o_dir / rel
        if not src.is_file():
            continue
        dst = dest / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(dst.name + ".tmp-objdiff")
        shutil.copyfile(src, tmp)
        shutil.copystat(src, tmp)
        os.replace(tmp, dst)
        copied.append(rel)
    return copied


# --------------------------------------------------------------------------
# manifest expectations

@dataclass
class Finding:
    kind: str                 # "unexpected" | "missing"
    patch: str
    object: str
    function: str
    change: str = ""          # changed | added | removed (unexpected)
    old_size: int = 0
    new_size: int = 0
    why: str = ""             # the expectation's why (missing)
    reason: str = ""          # missing: "unchanged" | "absent"

    @property
    def delta(self) -> int:
        return self.new_size - self.old_size

    def to_dict(self) -> dict:
        return {"kind": self.kind, "patch": self.patch, "object": self.object,
                "function": self.function, "change": self.change, "old_size": self.old_size,
                "new_size": self.new_size, "delta": self.delta, "why": self.why,
                "reason": self.reason}

    def text(self) -> str:
        p = f"{self.patch}: " if self.patch else ""
        if self.kind == "unexpected":
            if self.change == "changed":
                what = f"code changed, {self.delta:+d} bytes ({self.old_size} -> {self.new_size})"
            elif self.change == "added":
                what = f"added ({self.new_size} bytes)"
            else:
                what = f"removed ({self.old_size} bytes)"
            return f"{p}{self.object}: {self.function}: {what}; not declared by the patch"
        where = f"{self.object}: " if self.object else ""
        how = ("its code is the same" if self.reason == "unchanged"
               else "no compared object has it")
        return (f"{p}{where}{self.function}: expected a code change, but {how} "
                f"(declared: {self.why})")


def clone_base(name: str) -> str:
    """foo.constprop.0.isra.0 / foo.cold / foo.part.1 -> foo."""
    return _CLONE.sub("", name)


def _fn_matches(pattern: str, name: str) -> bool:
    return (name == pattern or clone_base(name) == pattern
            or fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(clone_base(name),
                                                                         pattern))


def _obj_matches(patterns, obj: str) -> bool:
    if not patterns:
        return True
    for p in patterns:
        p = p[:-2] + ".o" if p.endswith(".c") else p
        if obj == p or obj.endswith("/" + p) or fnmatch.fnmatchcase(obj, p):
            return True
    return False


def _expects(entry_expectations) -> list:
    if entry_expectations is None:
        return []
    if hasattr(entry_expectations, "code"):          # a manifest Entry
        return list(entry_expectations.code)
    return list(entry_expectations)


def judge(entry_expectations, diffs: Iterable[ObjDiff], patch: str = ""):
    """(unexpected, missing) [Finding] for one patch.

    entry_expectations: the manifest entry's code expectations (each with
    `functions`, `objects`, `why`: regen.manifest.CodeExpect), the Entry
    itself, or None/[] for a type-only patch.  A function whose code changed,
    appeared or disappeared is unexpected unless an expectation names it
    (a name, a glob, or the base of a GCC clone: `foo` covers `foo.cold`,
    `foo.isra.0`) in one of its objects (all if none are named).  An
    expected function that changed nowhere is missing: reason "unchanged"
    (compared, same code) or "absent" (in none of the compared objects:
    inlined everywhere); an expectation that names objects none of which was
    compared (not built in this configuration) is not judged.  Missing is a
    separate category: a report, not necessarily a failure."""
    exps = _expects(entry_expectations)
    diffs = list(diffs)
    unexpected, missing = [], []
    hit = set()
    for d in diffs:
        items = ([("changed", c.function, c.old_size, c.new_size) for c in d.changed]
                 + [("added", a.function, 0, a.size) for a in d.added]
                 + [("removed", r.function, r.size, 0) for r in d.removed])
        for change, fn, old, new in items:
            ok = False
            for i, e in enumerate(exps):
                if not _obj_matches(list(getattr(e, "objects", []) or []), d.object):
                    continue
                for j, pat in enumerate(e.functions):
                    if _fn_matches(pat, fn):
                        ok = True
                        hit.add((i, j))
            if not ok:
                unexpected.append(Finding("unexpected", patch, d.object, fn, change, old, new))
    for i, e in enumerate(exps):
        objs = list(getattr(e, "objects", []) or [])
        if objs and not any(_obj_matches(objs, d.object) for d in diffs):
            continue        # none of its objects was rebuilt here (another configuration)
        for j, pat in enumerate(e.functions):
            if (i, j) in hit:
                continue
            seen = [d.object for d in diffs if _obj_matches(objs, d.object)
                    and (any(_fn_matches(pat, n) for n in d.present) or not d.present)]
            missing.append(Finding("missing", patch, ", ".join(seen) or ", ".join(objs), pat,
                                   why=getattr(e, "why", ""),
                                   reason="unchanged" if seen else "absent"))
    return unexpected, missing


def _norm_subject(s: str) -> str:
    s = re.sub(r"^\s*\[[^\]]*\]\s*", "", s or "")
    return " ".join(s.split())


def entries_by_subject(series) -> dict:
    """{subject: Entry} of the manifest entries that make a patch (not the
    skipped ones).  A patch is matched to its entry by its subject: regen
    writes the entry's `subject` as the commit subject, and `git am` keeps
    it (bisect's PatchResult.subject); a `[PATCH n/m]` prefix and runs of
    white space are ignored.  Two entries with the same subject are an
    error: the mapping would be ambiguous."""
    out = {}
    for e in series.entries:
        if getattr(e, "skip", ""):
            continue
        k = _norm_subject(e.subject)
        if k in out:
            raise SlabconvError(f"manifest: two entries have the subject '{e.subject}' "
                                f"({out[k].id}, {e.id})", exit_code=2)
        out[k] = e
    return out


def entry_for_subject(series, subject: str, _index: Optional[dict] = None):
    """The manifest entry whose patch has this subject, or None (a patch not
    made from the manifest: judge it as type-only or not at all)."""
    return (_index if _index is not None else entries_by_subject(series)).get(
        _norm_subject(subject))


def renames_of(entry) -> dict:
    """{old: new} function renames an entry makes (its rename_fn steps)."""
    out = {}
    for st in getattr(entry, "steps", []) or []:
        if st.path.endswith("rename_fn.cocci") and "from" in st.defines and "to" in st.defines:
            out[st.defines["from"]] = st.defines["to"]
    return out


# --------------------------------------------------------------------------
# scripts/bloat-o-meter

@dataclass
class Bloat:
    add: int = 0
    remove: int = 0
    grow: int = 0
    shrink: int = 0
    up: int = 0
    down: int = 0             # negative, as printed
    net: int = 0
    category: str = ""        # "Function", "Data", "RO Data"
    rows: list = field(default_factory=list)     # (name, old, new, delta); old/new None for "-"
    before_total: Optional[int] = None
    after_total: Optional[int] = None

    def to_dict(self) -> dict:
        return {"add": self.add, "remove": self.remove, "grow": self.grow,
                "shrink": self.shrink, "up": self.up, "down": self.down, "net": self.net,
                "category": self.category, "before_total": self.before_total,
                "after_total": self.after_total,
                "rows": [{"name": n, "old": o, "new": w, "delta": d}
                         for n, o, w, d in self.rows]}

    def text(self) -> str:
        """The summary line as bloat-o-meter prints it."""
        return (f"add/remove: {self.add}/{self.remove} grow/shrink: {self.grow}/{self.shrink} "
                f"up/down: {self.up}/{self.down} ({self.net})")


_BLOAT_SUMMARY = re.compile(r"^add/remove: (\d+)/(\d+) grow/shrink: (\d+)/(\d+) "
                            r"up/down: \+?(-?\d+)/(-?\d+) \(([-+]?\d+)\)\s*$")
_BLOAT_TOTAL = re.compile(r"^Total: Before=(\d+), After=(\d+), chg ")


def parse_bloat(text: str) -> list:
    """bloat-o-meter's output -> [Bloat], one per summary line (-c prints three)."""
    out, cur, header = [], None, False
    for line in text.splitlines():
        m = _BLOAT_SUMMARY.match(line)
        if m:
            a, r, g, s, up, down, net = (int(x) for x in m.groups())
            cur = Bloat(a, r, g, s, up, down, net)
            out.append(cur)
            header = True
            continue
        if cur is None:
            continue
        if header:
            parts = line.split()
            if parts[-3:] == ["old", "new", "delta"]:
                cur.category = " ".join(parts[:-3])
            header = False
            continue
        m = _BLOAT_TOTAL.match(line)
        if m:
            cur.before_total, cur.after_total = int(m.group(1)), int(m.group(2))
            continue
        parts = line.split()
        if len(parts) >= 4 and re.fullmatch(r"[-+]?\d+", parts[-1]):
            def num(x):
                return None if x == "-" else int(x)
            try:
                cur.rows.append((" ".join(parts[:-3]), num(parts[-3]), num(parts[-2]),
                                 int(parts[-1])))
            except ValueError:
                pass
    return out


def bloat(before, after, kernel_src, option: Optional[str] = None) -> Bloat:
    """Run the kernel tree's own scripts/bloat-o-meter on two objects or
    vmlinux images (it reads their sizes with `nm --size-sort`); option
    "-t" (functions only) or "-d" (data only), default all symbols."""
    script = Path(kernel_src) / "scripts" / "bloat-o-meter"
    if not script.is_file():
        raise SlabconvError(f"{script} not found (not a kernel tree?)", exit_code=2)
    if shutil.which("nm") is None:
        raise SlabconvError("nm not found (Debian package binutils)", exit_code=3)
    if option not in (None, "-t", "-d"):
        raise SlabconvError(f"bloat: option {option!r} (None, '-t' or '-d')", exit_code=2)
    for p in (before, after):
        if not Path(p).is_file():
            raise SlabconvError(f"bloat: {p} does not exist", exit_code=2)
    with tempfile.TemporaryDirectory(prefix="bloat-") as td:
        # the script hands the path to a shell unquoted: give it plain names
        a, b = Path(td) / "before", Path(td) / "after"
        os.symlink(Path(before).resolve(), a)
        os.symlink(Path(after).resolve(), b)
        cp = subprocess.run([sys.executable, str(script)] + ([option] if option else [])
                            + [str(a), str(b)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "LC_ALL": "C"})
    res = parse_bloat(cp.stdout)
    if cp.returncode != 0 or not res:
        raise SlabconvError(f"bloat-o-meter failed (exit {cp.returncode}): "
                            f"{(cp.stderr or cp.stdout).strip()[:400]}", exit_code=1)
    return res[0]


# --------------------------------------------------------------------------
# command line: python3 -m verify.objdiff BEFORE AFTER

def main(argv=None) -> int:
    import argparse
    import json
    ap = argparse.ArgumentParser(
        prog="python3 -m verify.objdiff",
        description="Compare the code of two builds of an object function by function; "
                    "exit 1 when a function changed, was added or removed.")
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                    help="a function the patch renamed (repeatable)")
    ap.add_argument("--diff", action="store_true", help="show a diff excerpt per function")
    ap.add_argument("--dump", action="store_true",
                    help="print the normalised code of AFTER (BEFORE is not read: give -)")
    ap.add_argument("--bloat", type=Path, metavar="KERNEL_SRC",
                    help="also run KERNEL_SRC/scripts/bloat-o-meter")
    ap.add_argument("--json", action="store_true", help="JSON on stdout")
    args = ap.parse_args(argv)

    def go() -> int:
        if args.dump:
            for name, fc in sorted(function_code(args.after).items()):
                print(f"== {name} ({fc.size} bytes, {fc.digest})\n{fc.text}")
            return 0
        renames = dict(r.split("=", 1) for r in args.rename)
        d = compare(args.before, args.after, renames, label=str(args.after))
        b = bloat(args.before, args.after, args.bloat) if args.bloat else None
        if args.json:
            out = d.to_dict()
            if b:
                out["bloat"] = b.to_dict()
            print(json.dumps(out, indent=1))
        else:
            print(d.text(excerpts=args.diff))
            if b:
                print("bloat-o-meter: " + b.text())
        return 0 if d.equal else 1
    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
