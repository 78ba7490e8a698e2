"""``python -m cfaug_hf.cli``: the ``cfaug`` command."""

import sys

from . import main

sys.exit(main())
