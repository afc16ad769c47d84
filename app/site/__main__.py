"""`python -m app.site build DIR`: the static build (app/site/build.py)."""

import sys

from app.site.build import main

raise SystemExit(main(sys.argv[1:]))
