"""`python -m app.shipped`: record the shipped files' checksums (the checks are app/service/shipped.py)."""

from app.service.shipped import record

if __name__ == "__main__":
    raise SystemExit(record())
