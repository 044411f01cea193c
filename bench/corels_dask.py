"""One CORELS search on COMPAS: one process against ``dask:local`` workers (issue 27 item 2).

Per λ, figures of the same certified search, each with its evaluations, wall and CPU time:

- ``one process``: the single-threaded search, as ``glasswork run`` drives it;
- ``split, no delay``: the driver's subtrees searched in this one process, round-robin in 5 ms
  slices, the incumbent passed between them after every slice (``search_split_here``): what
  splitting costs with no network at all (each subtree has its own symmetry map);
- ``dask:local N``: the real driver on a LocalCluster of N one-thread worker processes;

and the inputs of the paper model in docs/maintainers/corels-measurements.md: the per-worker rate
(evaluations per second of one process), the incumbent delay (a round trip of the Dask Variable and Queue the tasks use)
and the re-split cost (``take`` + ``seed`` of 20,000 prefixes, per prefix).

    python bench/corels_dask.py [--lambdas 0.01,0.005] [--workers 2] [--split-parts 4,8,16]

The machine is shared; say how loaded it was when quoting the wall times. Evaluations are the
steady figure.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("GLASSWORK_DATA", REPO.parent / "shared" / "datasets")) / "corels"


def units_of_compas() -> Any:
    from glasswork.data.corels_format import read_corels
    from glasswork.plugins.corels.search import engine

    base = str(DATA / "compas_train")
    data = read_corels(base + ".out", base + ".label", base + ".minor")
    return engine.make_units(data.antecedents.bits, data.y, 2)


def one_process(units: Any, lam: float) -> dict[str, Any]:
    from glasswork.plugins.corels.search import engine

    search = engine.make_search(units, lam)
    t, cpu = time.perf_counter(), time.process_time()
    engine.run_to_end(search)
    return {
        "objective": search.objective,
        "evaluations": search.n_evaluated,
        "seconds": time.perf_counter() - t,
        "cpu": time.process_time() - cpu,
    }


def split_no_delay(units: Any, lam: float, parts: int) -> dict[str, Any]:
    """The driver's first split, its subtrees interleaved here with an instant incumbent."""
    from glasswork.plugins.corels.cluster.search import search_split_here

    t, cpu = time.perf_counter(), time.process_time()
    objective, _, evaluations = search_split_here(units, lam, {"threads": 1}, parts)
    return {
        "objective": objective,
        "evaluations": evaluations,
        "seconds": time.perf_counter() - t,
        "cpu": time.process_time() - cpu,
    }


def on_dask(units: Any, lam: float, workers: int, address: str) -> dict[str, Any]:
    from distributed import Client
    from glasswork.contract.solver import ClusterExecutor, SolveContext
    from glasswork.plugins.corels.cluster.search import run_distributed

    ctx = SolveContext(executor=ClusterExecutor(address, workers))
    with Client(address) as client:  # CPU seconds: the driver's and every worker process's
        before = sum(client.run(time.process_time).values())
        t, cpu = time.perf_counter(), time.process_time()
        out = run_distributed(
            units, lam, {"threads": 1}, ctx, lambda *incumbent: None, lambda *progress: None, progress_interval=1e9
        )
        seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
        cpu += sum(client.run(time.process_time).values()) - before
    return {
        "objective": out.objective,
        "evaluations": out.stats["evaluated"],
        "seconds": seconds,
        "cpu": cpu,
        "status": out.status.value,
        "subtrees": out.stats["subtrees"],
        "splits": out.stats["splits"],
    }


def incumbent_delay(address: str, rounds: int = 200) -> float:
    """Seconds of one task's sync: a Variable read and a Queue put through the scheduler."""
    from distributed import Client, Queue, Variable

    with Client(address) as client:
        var, queue = Variable("bench-var", client=client), Queue("bench-queue", client=client)
        var.set((0.5, [1, 2, 3]))
        t = time.perf_counter()
        for _ in range(rounds):
            var.get()
            queue.put(("status", 0, 0.5, 1))
        elapsed = time.perf_counter() - t
        queue.get(batch=True)
    return elapsed / rounds


def resplit_cost(units: Any, lam: float, k: int = 20000) -> float:
    """Seconds per prefix to take ``k`` open prefixes from a grown queue and seed them elsewhere."""
    from glasswork.plugins.corels.search import engine

    search = engine.make_search(units, lam)
    stop = np.zeros(1, dtype=np.uint8)
    while search.queue_size < 2 * k and not search.done:
        search.run(0.01, stop, -1)
    t = time.perf_counter()
    taken = search.take(k)
    other = engine.make_search(units, lam)
    other.seed([p for p, _ in taken])
    return (time.perf_counter() - t) / max(1, len(taken))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lambdas", default="0.01,0.005")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--split-parts", default="", help="also the split searched here in these many subtrees, e.g. 4,8,16"
    )
    args = ap.parse_args()
    from distributed import LocalCluster

    units = units_of_compas()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        address = cluster.scheduler_address
        delay = incumbent_delay(address)
        print(f"incumbent delay (Variable get + Queue put): {delay * 1e3:.2f} ms")
        for lam in (float(x) for x in args.lambdas.split(",")):
            one = one_process(units, lam)
            rate = one["evaluations"] / one["seconds"]
            print(f"lambda {lam}: per-worker rate {rate / 1e6:.2f} M evaluations/s")
            print(f"  re-split cost: {resplit_cost(units, lam) * 1e6:.2f} us per prefix")
            rows = [
                ("one process", one),
                (f"split, no delay ({args.workers})", split_no_delay(units, lam, args.workers)),
                (f"dask:local {args.workers}", on_dask(units, lam, args.workers, address)),
            ]
            rows += [
                (f"split, no delay ({p})", split_no_delay(units, lam, int(p))) for p in args.split_parts.split(",") if p
            ]
            for name, row in rows:
                ratio = row["evaluations"] / one["evaluations"]
                extra = {k: v for k, v in row.items() if k not in ("objective", "evaluations", "seconds", "cpu")}
                print(
                    f"  {name:24s} objective {row['objective']:.6f}  evaluations {row['evaluations']:>11,d} "
                    f"({ratio:.3f}x)  {row['seconds']:7.2f} s wall  {row['cpu']:7.2f} s CPU  {extra or ''}"
                )
        print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
