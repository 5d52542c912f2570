"""Where slabconv keeps things.  Nothing large ever lives in the repository."""
import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COCCI = REPO / "cocci"
GENERATED = REPO / "generated-patches"
DEFAULT_KERNEL = "5.10"


def cache_root() -> Path:
    """$SLABCONV_CACHE, else $XDG_CACHE_HOME/slabconv, else ~/.cache/slabconv."""
    env = os.environ.get("SLABCONV_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return (Path(xdg).expanduser() / "slabconv").resolve()


def cache_dir(*parts: str) -> Path:
    """A sub-directory of the cache, created on demand."""
    p = cache_root().joinpath(*parts)
    p.mkdir(parents=True, exist_ok=True)
    return p
