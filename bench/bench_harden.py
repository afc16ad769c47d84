"""The measurements of hardening for a public launch, on loopback only, bounded in connections and time:

  python3 bench/bench_harden.py weights            # /api/weights with br against identity, and /healthz meanwhile
  python3 bench/bench_harden.py flood [--launcher uvicorn]   # header flood + slow and silent clients
  python3 bench/bench_harden.py memory [--inputs 300]        # RSS fresh and after N cold inputs, both models
  python3 bench/bench_harden.py hold                         # one address's slowloris, trickled bodies, non-readers
  python3 bench/bench_harden.py pages                        # 16 clients on /?x=N and /?input=N, /healthz meanwhile

The attackers of `hold` connect from 127.0.0.9, the reader probing /healthz from 127.0.0.1: two addresses, as
a client on the internet and the class beside it are.

`--launcher app` (default) serves with the README's command (`python -m app`, app/startup/serve.py);
`--launcher uvicorn` with plain `uvicorn app.main:app` (httptools, no head deadline), for the before.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import socket
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serving import Connection, free_port, start_server, stop  # noqa: E402


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def summary(xs: list[float]) -> str:
    xs = sorted(xs)
    return f"median {1000 * statistics.median(xs):7.2f} ms  p95 {1000 * xs[int(0.95 * (len(xs) - 1))]:7.2f} ms"


async def timed_gets(port: int, path: str, n: int, headers: str = "") -> list[float]:
    c, out = Connection(port, headers), []
    for _ in range(n):
        t0 = time.perf_counter()
        status, _ = await c.get(path)
        out.append(time.perf_counter() - t0)
        assert status == 200, status
    c.close()
    return out


async def probe(port: int, seconds: float, every: float = 0.05) -> list[float]:
    """/healthz latencies of one well-behaved client, one request every `every` seconds."""
    c, out, end = Connection(port), [], time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        await c.get("/healthz")
        out.append(time.perf_counter() - t0)
        await asyncio.sleep(every)
    c.close()
    return out


async def weights(port: int) -> None:
    br = "Accept-Encoding: br\r\n"
    await timed_gets(port, "/api/weights", 3, br)  # the first asking compresses it once
    for name, headers in (("identity", "Accept-Encoding: identity\r\n"), ("br", br)):
        print(f"/api/weights {name:8s}: {summary(await timed_gets(port, '/api/weights', 100, headers))}")
    base = await probe(port, 3)
    clients = [timed_gets(port, "/api/weights", 40, br) for _ in range(8)]
    busy, *_ = await asyncio.gather(probe(port, 3), *clients)
    print(f"/healthz alone: {summary(base)};  beside 8 clients fetching the weights with br: {summary(busy)}")


async def flood_one(port: int, megabytes: int) -> str:
    """Unfinished headers, up to `megabytes`, until the server closes the connection."""
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"GET / HTTP/1.1\r\nHost: x\r\n")
    chunk = b"X-Flood: " + b"a" * 65_000 + b"\r\n"
    try:
        for _ in range(megabytes * 16):
            w.write(chunk)
            await asyncio.wait_for(w.drain(), 5)
        return "all sent"
    except (TimeoutError, OSError):
        return "refused"
    finally:
        w.close()


async def slow_one(port: int, seconds: float, silent: bool) -> float:
    """A client sending a header byte a second (or nothing): how long the server keeps it open."""
    r, w = await asyncio.open_connection("127.0.0.1", port)
    t0 = time.perf_counter()
    if not silent:
        w.write(b"GET / HTTP/1.1\r\nHost: x\r\n")
    try:
        while time.perf_counter() - t0 < seconds:
            if not silent:
                w.write(b"X")
                await w.drain()
            try:
                if await asyncio.wait_for(r.read(1), 1.0) == b"":
                    return time.perf_counter() - t0  # closed by the server
            except TimeoutError:
                pass
        return float("inf")
    except OSError:
        return time.perf_counter() - t0
    finally:
        w.close()


async def flood(port: int, pid: int, seconds: float = 20) -> None:
    base = await probe(port, 3)
    rss0 = rss_mb(pid)
    print(f"before: /healthz {summary(base)}; server RSS {rss0:.0f} MB")
    attack = (
        [flood_one(port, 16) for _ in range(20)]
        + [slow_one(port, seconds, False) for _ in range(20)]
        + [slow_one(port, seconds, True) for _ in range(5)]
    )
    during, *results = await asyncio.gather(probe(port, seconds), *attack)
    floods, slows, silents = results[:20], results[20:40], results[40:]
    rss1 = rss_mb(pid)
    await asyncio.sleep(2)
    after = await probe(port, 3)
    held = lambda xs: (
        f"closed after {min(xs):.1f}–{max(xs):.1f} s"
        if all(x != float("inf") for x in xs)
        else f"{sum(x == float('inf') for x in xs)} of {len(xs)} still open after {seconds:.0f} s"
    )  # noqa: E731
    print(f"20 header floods of 16 MB each: {sum(f == 'refused' for f in floods)} refused")
    print(f"20 slow clients (a byte a second): {held(slows)};  5 silent: {held(silents)}")
    print(f"during: /healthz {summary(during)}; RSS {rss1:.0f} MB (+{rss1 - rss0:.0f})")
    print(f"after:  /healthz {summary(after)}; RSS {rss_mb(pid):.0f} MB (+{rss_mb(pid) - rss0:.0f})")


# each attack from its own address (each its own client to the limits); the probing reader from 127.0.0.1
ATTACKER, TRICKLER, NON_READER = "127.0.0.9", "127.0.0.10", "127.0.0.11"


async def statuses(port: int, seconds: float, every: float = 0.05) -> tuple[list[float], Counter]:
    """/healthz from a well-behaved client (another address than the attackers'): latencies and statuses,
    a connection closed or refused counted as "closed" and opened again."""
    out, seen, end = [], Counter(), time.perf_counter() + seconds
    c = Connection(port)
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        try:
            status, _ = await asyncio.wait_for(c.get("/healthz"), 10)
            seen[status] += 1
            out.append(time.perf_counter() - t0)
        except (OSError, asyncio.IncompleteReadError, TimeoutError):
            seen["closed"] += 1
            c.close()
        await asyncio.sleep(every)
    c.close()
    return out, seen


async def slowloris(port: int, seconds: float) -> Counter:
    """One connection sending a header byte a second, opened again each time the server closes it."""
    end, seen = time.perf_counter() + seconds, Counter()
    while time.perf_counter() < end:
        try:
            r, w = await asyncio.open_connection("127.0.0.1", port, local_addr=(ATTACKER, 0))
        except OSError:
            seen["refused"] += 1
            await asyncio.sleep(0.1)
            continue
        seen["opened"] += 1
        try:
            w.write(b"GET / HTTP/1.1\r\nHost: x\r\n")
            while time.perf_counter() < end:
                w.write(b"X")
                await w.drain()
                try:
                    data = await asyncio.wait_for(r.read(1024), 1.0)
                    if data.startswith(b"HTTP/1.1 503"):
                        seen["503"] += 1
                    if data == b"" or data.startswith(b"HTTP/1.1 503"):
                        break
                except TimeoutError:
                    pass
        except OSError:
            pass
        finally:
            w.close()
    return seen


async def trickled_body(port: int, seconds: float) -> float:
    """A request promising a 1 GB body, sent a byte every 2 s: how long the server keeps it."""
    r, w = await asyncio.open_connection("127.0.0.1", port, local_addr=(TRICKLER, 0))
    w.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n")
    t0 = time.perf_counter()
    try:
        while time.perf_counter() - t0 < seconds:
            w.write(b"X")
            await w.drain()
            try:
                while await asyncio.wait_for(r.read(65536), 2.0):
                    pass
                return time.perf_counter() - t0  # closed
            except TimeoutError:
                pass
        return float("inf")
    except OSError:
        return time.perf_counter() - t0
    finally:
        w.close()


async def non_reader(port: int, seconds: float, path: str) -> float:
    """Asks for a large response with a tiny receive window and never reads: how long the server keeps it."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.bind((NON_READER, 0))
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    r, w = await asyncio.open_connection(sock=sock)
    w.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\nAccept: application/json\r\n\r\n".encode())
    await asyncio.sleep(seconds)
    # then read what is left, at once: an open connection gives the whole body; a closed one, what the kernel had
    try:
        got = 0
        while chunk := await asyncio.wait_for(r.read(1 << 20), 5):
            got += len(chunk)
    except (OSError, TimeoutError):
        pass
    finally:
        w.close()
    return got


def sockets_of(pid: int) -> int:
    fds = Path(f"/proc/{pid}/fd")
    return sum(1 for fd in fds.iterdir() if fd.is_symlink() and str(fd.readlink()).startswith("socket:"))


async def hold(port: int, pid: int, sockets: int, seconds: float = 30) -> None:
    held = [sockets_of(pid)]

    async def count_later() -> None:
        await asyncio.sleep(seconds - 2)
        held.append(sockets_of(pid))

    base, seen0 = await statuses(port, 3)
    big = "/api/trace?input=777777&model=modern"  # its JSON, uncompressed: 0.74 MB
    async with asyncio.timeout(30):
        full = len((await Connection(port, "Accept-Encoding: identity\r\nAccept: application/json\r\n").get(big))[1])
    print(f"before: /healthz {summary(base)} {dict(seen0)}")
    during, _, *attacks = await asyncio.gather(
        statuses(port, seconds),
        count_later(),
        *[slowloris(port, seconds) for _ in range(sockets)],
        *[trickled_body(port, seconds) for _ in range(40)],
        *[non_reader(port, seconds, big) for _ in range(40)],
    )
    loris, bodies, readers = attacks[:sockets], attacks[sockets : sockets + 40], attacks[sockets + 40 :]
    total = sum(loris, Counter())
    kept = [b for b in bodies if b != float("inf")]
    print(f"{sockets} slowloris sockets from {ATTACKER} for {seconds:.0f} s: {dict(total)}")
    took = f"{min(kept, default=0):.1f}–{max(kept, default=0):.1f} s"
    print(f"40 trickled bodies from {TRICKLER}: {len(kept)} closed (after {took}), {40 - len(kept)} open at the end")
    cut = sum(g < full for g in readers)
    print(f"40 readers from {NON_READER} that never read {full:,} bytes: {cut} cut off before the end")
    print(f"the server's open sockets: {held[0]} before, {held[1]} at {seconds - 2:.0f} s")
    lat, seen = during
    print(f"during, from 127.0.0.1: /healthz {summary(lat)} {dict(seen)}")


async def pages(port: int, seconds: float = 15) -> None:
    async def client(name: str, counter) -> int:
        c, done, end = Connection(port, "Accept-Encoding: br\r\n"), 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            status, _ = await c.get(f"/?{name}={next(counter) % 200 + 10}")  # 200 addresses, each asked often
            done += status == 200
        c.close()
        return done

    for name in ("x", "input"):
        label, counter = f"/?{name}=N", iter(range(10**6))
        (lat, seen), *done = await asyncio.gather(statuses(port, seconds), *[client(name, counter) for _ in range(16)])
        lat.sort()
        print(
            f"16 clients on {label:10s}: {sum(done)} pages in {seconds:.0f} s;  /healthz meanwhile p50 "
            f"{1000 * statistics.median(lat):.1f} ms, p99 {1000 * lat[int(0.99 * (len(lat) - 1))]:.1f} ms {dict(seen)}"
        )


async def memory(port: int, pid: int, inputs: int) -> None:
    print(f"fresh (the 2017 model and its figures loaded): RSS {rss_mb(pid):.0f} MB")
    c = Connection(port, "Accept-Encoding: br\r\n")
    await c.get("/api/trace?input=1&model=modern")
    print(f"both models loaded: RSS {rss_mb(pid):.0f} MB")
    rng = random.Random(23)
    kinds = [
        "",
        "&model=modern",
        "&ablate=dec.1.cross.h3",
        "&ablate=enc.0.ffn,dec.0.self",
        "&checkpoint=100",
        "&checkpoint=4000",
        "&checkpoint=0",
    ]
    t0 = time.perf_counter()
    for i, n in enumerate(rng.sample(range(1_000_000), inputs)):
        status, _ = await c.get(f"/api/trace?input={n}{kinds[i % len(kinds)]}")
        assert status == 200, status
        if (i + 1) % max(1, inputs // 4) == 0:
            print(f"after {i + 1:5d} cold inputs ({time.perf_counter() - t0:5.0f} s): RSS {rss_mb(pid):.0f} MB")
    c.close()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["weights", "flood", "memory", "hold", "pages"])
    p.add_argument("--launcher", choices=["app", "uvicorn"], default="app")
    p.add_argument("--inputs", type=int, default=300, help="cold inputs for `memory`")
    p.add_argument("--sockets", type=int, default=600, help="slowloris sockets for `hold` (one address)")
    p.add_argument("--cache-mb", default=None, help="ANATOMY_CACHE_MB for `memory`")
    p.add_argument(
        "--root",
        type=Path,
        default=None,
        help="serve another checkout (e.g. a `git archive` of the commit before, for the before figures)",
    )
    args = p.parse_args()
    port = free_port()
    env = {"ANATOMY_CACHE_MB": args.cache_mb} if args.cache_mb else {}
    proc = start_server(port, **({"root": args.root} if args.root else {}), env=env, launcher=args.launcher)
    print(f"server: {args.launcher} ({'python -m app' if args.launcher == 'app' else 'uvicorn app.main:app'})")
    try:
        if args.what == "weights":
            asyncio.run(weights(port))
        elif args.what == "flood":
            asyncio.run(flood(port, proc.pid))
        elif args.what == "hold":
            asyncio.run(hold(port, proc.pid, args.sockets))
        elif args.what == "pages":
            asyncio.run(pages(port))
        else:
            asyncio.run(memory(port, proc.pid, args.inputs))
    finally:
        stop(proc)


if __name__ == "__main__":
    main()
