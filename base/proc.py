"""Running external tools with clear errors."""
import shutil
import subprocess
from typing import Sequence

from .log import SlabconvError


def require_tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if not path:
        raise SlabconvError(
            f"'{name}' not found; install the Debian package '{package}' "
            f"(scripts/install-deps.sh installs everything)", exit_code=3)
    return path


def run(cmd: Sequence[str], *, what: str, cwd=None, env=None,
        timeout=None, check=True, capture=True) -> subprocess.CompletedProcess:
    """Run cmd; on failure raise SlabconvError naming `what` with the output tail."""
    try:
        cp = subprocess.run(list(map(str, cmd)), cwd=cwd, env=env, timeout=timeout,
                            stdout=subprocess.PIPE if capture else None,
                            stderr=subprocess.STDOUT if capture else None,
                            text=True, errors="replace")
    except FileNotFoundError as e:
        raise SlabconvError(f"{what}: cannot run {cmd[0]}: {e}", exit_code=3)
    except subprocess.TimeoutExpired:
        raise SlabconvError(f"{what}: timed out after {timeout}s: {' '.join(map(str, cmd))}")
    if check and cp.returncode != 0:
        tail = "\n".join((cp.stdout or "").splitlines()[-40:])
        raise SlabconvError(f"{what} failed (exit {cp.returncode}): "
                            f"{' '.join(map(str, cmd))}\n{tail}")
    return cp


_SETPRIV = shutil.which("setpriv")


def tied(cmd: Sequence[str]) -> list[str]:
    """`cmd` made to die with the thread that starts it (SIGKILL through
    PR_SET_PDEATHSIG, util-linux's setpriv): a spatch, git fast-import or
    git checkout left running by a driver killed with SIGKILL would go on
    writing into a work tree that the next run has taken over."""
    cmd = [str(c) for c in cmd]
    return ["setpriv", "--pdeathsig", "KILL", "--", *cmd] if _SETPRIV else cmd
