"""verify/compiled.py: which changed lines a build compiled.

A small tree with a kbuild-style O= directory (a recorded .cmd per object,
compiled by the real gcc's preprocessor): a change in a branch the build's
-D options keep is compiled, one in a branch they drop is reported as NOT
compiled, and comments, macro continuation lines, directive lines, headers
and the allowlist are counted as the module says.
"""
import subprocess
from pathlib import Path

import pytest

from verify import compiled

BASE_C = """\
#include "h.h"
/* a comment */
int live(int x)
{
#ifdef FOO
\treturn x + 1;
#else
\treturn x - 1;
#endif
}

#define TWICE(a)\\
\t((a) +\\
\t (a))

int dead(int x)
{
#ifdef BAR
\treturn x * 2;
#endif
\treturn x;
}
"""

BASE_H = """\
#ifndef H_H
#define H_H
struct s { int a; };
#ifdef BAR
static inline int hb(void) { return 1; }
#endif
static inline int hf(void) { return 2; }
#endif
"""


def git(tree, *args):
    return subprocess.run(["git", *args], cwd=tree, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def fake(tmp_path):
    """A tree with a baseline commit and a change; its O= dir with the .cmd
    files kbuild would have written (a.o compiled with -DFOO, and b.o, whose
    dependency list names h.h)."""
    tree = tmp_path / "tree"
    (tree / "inc").mkdir(parents=True)
    (tree / "a.c").write_text(BASE_C)
    (tree / "b.c").write_text('#include "h.h"\nint b(void) { return hf(); }\n')
    (tree / "inc" / "h.h").write_text(BASE_H)
    git(tree, "init", "-q")
    git(tree, "add", ".")
    git(tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    new_c = (BASE_C.replace("x + 1", "x + 2")            # live (FOO)
             .replace("x - 1", "x - 2")                  # dropped (#else of FOO)
             .replace("/* a comment */", "/* a changed comment */")
             .replace("\t (a))", "\t (a) + 0)")          # macro continuation line
             .replace("x * 2", "x * 3")                  # dropped (BAR)
             .replace("#ifdef BAR\n\treturn x * 3", "#if defined(BAR)\n\treturn x * 3"))
    (tree / "a.c").write_text(new_c)
    (tree / "inc" / "h.h").write_text(BASE_H.replace("return 1;", "return 3;")
                                      .replace("return 2;", "return 4;"))
    git(tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "change")
    o = tree / "o"
    o.mkdir()
    # as kbuild records them: a wrapper before the compiler, make's $$ and a
    # post-processing command after `;`
    (o / ".a.o.cmd").write_text(
        "cmd_a.o := sh ccwrap.sh ccache gcc -Wp,-MMD,./.a.o.d -I../inc -DFOO "
        "-DNAME='\"a$$b\"' -c -o a.o ../a.c ; ./objtool check a.o\n\n"
        "source_a.o := ../a.c\n\ndeps_a.o := \\\n  ../inc/h.h \\\n\n")
    (o / ".b.o.cmd").write_text(
        "savedcmd_b.o := gcc -Wp,-MMD,./.b.o.d -I../inc -c -o b.o ../b.c\n\n"
        "deps_b.o := \\\n  ../b.c \\\n  ../inc/h.h \\\n\n")
    return tree, o


def test_recorded_command_is_the_compile_alone(fake):
    _, o = fake
    words = compiled.recorded_command(o, "a.o")
    assert words[:4] == ["sh", "ccwrap.sh", "ccache", "gcc"]
    assert "-DNAME=\"a$b\"" in words and "./objtool" not in words
    cmd = compiled.preprocess_command(words, "x.i")
    assert cmd[0] == "gcc" and "-c" not in cmd and not any(w.startswith("-Wp,") for w in cmd)
    assert cmd[-4:] == ["-E", "-dD", "-o", "x.i"] and "a.o" not in cmd


def test_changed_lines_are_those_of_the_new_file(fake):
    tree, _ = fake
    ch = compiled.changed_lines(tree, "HEAD~1", "HEAD")
    assert set(ch) == {"a.c", "inc/h.h"}
    text = (tree / "a.c").read_text().splitlines()
    for n, t in ch["a.c"].items():
        assert text[n - 1] == t


def test_live_branch_compiled_dropped_branch_reported(fake):
    tree, o = fake
    rep = compiled.check(tree, compiled.changed_lines(tree, "HEAD~1", "HEAD"), {"cfg": o},
                         allow=[])
    by_file = {f.file: f for f in rep.files}
    a = by_file["a.c"]
    missed = {t.strip() for t in a.missed.values()}
    # dropped by the preprocessor: the #else branch of FOO and the BAR block
    assert missed == {"return x - 2;", "return x * 3;"}
    # counted and compiled: x + 2, the macro's continuation line and the
    # changed directive (#if defined(BAR) is read: the code before it is live);
    # the comment is not code
    assert a.code == 5 and a.by["cfg"] == 3
    # the header, through b.o's dependency list: hf() kept, hb() (BAR) dropped
    h = by_file["inc/h.h"]
    assert h.objects["cfg"].split()[0] in ("a.o", "b.o")
    assert [t.strip() for t in h.missed.values()] == ["static inline int hb(void) { return 3; }"]
    assert not rep.ok and rep.missed == 3
    s = rep.summary()
    assert "NOT COMPILED a.c:" in s and "return x * 3;" in s and "3 NOT compiled" in s


def test_a_second_build_covers_what_the_first_dropped(fake):
    tree, o = fake
    o2 = tree / "o2"
    o2.mkdir()
    for n in (".a.o.cmd", ".b.o.cmd"):
        (o2 / n).write_text((o / n).read_text().replace("-DFOO", "-DBAR")
                            .replace("-I../inc -c", "-I../inc -DBAR -c"))
    rep = compiled.check(tree, compiled.changed_lines(tree, "HEAD~1", "HEAD"),
                         {"foo": o, "bar": o2}, allow=[])
    assert rep.ok, rep.summary()
    assert rep.missed == 0


def test_allowlist_moves_a_line_to_allowed(fake):
    tree, o = fake
    allow = [compiled.Allowed("a.c", r"x \* 3", "BAR is another architecture's")]
    rep = compiled.check(tree, compiled.changed_lines(tree, "HEAD~1", "HEAD"), {"cfg": o},
                         allow=allow)
    a = next(f for f in rep.files if f.file == "a.c")
    assert list(a.allowed.values()) == ["BAR is another architecture's"]
    assert [t.strip() for t in a.missed.values()] == ["return x - 2;"]
    assert rep.to_dict()["allowed"] == 1


def test_no_object_compiled_the_file(fake):
    tree, o = fake
    (o / ".a.o.cmd").unlink()
    rep = compiled.check(tree, {"a.c": {6: "\treturn x + 2;"}}, {"cfg": o}, allow=[])
    assert rep.missed == 1 and rep.files[0].by == {"cfg": 0}


def test_preprocessing_failure_is_an_error_not_a_pass(fake):
    tree, o = fake
    (o / ".a.o.cmd").write_text("cmd_a.o := gcc -I../inc -c -o a.o ../missing.c\n")
    rep = compiled.check(tree, {"a.c": {6: "\treturn x + 2;"}}, {"cfg": o}, allow=[])
    assert not rep.ok and rep.errors and "preprocessing a.o failed" in rep.errors[0]


def test_code_lines_skip_comments_and_strings():
    text = 'a; /* x\n y */\n// z\n"/*"; b;\n\n  /* c */ d;\n'
    assert compiled.code_lines(text) == {1, 4, 6}


def test_allowlist_file_loads():
    entries = compiled.load_allowlist()
    assert entries and all(e.reason for e in entries)
    assert any(e.file == "mm/kasan/tags_report.c" for e in entries)


def test_a_build_of_other_sources_is_an_error(fake, tmp_path):
    """The line numbers of a build's own snapshot must be those of the tree
    the changes were read from: a snapshot whose file differs is an error,
    not a guess."""
    tree, o = fake
    snap = tmp_path / "snap"
    (snap / "inc").mkdir(parents=True)
    (snap / "a.c").write_text("/* other */\n" + (tree / "a.c").read_text())
    (snap / "inc" / "h.h").write_text((tree / "inc" / "h.h").read_text())
    o2 = snap / "o"
    o2.mkdir()
    for n in (".a.o.cmd", ".b.o.cmd"):
        (o2 / n).write_text((o / n).read_text())
    (snap / "b.c").write_text((tree / "b.c").read_text())
    rep = compiled.check(tree, compiled.changed_lines(tree, "HEAD~1", "HEAD"), {"snap": o2},
                         allow=[])
    assert not rep.ok
    assert any("a.c in" in e and "the build is not of this tree" in e for e in rep.errors)
    assert not any("h.h in" in e for e in rep.errors)      # the same header: checked
