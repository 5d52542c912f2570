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

    elf.py      reading an object: sections, symbols, relocations
    code.py     disassembly and normalisation: each function's code as text
    compare.py  two builds of an object compared function by function; a
                patch's objects (check_patch), snapshots of O=
    expect.py   the changes judged against the manifest entry's expectations
    bloat.py    scripts/bloat-o-meter, run and parsed
    __main__.py the command line

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
from .bloat import Bloat, bloat, parse_bloat
from .code import FuncCode, clone_base, function_code, objdump_path
from .compare import (FuncChange, FuncSize, ObjDiff, PatchCode, check_patch, compare,
                      compare_objects, list_objects, snapshot, stable)
from .elf import Elf
from .expect import (Finding, applicable, entries_by_subject, entry_for_subject, judge,
                     renames_of, stale)

__all__ = ["Bloat", "bloat", "parse_bloat", "FuncCode", "clone_base", "function_code",
           "objdump_path", "FuncChange", "FuncSize", "ObjDiff", "PatchCode", "check_patch",
           "compare", "compare_objects", "list_objects", "snapshot", "stable", "Elf",
           "Finding", "applicable", "entries_by_subject", "entry_for_subject", "judge", "renames_of"]
