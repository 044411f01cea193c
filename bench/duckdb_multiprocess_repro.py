"""Minimal reproducer: several processes sharing one DuckDB file by connect / write / close.

    python bench/duckdb_multiprocess_repro.py [--procs 10] [--rows 60] [--seconds 60] [--file PATH]

This is the run store's old design with nothing of glasswork in it: each worker process loops
``duckdb.connect(file)`` (retrying while another process holds the file's lock), inserts one
row with a unique key, closes, and records the key as acknowledged only after ``close()``
returned without an error. At the end the file is opened once more and checked: every
acknowledged key must be there exactly once, and every table must read to its last block
(``PRAGMA verify_*`` is not enough: a full scan and a ``CHECKPOINT`` read every block).

Variants (``--mode``): ``plain`` (as above), ``checkpoint`` (each writer runs ``CHECKPOINT``
before closing), ``flock`` (each writer first takes an exclusive ``fcntl.flock`` on
``FILE.lock``, so DuckDB never sees two processes open the file at once).

Prints one JSON line: acknowledged, stored, missing, duplicated, lock retries, check errors.
Exit 1 when a commit was lost or the file fails its check.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import multiprocessing
import random
import sys
import tempfile
import time
from pathlib import Path


def worker(path: str, index: int, rows: int, mode: str, deadline: float, out: str) -> None:
    import duckdb

    acknowledged, retries, errors = [], 0, []
    rng = random.Random(index)
    payload = "x" * 2000  # a row big enough that the WAL holds whole blocks
    for n in range(rows):
        if time.time() > deadline:
            break
        key = f"{index}-{n}"
        while True:
            lock = None
            try:
                if mode == "flock":
                    lock = open(path + ".lock", "a")
                    fcntl.flock(lock, fcntl.LOCK_EX)
                con = duckdb.connect(path)
            except duckdb.IOException as exc:
                if lock is not None:
                    lock.close()
                if "lock" in str(exc).lower():
                    retries += 1
                    time.sleep(rng.uniform(0.001, 0.02))
                    continue
                errors.append(f"connect: {str(exc).splitlines()[0]}")
                break
            except duckdb.Error as exc:
                if lock is not None:
                    lock.close()
                errors.append(f"connect: {type(exc).__name__}: {str(exc).splitlines()[0]}")
                break
            try:
                con.execute("CREATE TABLE IF NOT EXISTS t (k VARCHAR, p VARCHAR)")
                con.execute("INSERT INTO t VALUES (?, ?)", [key, payload])
                if mode == "checkpoint":
                    con.execute("CHECKPOINT")
                con.close()
                acknowledged.append(key)
            except duckdb.Error as exc:
                errors.append(f"write: {type(exc).__name__}: {str(exc).splitlines()[0]}")
                try:
                    con.close()
                except duckdb.Error:
                    pass
            finally:
                if lock is not None:
                    lock.close()
            break
    Path(out).write_text(json.dumps({"acknowledged": acknowledged, "retries": retries, "errors": errors}))


def check(path: str) -> tuple[list[str], list[str]]:
    """The stored keys and the errors met reading the whole file."""
    import duckdb

    problems: list[str] = []
    try:
        con = duckdb.connect(path)
    except duckdb.Error as exc:
        return [], [f"open: {type(exc).__name__}: {str(exc).splitlines()[0]}"]
    keys: list[str] = []
    try:
        keys = [r[0] for r in con.execute("SELECT k FROM t").fetchall()]
        con.execute("SELECT sum(length(p)) FROM t").fetchall()  # every block of both columns
        con.execute("CHECKPOINT")  # replays and writes back whatever the WAL still held
    except duckdb.Error as exc:
        problems.append(f"read: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    finally:
        try:
            con.close()
        except duckdb.Error as exc:
            problems.append(f"close: {exc}")
    try:  # and a second, fresh open after the checkpoint
        con = duckdb.connect(path, read_only=True)
        con.execute("SELECT count(*), sum(length(p)) FROM t").fetchall()
        con.close()
    except duckdb.Error as exc:
        problems.append(f"reopen: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    return keys, problems


def main() -> None:
    import duckdb

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--procs", type=int, default=10)
    parser.add_argument("--rows", type=int, default=60, help="rows each process writes (one connection each)")
    parser.add_argument("--seconds", type=float, default=120, help="stop writing after this long")
    parser.add_argument("--mode", choices=("plain", "checkpoint", "flock"), default="plain")
    parser.add_argument("--file", help="the database file (default: a new one in a temporary folder)")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="duckdb-repro-"))
    path = args.file or str(folder / "shared.duckdb")
    deadline = time.time() + args.seconds
    started = time.monotonic()
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=worker, args=(path, i, args.rows, args.mode, deadline, str(folder / f"w{i}.json")))
        for i in range(args.procs)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    acknowledged: list[str] = []
    retries, errors = 0, []
    for i in range(args.procs):
        out = folder / f"w{i}.json"
        if not out.exists():
            errors.append(f"worker {i} died")
            continue
        doc = json.loads(out.read_text())
        acknowledged += doc["acknowledged"]
        retries += doc["retries"]
        errors += doc["errors"]
    keys, problems = check(path)
    stored = set(keys)
    missing = sorted(set(acknowledged) - stored)
    duplicated = len(keys) - len(stored)
    report = {
        "duckdb": duckdb.__version__,
        "python": sys.version.split()[0],
        "mode": args.mode,
        "procs": args.procs,
        "acknowledged": len(acknowledged),
        "stored": len(keys),
        "missing": len(missing),
        "missing_sample": missing[:5],
        "duplicated": duplicated,
        "lock_retries": retries,
        "writer_errors": len(errors),
        "writer_error_sample": sorted(set(errors))[:4],
        "check_problems": problems,
        "seconds": round(time.monotonic() - started, 1),
        "file": path,
    }
    print(json.dumps(report))
    sys.exit(1 if missing or problems or duplicated else 0)


if __name__ == "__main__":
    main()
