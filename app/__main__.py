"""`python -m app`: the run command (app/serve.py)."""

from app.serve import main

raise SystemExit(main())
