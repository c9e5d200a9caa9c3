"""`python -m rag.cli`: the `paperchat` command run from a checkout (the tests' subprocesses use it)."""

import sys

from rag.cli import main

sys.exit(main())
