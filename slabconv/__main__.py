import sys

from slabconv.cli import main

sys.exit(main())
