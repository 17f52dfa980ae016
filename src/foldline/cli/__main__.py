"""``python -m foldline.cli``: the same as the ``foldline`` command."""

from . import main

main()
