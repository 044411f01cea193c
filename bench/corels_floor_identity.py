"""The CORELS kernels before and after a refactoring: the same answers, the same work, the same speed.

Runs the search on COMPAS (the reference tool's training fold, as ``bench/corels_compas.py``) at
each lambda, for every search policy, every symmetry map and one and two threads, through the
glasswork installed for this interpreter ("new") and through the one of ``--baseline`` ("old",
another interpreter, run as a subprocess like this one's own runs), then compares:

- one thread: the run is deterministic (slices only pause it), so everything must be identical:
  the return code, the objective (bit for bit), the best prefix, every counter, the evaluations
  to the best, the lower bound and the live queue's summary. A run that does not end within
  ``--max-evaluations`` stops at that count of scored prefixes, which is just as deterministic.
- two threads: which worker scores which prefix first depends on the scheduler, so the counters,
  the best prefix among equals and where a capped run stops are not deterministic. What is: a run
  that ends (DONE) has the certified optimum, so the objective must be identical; a capped run
  (NODE_LIMIT) is compared on its code only.
- the Rashomon set (``corels_rashomon.Enumerator``, lower-bound and breadth-first order, with the
  tail table ``TailCounter`` as well) at a few epsilons over the optimum: every count identical,
  and the enumerator's counters too.

Speed: single-threaded lower-bound runs with the prefix map, old and new alternated
``--repeat`` times, evaluations per second of search (each run in a fresh process).

    python bench/corels_floor_identity.py --baseline PATH/TO/BASELINE/venv/bin/python
                [--lambdas 0.015,0.01] [--max-evaluations 300000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# GLASSWORK_DATA, else the shared data sets beside the checkout (a worktree sits one level deeper)
_SHARED = [p / "shared" / "datasets" for p in REPO.parents if (p / "shared" / "datasets").is_dir()]
DATA = Path(os.environ.get("GLASSWORK_DATA", _SHARED[0] if _SHARED else REPO.parent / "shared" / "datasets")) / "corels"
POLICIES = ("bfs", "dfs", "curiosity", "lower_bound", "objective")
MAPS = ("none", "prefix", "captured")
EPSILONS = (0.005, 0.01, 0.02)
SLICE = 0.005


def _engine() -> Any:
    """The search's engine module, where this glasswork has it (the plugin's layout changed)."""
    try:
        from glasswork.plugins.corels.search import engine
    except ImportError:
        from glasswork.plugins.corels import engine  # type: ignore[no-redef]
    return engine


def _rashomon() -> Any:
    try:
        from glasswork.plugins.corels.rashomon import enumeration
    except ImportError:
        from glasswork.plugins.corels import rashomon as enumeration  # type: ignore[no-redef]
    return enumeration


def _units() -> Any:
    from glasswork.data.corels_format import read_corels

    engine = _engine()
    base = str(DATA / "compas_train")
    data = read_corels(base + ".out", base + ".label", base + ".minor")
    return engine.make_units(data.antecedents.bits, data.y, 2)


def _drive(runner: Any, max_evaluations: int, time_limit: float) -> tuple[int, float]:
    """Run slices until the runner ends, the evaluations cap or the time limit; (code, seconds)."""
    import numpy as np

    stop = np.zeros(1, dtype=np.uint8)
    t0 = time.perf_counter()
    c0 = time.process_time()
    while True:
        code = int(runner.run(SLICE, stop, max_evaluations))
        if code != 1:  # SLICE
            break
        if time.perf_counter() - t0 > time_limit:
            code = -1
            break
    _drive.cpu = time.process_time() - c0  # type: ignore[attr-defined]
    return code, time.perf_counter() - t0


def child_search(lam: float, policy: str, symmetry_map: str, threads: int, max_evaluations: int) -> dict[str, Any]:
    engine = _engine()
    search = engine.make_search(_units(), lam, policy=policy, symmetry_map=symmetry_map, threads=threads)
    code, seconds = _drive(search, max_evaluations, 600.0)
    lengths, pairs = search.queue_summary()
    return {
        "code": code,
        "objective": search.objective.hex(),
        "best_prefix": list(search.best_prefix),
        "evaluations_to_best": int(search.evaluations_to_best),
        "lower_bound": float(search.lower_bound()).hex(),
        "counters": {k: int(v) for k, v in search.counters().items()},
        "queue_summary": [sorted(lengths.items()), sorted([list(k), v] for k, v in pairs.items())],
        "seconds": seconds,
        "rate": search.n_evaluated / seconds if seconds > 0 else 0.0,
        "cpu_rate": search.n_evaluated / _drive.cpu if _drive.cpu > 0 else 0.0,  # type: ignore[attr-defined]
    }


def child_rashomon(lam: float, epsilon: float, policy: str) -> dict[str, Any]:
    import numpy as np
    from glasswork.cython_ext import corels_rashomon as enum

    engine, rashomon = _engine(), _rashomon()
    units = _units()
    search = engine.make_search(units, lam)
    engine.run_to_end(search)
    optimum = float(search.objective)
    threshold = (1.0 + epsilon) * optimum
    en = rashomon.make_enumerator(units, lam, threshold, floor=optimum, policy=policy, max_models=100)
    code, _ = _drive(en, -1, 600.0)
    listed = {"code": code, "count": int(en.count), "counters": {k: int(v) for k, v in en.counters().items()}}
    fresh = rashomon.make_enumerator(units, lam, threshold, floor=optimum, policy=policy, max_models=100)
    counter = enum.TailCounter(fresh)
    tcode = int(counter.run(600.0, np.zeros(1, dtype=np.uint8), -1))  # one call: a count does not resume
    table = {"code": tcode, "count": counter.count, "cells": [[e.hex(), n] for e, n in counter.cells()]}
    return {"optimum": optimum.hex(), "threshold": threshold.hex(), "listed": listed, "table": table}


def _child(args: argparse.Namespace) -> None:
    job = json.loads(args.child)
    if job["kind"] == "search":
        out = child_search(job["lam"], job["policy"], job["map"], job["threads"], job["max_evaluations"])
    else:
        out = child_rashomon(job["lam"], job["epsilon"], job["policy"])
    print(json.dumps(out))


def _run(python: str, job: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        [python, str(Path(__file__).resolve()), "--child", json.dumps(job)],
        capture_output=True,
        text=True,
        cwd="/",
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{python} failed on {job}:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _diff(old: dict[str, Any], new: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    out = []
    for key in keys:
        if old.get(key) != new.get(key):
            if isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
                sub = sorted(k for k in set(old[key]) | set(new[key]) if old[key].get(k) != new[key].get(k))
                out.append(f"{key}: " + ", ".join(f"{k} {old[key].get(k)} -> {new[key].get(k)}" for k in sub))
            else:
                out.append(f"{key}: {old.get(key)} -> {new.get(key)}")
    return out


DETERMINISTIC = ("code", "objective", "best_prefix", "evaluations_to_best", "lower_bound", "counters", "queue_summary")


def identity(args: argparse.Namespace, lambdas: list[float]) -> int:
    failures = 0
    print(f"{'lambda':>6} {'policy':>11} {'map':>8} {'thr':>3} {'code':>4} {'evaluated':>10}  verdict")
    for lam in lambdas:
        for policy in POLICIES:
            for smap in MAPS:
                for threads in (1, 2):
                    job = {
                        "kind": "search",
                        "lam": lam,
                        "policy": policy,
                        "map": smap,
                        "threads": threads,
                        "max_evaluations": args.max_evaluations,
                    }
                    old, new = _run(args.baseline, job), _run(sys.executable, job)
                    if threads == 1:
                        diffs = _diff(old, new, DETERMINISTIC)
                    elif old["code"] == 0 or new["code"] == 0:
                        diffs = _diff(old, new, ("code", "objective"))
                    else:
                        diffs = _diff(old, new, ("code",))
                    failures += bool(diffs)
                    verdict = "identical" if not diffs else "DIFFERENT " + "; ".join(diffs)
                    if threads == 2:
                        verdict += " (objective)" if old["code"] == 0 and not diffs else " (code)" if not diffs else ""
                    print(
                        f"{lam:>6} {policy:>11} {smap:>8} {threads:>3} {new['code']:>4} "
                        f"{new['counters']['evaluated']:>10}  {verdict}",
                        flush=True,
                    )
    print()
    print(f"{'lambda':>6} {'order':>11} {'epsilon':>7} {'listed':>8} {'table':>8}  verdict")
    for lam in lambdas[:1]:
        for policy in ("lower_bound", "bfs"):
            for eps in EPSILONS:
                job = {"kind": "rashomon", "lam": lam, "epsilon": eps, "policy": policy}
                old, new = _run(args.baseline, job), _run(sys.executable, job)
                diffs = _diff(old, new, ("optimum", "threshold", "listed", "table"))
                failures += bool(diffs)
                print(
                    f"{lam:>6} {policy:>11} {eps:>7} {new['listed']['count']:>8} {new['table']['count']!s:>8}  "
                    + ("identical" if not diffs else "DIFFERENT " + "; ".join(diffs)),
                    flush=True,
                )
    return failures


def speed(args: argparse.Namespace, lambdas: list[float]) -> None:
    print()
    print(f"speed: lower_bound, prefix map, 1 thread, evaluations per second, {args.repeat} alternated rounds")
    rates: dict[str, dict[str, list[float]]] = {}
    for lam in lambdas:
        job = {
            "kind": "search",
            "lam": lam,
            "policy": "lower_bound",
            "map": "prefix",
            "threads": 1,
            "max_evaluations": args.speed_evaluations,
        }
        for kind in ("rate", "cpu_rate"):
            rates[kind] = {"old": [], "new": []}
        for r in range(args.repeat):
            order = (("old", args.baseline), ("new", sys.executable))
            for name, python in order if r % 2 == 0 else order[::-1]:
                out = _run(python, job)
                for kind in ("rate", "cpu_rate"):
                    rates[kind][name].append(out[kind])
        for kind, label in (("rate", "per wall second"), ("cpu_rate", "per CPU second")):
            for name in ("old", "new"):
                xs = sorted(rates[kind][name])
                runs = " ".join(f"{x:,.0f}" for x in xs)
                print(f"  lambda {lam} {label}: {name} median {xs[len(xs) // 2]:,.0f}  runs {runs}")
            ratio = sorted(rates[kind]["new"])[args.repeat // 2] / sorted(rates[kind]["old"])[args.repeat // 2]
            print(f"  lambda {lam} {label}: new / old (medians) = {ratio:.3f}   load {os.getloadavg()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", help="python of the glasswork to compare with (the code before)")
    ap.add_argument("--lambdas", default="0.015,0.01")
    ap.add_argument("--max-evaluations", type=int, default=300_000, help="cap on scored prefixes per run")
    ap.add_argument("--speed-evaluations", type=int, default=3_000_000, help="scored prefixes per speed run")
    ap.add_argument("--repeat", type=int, default=3, help="alternated rounds of the speed runs")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--speed-only", action="store_true", help="only the speed runs")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        _child(args)
        return
    if not args.baseline:
        ap.error("--baseline is required")
    lambdas = [float(x) for x in args.lambdas.split(",")]
    print(f"load before: {os.getloadavg()}")
    failures = 0 if args.speed_only else identity(args, lambdas)
    if not args.no_speed:
        speed(args, lambdas)
    print(f"load after: {os.getloadavg()}")
    print("all identical" if failures == 0 else f"{failures} configurations DIFFER")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
