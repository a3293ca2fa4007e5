"""python -m attnprof: runs the demo (the `attnprof` command is the CLI for traces)."""
import sys

from .demo import main

sys.exit(main())
