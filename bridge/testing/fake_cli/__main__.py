"""``python -m bridge.testing.fake_cli``: run the fake CLI on this process's stdio."""

import sys

from . import main

sys.exit(main())
