"""python3 -m regen: regenerate the series on a kernel tree."""
import sys

from slabconv.cli import main

if __name__ == "__main__":
    sys.exit(main(["regen", *sys.argv[1:]]))
