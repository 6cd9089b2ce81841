"""python -m reporter.example OUT --rows N --seed S [--labels CSV]: write a seeded example pool."""

import sys

from .generate import main

sys.exit(main())
