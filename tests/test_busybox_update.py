"""boot.busybox: apt-get update of the i386 guest's private state is
retried, and a security index that still fails (a mirror sync) is left out
when the main suite's index came."""
import pytest

from boot import busybox
from slabconv.log import SlabconvError

SECURITY_FAULT = ("apt-get update failed (exit 100, private apt state s):\n"
                  "Err:3 http://deb.debian.org/debian-security bookworm-security/main i386 "
                  "Packages\nE: Failed to fetch http://deb.debian.org/debian-security/dists/"
                  "bookworm-security/main/binary-i386/Packages.xz  File has unexpected size "
                  "(371952 != 372316). Mirror sync in progress?\n"
                  "E: Some index files failed to download. They have been ignored, or old "
                  "ones used instead.")
MAIN_FAULT = SECURITY_FAULT.replace("debian-security", "debian").replace(
    "bookworm-security", "bookworm")


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setattr(busybox, "UPDATE_PAUSE", 0.0)
    (tmp_path / "lists").mkdir()
    return tmp_path


def fake(monkeypatch, outcomes):
    calls = []

    def _apt(tool, args, state, debarch, cwd=None):
        calls.append(args)
        o = outcomes[min(len(calls), len(outcomes)) - 1]
        if o:
            raise SlabconvError(o, exit_code=4)
        return ""
    monkeypatch.setattr(busybox, "_apt", _apt)
    return calls


def test_a_transient_fault_is_retried(state, monkeypatch, capsys):
    calls = fake(monkeypatch, [MAIN_FAULT, None])
    busybox._update(state, "i386")
    assert len(calls) == 2
    assert "apt-get update failed (try 1 of 3)" in capsys.readouterr().err


def test_a_lasting_security_fault_falls_back_to_main(state, monkeypatch, capsys):
    (state / "lists" / "deb.debian.org_debian_dists_bookworm_main_binary-i386_Packages.lz4"
     ).write_text("")
    calls = fake(monkeypatch, [SECURITY_FAULT])
    busybox._update(state, "i386")
    assert len(calls) == busybox.UPDATE_TRIES
    assert "taking busybox-static from bookworm main" in capsys.readouterr().err


def test_a_lasting_fault_of_main_is_an_error_that_says_what_to_do(state, monkeypatch):
    fake(monkeypatch, [MAIN_FAULT])
    with pytest.raises(SlabconvError) as e:
        busybox._update(state, "i386")
    assert e.value.exit_code == 4
    assert "tried 3 times" in str(e.value) and "retry in a few minutes" in str(e.value)


def test_a_security_fault_without_the_main_index_is_an_error(state, monkeypatch):
    fake(monkeypatch, [SECURITY_FAULT])
    with pytest.raises(SlabconvError):
        busybox._update(state, "i386")
