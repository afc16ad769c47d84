"""`python -m app.figures NAME`: one figure's data as JSON (the figures are app/routes/figures.py)."""

import sys

from app.routes.figures import main

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
