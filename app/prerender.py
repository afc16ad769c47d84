"""`python3 -m app.prerender`: the default input's figures and tables, computed ahead by the page's own
code (the work is app/startup/prerender.py)."""

import sys

from app.startup.prerender import main

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
