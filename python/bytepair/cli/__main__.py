"""``python -m bytepair.cli``: the same as the ``bytepair`` command."""

from bytepair.cli import main

raise SystemExit(main())
