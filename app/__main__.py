"""`python -m app`: the run command (app/startup/serve.py)."""

from app.startup.serve import main

raise SystemExit(main())
