"""Every setting the app takes from its environment: one `Settings` object, read once when the app is
imported. Each field is the environment variable `ANATOMY_<FIELD>` (`ANATOMY_CACHE_MB=64`), and the README's
table of settings lists them all (tests/service/test_settings.py holds the two equal). Modules read `settings.FIELD`
when they need it, so a test may set a field on the object with monkeypatch."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PREFIX = "ANATOMY_"


class Settings(BaseSettings):
    """The app's settings, each from the environment variable ANATOMY_<NAME>, else its default."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="ignore")

    host: str = Field("127.0.0.1", description="the address `python -m app` listens on")
    port: int = Field(8000, description="the port `python -m app` listens on")
    processes: int = Field(
        1, ge=1, description="server processes of `python -m app` (each loads the models and keeps its own caches)"
    )
    connections_per_client: int = Field(
        400,
        ge=1,
        description="connections (and requests in flight) one client address may hold in each server process; "
        "a class of 60 behind one address opens at most 360 (Chromium's six per host)",
    )
    trusted_proxies: str = Field(
        "",
        description="comma-separated addresses or networks (`*`: any) of reverse proxies whose X-Forwarded-For "
        "names the client: the limits then count the client behind the proxy; empty trusts none",
    )
    workers: int = Field(2, ge=1, description="traces one process computes at once (its worker threads)")
    torch_threads: int = Field(
        1,
        ge=1,
        description="torch's intra-op threads per trace (the matrices are 32 "
        "wide: more threads cost more in hand-offs than they gain)",
    )
    cache_mb: int = Field(
        192, ge=0, description="MiB of computed traces each process keeps, all models together (about 500 traces)"
    )
    compress: bool = Field(True, description="compress responses (zstd, Brotli or gzip); 0 sends every body as it is")
    server_timing: bool = Field(
        False,
        description="say in a Server-Timing header how long a trace took "
        "(bench/ only: it tells which inputs others asked for)",
    )
    research_views: Path | None = Field(
        None, description="the folder of the research desk's views (unset: research/results/views)"
    )


settings = Settings()
