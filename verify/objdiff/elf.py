"""An ELF relocatable object, read with struct: sections, symbols, REL and
RELA relocations (x86_64, i386 and aarch64, little endian; standard library only)."""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from base.log import SlabconvError


SHT_SYMTAB, SHT_RELA, SHT_NOBITS, SHT_REL, SHT_SYMTAB_SHNDX = 2, 4, 8, 9, 18
SHF_WRITE, SHF_EXECINSTR, SHF_MERGE, SHF_STRINGS = 0x1, 0x4, 0x10, 0x20
STT_OBJECT, STT_FUNC, STT_SECTION, STT_FILE = 1, 2, 3, 4
STB_LOCAL = 0
SHN_UNDEF, SHN_LORESERVE, SHN_ABS, SHN_COMMON, SHN_XINDEX = 0, 0xff00, 0xfff1, 0xfff2, 0xffff
EM_386, EM_X86_64, EM_AARCH64 = 3, 62, 183

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
    # AArch64 (RELA only): a field is bits of a 4-byte instruction, its
    # target S + A, relative to the place itself (no correction to an
    # instruction's end: pc-relative False in code; the data ones, PREL*,
    # are table-relative as x86's PC32 in data)
    EM_AARCH64: {257: ("ABS64", 8, False), 258: ("ABS32", 4, False), 259: ("ABS16", 2, False),
                 260: ("PREL64", 8, True), 261: ("PREL32", 4, True), 262: ("PREL16", 2, True),
                 263: ("MOVW_UABS_G0", 4, False), 264: ("MOVW_UABS_G0_NC", 4, False),
                 265: ("MOVW_UABS_G1", 4, False), 266: ("MOVW_UABS_G1_NC", 4, False),
                 267: ("MOVW_UABS_G2", 4, False), 268: ("MOVW_UABS_G2_NC", 4, False),
                 269: ("MOVW_UABS_G3", 4, False), 274: ("ADR_PREL_LO21", 4, False),
                 275: ("ADR_PREL_PG_HI21", 4, False), 276: ("ADR_PREL_PG_HI21_NC", 4, False),
                 277: ("ADD_ABS_LO12_NC", 4, False), 278: ("LDST8_ABS_LO12_NC", 4, False),
                 279: ("TSTBR14", 4, False), 280: ("CONDBR19", 4, False),
                 282: ("JUMP26", 4, False), 283: ("CALL26", 4, False),
                 284: ("LDST16_ABS_LO12_NC", 4, False), 285: ("LDST32_ABS_LO12_NC", 4, False),
                 286: ("LDST64_ABS_LO12_NC", 4, False), 299: ("LDST128_ABS_LO12_NC", 4, False),
                 311: ("ADR_GOT_PAGE", 4, False), 312: ("LD64_GOT_LO12_NC", 4, False)},
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
    implicit: bool = False  # REL: the addend is in the field (zeroed_copy() clears it)


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
            raise SlabconvError(f"{path}: machine {self.machine} is not x86_64, i386 or "
                                f"aarch64", exit_code=2)
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
                lst.append(Reloc(off, typ, sym, addend, name, width, pcrel, not rela))
        for lst in out.values():
            lst.sort(key=lambda r: r.offset)
        return out

    def zeroed_copy(self, dest: Path) -> bool:
        """Write a copy whose REL-relocated fields in code are 0 (objdump
        then shows the same placeholder for REL as for RELA; a RELA field
        holds no addend, and on AArch64 it is bits of an instruction).
        False when every such field is 0 already (nothing written)."""
        buf = None
        for idx, lst in self.relocs.items():
            sec = self.sections[idx]
            if not sec.exec or sec.type == SHT_NOBITS:
                continue
            for r in lst:
                a = sec.offset + r.offset
                if r.implicit and r.offset + r.width <= sec.size and \
                        any(self.data[a:a + r.width]):
                    if buf is None:
                        buf = bytearray(self.data)
                    buf[a:a + r.width] = bytes(r.width)
        if buf is None:
            return False
        Path(dest).write_bytes(bytes(buf))
        return True
