"""The CORELS Rashomon count on COMPAS beside its anchors: the present counter and the known sizes.

For each epsilon the set of ``compas_train`` at lambda ``--lam`` is counted by the tail table
alone (``TailCounter`` on one thread, or ``TableCount`` on ``--threads`` threads sharing one memo),
each count in a fresh process so its peak memory is its own: this tree's counter, and, where the
anchor is given and feasible (``--anchor-epsilons``), the same count by another install's code
(``--anchor-python``: an install of the present counter, e.g. a worktree of main with its own
venv; without it only this tree's counts are printed). Old and new alternate, ``--repeat`` times.
Each line prints the count beside the expected size (the enumerator's and main's figures,
docs/maintainers/corels-rashomon-count.md), CPU seconds (the certified search, about a second,
included), wall seconds, peak RSS, tables stored, the memo's peak and rules scored.

    python bench/corels_rashomon_count.py [--epsilons 0.01,0.02,0.03,0.05] [--anchor-epsilons 0.01,0.02,0.03]
                                          [--threads 1] [--repeat 1] [--time-limit 3000]
                                          [--anchor-python PATH/TO/OTHER/venv/bin/python]
                                          [--from-thread] [--without-tail-table]

``--from-thread`` runs each count twice, alternated: from the process's main thread and from
another thread, as a Dask task runs it (``counter`` then says which). They should take the same
time: when a counter's hot fields shared a cache line with the next counter's, the count from
another thread took 5 % longer (docs/maintainers/corels-rashomon-count.md, "On a Dask cluster").
``--without-tail-table`` runs each count again with the search's tail table switched off
(``ablation: [tail_table]``), beside the count that reads it.

The machine is shared: read the CPU time and the counts; the load is printed with each line.
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

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("GLASSWORK_DATA", HERE.parent.parent / "shared" / "datasets")) / "corels"
# the sizes the present counter gave (docs/maintainers/corels-measurements.md, corels-rashomon-count.md)
EXPECTED = {0.0: 2, 0.01: 226, 0.015: 1094, 0.02: 2456, 0.03: 42144, 0.05: 2159467}


def child(
    lam: float, epsilon: float, threads: int, time_limit: float, from_thread: bool = False, no_tail_table: bool = False
) -> None:
    """One count, measured from inside the process (from another thread with ``from_thread``);
    prints one JSON line. Uses only what both the present counter and this tree's have (so
    main's install runs it too)."""
    if from_thread:
        import threading

        worker = threading.Thread(target=child, args=(lam, epsilon, threads, time_limit, False, no_tail_table))
        worker.start()
        worker.join()
        return
    import resource

    import numpy as np
    from glasswork.cython_ext import bitset
    from glasswork.cython_ext import corels_rashomon as cr
    from glasswork.data.corels_format import read_corels
    from glasswork.plugins.corels.rashomon import enumeration as rashomon
    from glasswork.plugins.corels.search import engine

    base = str(DATA / "compas_train")
    data = read_corels(base + ".out", base + ".label", base + ".minor")
    X = np.ascontiguousarray(data.antecedents.matrix())
    units = engine.make_units(bitset.pack_rows(np.ascontiguousarray(X.T.astype(np.uint8))), data.y, 2)
    c0, w0 = time.process_time(), time.perf_counter()
    search = engine.make_search(units, lam)
    engine.run_to_end(search)
    optimum = float(search.objective)
    ablation = ["tail_table"] if no_tail_table else []
    en = rashomon.make_enumerator(units, lam, (1 + epsilon) * optimum, floor=optimum, max_models=0, ablation=ablation)
    if threads > 1:
        table = rashomon.TableCount(en, 2 << 30, threads)
        table.join(time_limit)
        table.stop()
        table.join()
        count, code, counters = table.count, table.code, table.counters_summed()
    else:
        if hasattr(en, "build_tail_table"):  # as TableCount does (the present counter has no tail table)
            en.build_tail_table(1)
        counter = cr.TailCounter(en, 2 << 30)
        code = counter.run(time_limit, np.zeros(1, np.uint8))
        count, counters = counter.count, counter.counters()
    out: dict[str, Any] = {
        "python": sys.executable,
        "epsilon": epsilon,
        "threads": threads,
        "optimum": optimum,
        "count": count,
        "done": code == cr.DONE,
        "cpu_s": time.process_time() - c0,
        "wall_s": time.perf_counter() - w0,
        "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "load": os.getloadavg()[0],
        "tables": counters.get("memo_entries_stored"),
        "memo_peak": counters.get("memo_peak_bytes"),
        "scored": counters.get("count_evaluated"),
        "pruned_one_rule": counters.get("count_pruned_one_rule"),
        "pruned_tail_table": counters.get("count_pruned_tail_table"),
    }
    print(json.dumps(out))


def run(
    python: str, a: argparse.Namespace, epsilon: float, from_thread: bool = False, no_tail_table: bool = False
) -> dict[str, Any]:
    args = [python, __file__, "--child", "--lam", str(a.lam), "--epsilon", str(epsilon)]
    args += ["--threads", str(a.threads), "--time-limit", str(a.time_limit)] + (["--in-thread"] if from_thread else [])
    args += ["--no-tail-table"] if no_tail_table else []
    done = subprocess.run(args, capture_output=True, text=True, timeout=a.time_limit * 3 + 300)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def line(label: str, epsilon: float, r: dict[str, Any]) -> str:
    if "error" in r:
        return f"| {epsilon} | {label} | failed: {r['error']} |"
    expected = EXPECTED.get(epsilon)
    count = r["count"]
    verdict = "" if expected is None else (" = expected" if count == expected else f" != expected {expected:,}")
    shown = f"{count:,}{verdict}" if count is not None else f"no count (stopped; expected {expected})"
    return (
        f"| {epsilon} | {label} | {shown} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | {r['peak_rss'] / 2**20:.0f} MB "
        f"| {r['tables'] or 0:,} | {(r['memo_peak'] or 0) / 2**20:.0f} MB | {r['scored'] or 0:,} "
        f"| {r.get('pruned_tail_table') or 0:,} | {r['load']:.1f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lam", type=float, default=0.01)
    ap.add_argument("--epsilons", default="0.01,0.02,0.03,0.05")
    ap.add_argument("--anchor-epsilons", default="0.01,0.02,0.03", help="where the present counter runs too")
    ap.add_argument("--anchor-python", default=None, help="the present code's python")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=3000.0, help="each count's wall-clock limit")
    ap.add_argument("--from-thread", action="store_true", help="each count also from a thread not the main one")
    ap.add_argument(
        "--without-tail-table", action="store_true", help="each count also with the search's tail table switched off"
    )
    ap.add_argument("--no-tail-table", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--in-thread", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--epsilon", type=float, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.lam, a.epsilon, a.threads, a.time_limit, a.in_thread, a.no_tail_table)
        return
    if not (DATA / "compas_train.out").exists():
        sys.exit(f"no COMPAS files under {DATA} (set GLASSWORK_DATA)")
    anchors = {float(x) for x in a.anchor_epsilons.split(",") if x}
    if a.anchor_python is not None and not Path(a.anchor_python).exists():
        sys.exit(f"--anchor-python: no interpreter at {a.anchor_python}")
    have_anchor = a.anchor_python is not None
    print(f"lambda {a.lam}, {a.threads} thread(s); new: {sys.executable}; present: {a.anchor_python or 'not given'}")
    print(
        "| epsilon | counter | count | CPU s | wall s | peak RSS | tables stored | memo peak | rules scored "
        "| children cut by the tail table | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for eps in (float(x) for x in a.epsilons.split(",")):
        for _ in range(a.repeat):  # alternated: the load drifts
            if have_anchor and eps in anchors:
                print(line("present", eps, run(a.anchor_python, a, eps)), flush=True)
            print(line("new", eps, run(sys.executable, a, eps)), flush=True)
            if a.without_tail_table:
                print(line("new, no tail table", eps, run(sys.executable, a, eps, no_tail_table=True)), flush=True)
            if a.from_thread:
                print(line("new, from a thread", eps, run(sys.executable, a, eps, from_thread=True)), flush=True)


if __name__ == "__main__":
    main()
