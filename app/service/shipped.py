"""Every shipped file the app serves from, checked against its recorded sha256 (`app/service/shipped.sha256`).

The manifest lists, per data set, the files the app reads: each model's weights and training log, the
training snapshots, the held-out set, the fact ledger, and the research desk's results and views. At
start-up (app/main.py `create_app`) every listed file is hashed and compared: a missing, truncated or
altered file ends start-up with one line naming it (exit 3, so a supervisor stops rather than respawns).
`/healthz` asks `report()` again (a file is re-hashed only when its size or time stamp changed), so a file
deleted or changed while the app runs makes the service not ok, as the next start would refuse.

After changing a shipped file on purpose (retraining, re-running the research desk), record it with
`python -m app.shipped` (tests/service/test_hardening.py checks the committed manifest is current); from the
project folder `sha256sum -c app/service/shipped.sha256` checks it without Python.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from app.settings import settings

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = Path(__file__).resolve().parent / "shipped.sha256"
STARTUP_FAILURE = 3  # uvicorn's and gunicorn's exit code for a worker that cannot boot: they stop, not respawn

# data set -> the files (globs, relative to the project folder) it is read from
DATA_SETS: dict[str, tuple[str, ...]] = {
    "model 2017": ("model/artifacts/model.safetensors", "model/artifacts/training_log.json"),
    "model modern": ("model/artifacts/modern/model.safetensors", "model/artifacts/modern/training_log.json"),
    "snapshots": ("model/artifacts/snapshots.safetensors",),
    "held-out set": ("model/artifacts/heldout.json",),
    "facts": ("content/facts.tsv",),
    "research results": ("research/results/*.json", "research/gallery/*.json"),
    "research views": ("research/results/views/*.json",),
}


class DataUnavailable(RuntimeError):
    """A model or data set that cannot be used now; answered with 503 and the reason (app/main.py)."""


def unreadable(e: Exception, shown: str) -> str:
    """Why a data file could not be used, naming it as `shown` (never the server's folders)."""
    if isinstance(e, FileNotFoundError):
        return f"{shown} is missing"
    if isinstance(e, (UnicodeDecodeError, json.JSONDecodeError)) or type(e).__name__ == "JSONDecodeError":
        return f"{shown} is not complete JSON, damaged or half-written ({type(e).__name__})"
    if isinstance(e, KeyError):
        return f"{shown} lacks the field {str(e)[:60]} ({type(e).__name__})"
    if type(e) is ValueError:  # a file of another shape: its message names no path
        return f"{shown} {str(e)[:200]}"
    return f"{shown} cannot be read ({type(e).__name__})"


def shown_name(path: Path, root: Path = ROOT) -> str:
    """A data file as a message may name it: relative to the project folder, or by its own name."""
    return str(path.relative_to(root)) if path.is_relative_to(root) else path.name


def data_set_of(path: str) -> str:
    return next(name for name, globs in DATA_SETS.items() if any(Path(path).match(g) for g in globs))


def shipped_files(root: Path = ROOT) -> list[str]:
    """The files the manifest is to cover, as they are now in `root` (for writing it)."""
    found = {str(p.relative_to(root)) for globs in DATA_SETS.values() for g in globs for p in root.glob(g)}
    return sorted(found)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest_text(root: Path = ROOT) -> str:
    """The manifest for the files as they are in `root`, in sha256sum's format."""
    return "".join(f"{sha256(root / p)}  {p}\n" for p in shipped_files(root))


def recorded(manifest: Path = MANIFEST) -> dict[str, str]:
    """path -> recorded sha256, as the committed manifest lists them."""
    out = {}
    for line in manifest.read_text().splitlines():
        digest, _, path = line.partition("  ")
        if path:
            out[path] = digest
    return out


@dataclass(frozen=True)
class FileCheck:
    path: str  # relative to the project folder: what a message may name (never the server's own folders)
    problem: str  # "" when the file is as recorded

    @property
    def ok(self) -> bool:
        return not self.problem


class Shipped:
    """The recorded files of one project folder, checked; a file is re-hashed only when its stat changes."""

    def __init__(self, root: Path = ROOT, manifest: Path = MANIFEST):
        self.root = root
        self.expected = recorded(manifest)
        self.data_set = {p: data_set_of(p) for p in self.expected}
        self._seen: dict[str, tuple[tuple[int, ...], FileCheck]] = {}
        self._lock = threading.Lock()

    def check(self, path: str) -> FileCheck:
        try:
            st = (self.root / path).stat()
        except OSError:
            return FileCheck(path, "is missing")
        # the change time too: an edit that keeps the size and sets the old mtime back still moves it (and a
        # file put in its place has another inode)
        stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        with self._lock:
            seen = self._seen.get(path)
        if seen and seen[0] == stamp:
            return seen[1]
        try:
            same = sha256(self.root / path) == self.expected[path]
            result = FileCheck(
                path, "" if same else "does not match its recorded checksum (app/service/shipped.sha256)"
            )
        except OSError as e:
            result = FileCheck(path, f"cannot be read ({type(e).__name__})")
        with self._lock:
            self._seen[path] = (stamp, result)
        return result

    def checked(self, skip: tuple[str, ...] = ()) -> list[FileCheck]:
        return [self.check(p) for p, name in self.data_set.items() if name not in skip]

    def problem(self, data_set: str) -> str:
        """Why `data_set` is unusable ("" when every file of it is as recorded)."""
        bad = [self.check(p) for p, name in self.data_set.items() if name == data_set]
        return "; ".join(f"{c.path} {c.problem}" for c in bad if not c.ok)

    def report(self) -> dict[str, str]:
        """data set -> "" when usable, else the reason (for /healthz): one stat per file."""
        return {name: self.problem(name) for name in DATA_SETS}


def skipped() -> tuple[str, ...]:
    """Data sets served from elsewhere: research views from ANATOMY_RESEARCH_VIEWS when it is set."""
    return ("research views",) if settings.research_views else ()


def require_shipped(root: Path = ROOT, manifest: Path = MANIFEST) -> Shipped:
    """Every recorded file as recorded, or one line naming the first that is not, and exit 3."""
    if not manifest.is_file():
        fail("the manifest of shipped files, app/service/shipped.sha256, is missing; run `python -m app.shipped`")
    shipped = Shipped(root, manifest)
    bad = [c for c in shipped.checked(skipped()) if not c.ok]
    if bad:
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        fail(
            f"{bad[0].path} {bad[0].problem}{more}; restore the shipped file "
            "(git checkout -- FILE), or record a deliberate change with `python -m app.shipped`"
        )
    return shipped


def fail(line: str) -> None:
    print(f"anatomy: cannot start: {line}", file=sys.stderr, flush=True)
    raise SystemExit(STARTUP_FAILURE)


def record() -> int:
    """`python -m app.shipped`: the manifest written for the shipped files as they are now."""
    MANIFEST.write_text(manifest_text())
    print(f"recorded {len(recorded())} shipped files in {MANIFEST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(record())
