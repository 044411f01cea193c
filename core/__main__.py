"""``python -m glasswork`` is the same as the ``glasswork`` command."""

from glasswork.cli import main

main()
