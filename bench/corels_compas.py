"""Certify CORELS on the COMPAS fold of the reference tool, λ by λ, the way the solver runs it.

Each (λ, threads) pair runs in a fresh process so its peak memory is its own. The search is driven
exactly as ``glasswork run`` drives it: slices of 5 ms, and between slices the limit checks (stop
flag, time, resident memory read from /proc) and, every ``--progress`` seconds, the solver's own
progress report (lower bound, queue histograms, Theorem 7's remaining space, memory). Printed per
λ and thread count: certified or not, objective, lower bound, wall and CPU time of the search, peak
resident memory, prefixes evaluated, evaluations per second, and the share of the search's wall
time spent outside the compiled search (progress and checks). The rate over the run (evaluations
per second and queue size, sampled every few seconds) follows the table.

    python bench/corels_compas.py [--lambdas 0.015,0.01,0.005,0.0025] [--threads 1 2]
                                  [--time-limit 120] [--progress 0.25]
                                  [--bounds default,no-similar_support]
                                  [--spill BYTES] [--bound-every N] [--max-evaluations N]
                                  [--python OTHER_PYTHON]
                                  [--cpp-corels PATH/TO/corels] [--cpp-time-limit 1800]
                                  [--cpp-memory-limit 8]

``--bounds`` lists configurations to compare (issue 13 item 5): ``default``, or ``/``-joined
switches ``no-name`` that switch a default bound off (engine.ABLATIONS), e.g.
``no-similar_support/no-lookahead``.

The lower bound's progress is deterministic on one thread: ``--bound-every N`` records, every N
prefixes scored, the lower bound, the CPU time, the queue in RAM and on disk and the map, and
prints them after the table; ``--max-evaluations`` stops each run there (not certified). With
``--python`` the runs use another interpreter's glasswork (e.g. main's install: the code before a
change), so two builds are compared on the same figures, one run after the other.

The machine is shared: wall times are noisy, CPU time and evaluations/s are the steadier figures.
``cores`` is search CPU time over search wall time: the cores the run actually obtained (with two
threads on a loaded machine it can stay near one, and then no wall-time speedup is possible), and
the load average is printed with every row. With several threads the detail lines split the
workers' time into scoring (no lock), waiting for the queue lock, holding it and idling.
With ``--cpp-corels PATH`` the reference C++ CORELS (built without GMP by
``bench/peers/build_cpp_corels.sh``; run by ``bench/peers/cpp_corels.py``) runs once per λ, just
before glasswork's rows of that λ, on the same three files with the same λ, the lower bound policy,
the prefix permutation map and a node cap that never binds; each glasswork row carries its status
(``yes`` when its queue emptied, ``stopped at N s`` at ``--cpp-time-limit``), its whole-process
wall time and peak memory, and the ratios ``x wall`` (its wall over glasswork's search wall; ``>``
or ``<`` when one side stopped at its limit), ``x cpu`` (its user + system CPU time, from GNU
``time``, over the search's CPU time: the steadier figure on a shared machine) and ``x mem`` (its
peak over glasswork's, which includes about 54 MB of interpreter, numpy and data). A warning
follows a row whose certified objective differs from the tool's by more than 1e-6. The tool is
single-threaded: it runs once per λ whatever ``--threads`` says; the search's wall and CPU do not
include reading the data (``prepare`` below the table), the tool's include parsing its text files
(its own "total time", printed below the table, does not). Without ``--cpp-corels`` the C++ columns hold the figures of
PEER-FIGURES.md, marked ``*`` and said to be not measured in this run, and no ratio.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from glasswork.quoting import printable, shell_command

sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))

import cpp_corels  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("GLASSWORK_DATA", REPO.parent / "shared" / "datasets")) / "corels"
# The reference C++ tool's wall s and peak MB as PEER-FIGURES.md gives them for this machine class:
# printed only without --cpp-corels, and labelled as not measured in this run.
PEER_FIGURES = {0.015: (0.68, 5.4), 0.01: (18.9, 49.0), 0.005: (256.0, 606.0)}
OBJECTIVES_AGREE = 1e-6


class _Sink:
    """Stands in for the runner's context: takes the progress report and drops it."""

    def progress(self, **figures: Any) -> None:
        self.last = figures


def child(
    lam: float,
    threads: int,
    time_limit: float,
    progress_every: float,
    bounds: str = "default",
    spill: int = 0,
    map_budget: int = -1,
    bound_every: int = 0,
    max_evaluations: int = -1,
) -> None:
    """One certification, measured from inside the process; prints one JSON line."""
    import resource
    import tempfile

    import numpy as np
    from glasswork.cython_ext import corels as kernel
    from glasswork.data.corels_format import read_corels
    from glasswork.memory import resident_memory
    from glasswork.plugins.corels.search import engine, one_process

    base = str(DATA / "compas_train")
    t1 = time.perf_counter()
    data = read_corels(base + ".out", base + ".label", base + ".minor")
    units = engine.make_units(data.antecedents.bits, data.y, 2)
    kw: dict[str, Any] = {"threads": threads} if threads != 1 else {}
    if bounds != "default":
        kw["ablation"] = {name.removeprefix("no-"): not name.startswith("no-") for name in bounds.split("/")}
    search = engine.make_search(units, lam, **kw)
    spill_dir = tempfile.TemporaryDirectory(prefix="glasswork-bench-spill-")
    if spill > 0:  # as the solver spills (the map held at half the budget), or with --map-budget
        search.set_spill(spill_dir.name, spill, map_budget=spill // 2 if map_budget < 0 else map_budget)
    t_prep = time.perf_counter() - t1
    M = len(data.antecedents.names)
    stop = np.zeros(1, dtype=np.uint8)
    sink = _Sink()
    samples = []
    outside = 0.0
    load_before = os.getloadavg()[0]
    t3 = time.perf_counter()
    c3 = time.process_time()
    last_progress = -1.0
    last_sample = 0.0
    code = None
    mark = bound_every if bound_every > 0 else -1
    marks = []  # the lower bound's progress: (evaluations, bound, cpu s, queue, on disk, map, rss)
    while True:
        caps = [x for x in (mark, max_evaluations) if x > 0]
        code = search.run(one_process.SLICE_SECONDS, stop, min(caps) if caps else -1)
        ta = time.perf_counter()
        if code == kernel.NODE_LIMIT:  # a mark or the cap: deterministic on one thread
            ev = search.n_evaluated
            if 0 < mark <= ev:
                marks.append(
                    (ev, search.lower_bound(), time.process_time() - c3, search.queue_size)
                    + (search.spilled_size, search.counters()["map"], resident_memory())
                )
                mark += bound_every
            if 0 < max_evaluations <= ev:
                code = None
                break
            code = kernel.SLICE
        if code != kernel.SLICE:
            break
        elapsed = ta - t3
        resident_memory()  # what ctx.check reads every slice under a memory limit
        if elapsed >= time_limit:
            code = None
            break
        if elapsed - last_progress >= progress_every:
            last_progress = elapsed
            one_process.report_progress(sink, search, M)
        if elapsed - last_sample >= 5.0:
            last_sample = elapsed
            samples.append((round(elapsed, 1), search.n_evaluated, search.queue_size))
            if spill > 0:
                print(
                    json.dumps(
                        {
                            "t": round(elapsed, 1),
                            "evaluated": search.n_evaluated,
                            "queue": search.queue_size,
                            "spilled": search.spilled_size,
                            "spill_bytes": search.spill_bytes,
                            "rss": resident_memory(),
                            "lower_bound": search.lower_bound(),
                            "objective": search.objective,
                            "memory": search.memory_breakdown(),
                        }
                    ),
                    file=sys.stderr,
                    flush=True,
                )
        outside += time.perf_counter() - ta
    t_search = time.perf_counter() - t3
    cpu_search = time.process_time() - c3
    samples.append((round(t_search, 1), search.n_evaluated, search.queue_size))
    load_after = os.getloadavg()[0]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    c = search.counters()
    spilled_at_end = (search.spilled_size, search.spill_bytes)
    spill_dir.cleanup()
    print(
        json.dumps(
            {
                "lambda": lam,
                "threads": threads,
                "bounds": bounds,
                "certified": code == 0,
                "objective": search.objective,
                "lower_bound": search.objective if code == 0 else min(search.lower_bound(), search.objective),
                "rules": [data.antecedents.names[i] for i in search.best_prefix],
                "prepare_s": t_prep,
                "search_s": t_search,
                "search_cpu_s": cpu_search,
                "outside_s": outside,
                "time_to_optimum_s": search.time_to_best,
                "peak_rss": peak,
                "search_bytes": search.memory_bytes(),
                "memory": search.memory_breakdown(),
                "evaluated": c["evaluated"],
                "inserted": c["inserted"],
                "max_queue": c["max_queue"],
                "max_trie": c["max_trie"],
                "map": c["map"],
                "max_depth": c["max_depth_evaluated"],
                "pruned_similar": c.get("pruned_similar_support", 0),
                "samples": samples,
                "load": (load_before, load_after),
                "thread_times": search.thread_times(),
                "threads_run": search.threads,
                "spill": {k: c[k] for k in ("spills", "reloads", "spilled", "max_spilled", "max_spill_bytes")},
                "spilled_at_end": spilled_at_end,
                "bound_marks": marks,
                "pruned_reorder": c["pruned_reorder"],
                "tail_table": {k: v for k, v in c.items() if "tail_table" in k},
            }
        )
    )


def peer_cells(lam: float, r: dict[str, Any], cpp: cpp_corels.CppRun | None) -> str:
    """The C++ columns of one glasswork row: the tool measured in this run and the ratios, or
    without --cpp-corels the PEER-FIGURES.md numbers (marked *) and no ratios."""
    if cpp is None:
        peer_s, peer_mb = PEER_FIGURES.get(lam, (float("nan"), float("nan")))
        return f"{'PEER-FIGURES*':>17} {peer_s:>7.2f}* {peer_mb:>6.1f}* {'-':>7} {'-':>6} {'-':>6}"
    cpp_at_limit = cpp.status.startswith("stopped") or cpp.status == "node cap"
    if cpp.certified:
        status = "yes"
    elif cpp_at_limit:
        status = cpp.status
    else:  # the message in full below the table
        status = "out of memory" if cpp.status.startswith("out of memory") else "failed (below)"
    if cpp.certified and r["certified"]:
        bound = ""
    elif cpp.certified:  # glasswork stopped at its limit: it would have taken longer
        bound = "<"
    elif cpp_at_limit and r["certified"]:
        bound = ">"
    else:  # both stopped (only their limits' ratio), or the tool failed
        bound = "-"
    wall = "-" if bound == "-" else f"{bound}{cpp.wall_s / max(r['search_s'], 1e-9):.1f}"
    cpu = "-" if bound == "-" or math.isnan(cpp.cpu_s) else f"{bound}{cpp.cpu_s / max(r['search_cpu_s'], 1e-9):.1f}"
    mem = f"{cpp.peak_rss / r['peak_rss']:.2f}" if cpp.peak_rss > 0 else "-"
    peak = f"{cpp.peak_rss / 2**20:.1f}" if cpp.peak_rss > 0 else "-"
    return f"{status:>17} {cpp.wall_s:>8.2f} {peak:>7} {wall:>7} {cpu:>6} {mem:>6}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lambdas", default="0.015,0.01,0.005,0.0025")
    ap.add_argument("--threads", nargs="+", default=["1"], help="thread counts, e.g. --threads 1 2 (or 1,2)")
    ap.add_argument("--time-limit", type=float, default=300.0, help="search seconds per run")
    ap.add_argument("--progress", type=float, default=0.25, help="seconds between reports")
    ap.add_argument(
        "--bounds",
        default="default",
        help="comma-separated configurations: default, or /-joined no-NAME switches "
        "(NAME from engine.ABLATIONS: that bound off)",
    )
    ap.add_argument(
        "--spill", type=int, default=0, help="bytes of search memory past which the queue spills to disk (0: off)"
    )
    ap.add_argument(
        "--map-budget",
        type=int,
        default=-1,
        help="with --spill: map bytes past which it takes no new class "
        "(default: half of --spill, as the solver; 0: no limit)",
    )
    ap.add_argument("--bound-every", type=int, default=0, help="record the lower bound every N evaluations")
    ap.add_argument("--max-evaluations", type=int, default=-1, help="stop each run after N evaluations")
    ap.add_argument("--python", default=sys.executable, help="the interpreter (and so the build) of the runs")
    ap.add_argument(
        "--cpp-corels",
        default=None,
        help="the reference C++ CORELS binary (bench/peers/build_cpp_corels.sh): run once per lambda, "
        "measured beside glasswork's rows",
    )
    ap.add_argument("--cpp-time-limit", type=float, default=1800.0, help="wall seconds per C++ CORELS run")
    ap.add_argument(
        "--cpp-memory-limit", type=float, default=8.0, help="GiB of address space per C++ CORELS run (0: none)"
    )
    ap.add_argument("--child", type=float, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(
            args.child,
            int(args.threads[0]),
            args.time_limit,
            args.progress,
            args.bounds,
            args.spill,
            args.map_budget,
            args.bound_every,
            args.max_evaluations,
        )
        return
    if not (DATA / "compas_train.out").exists():
        sys.exit(f"COMPAS files not found under {DATA}; set GLASSWORK_DATA")
    if args.cpp_corels is not None and not os.access(args.cpp_corels, os.X_OK):
        sys.exit(
            f"--cpp-corels: no executable at {printable(args.cpp_corels)}; build it with "
            "bash bench/peers/build_cpp_corels.sh CORELS_SOURCE_TREE OUTPUT_DIR"
        )
    if args.cpp_time_limit <= 0 or args.cpp_memory_limit < 0:
        sys.exit("--cpp-time-limit must be above 0 seconds and --cpp-memory-limit at least 0 GiB (0: no limit)")
    if args.cpp_corels is not None and not cpp_corels.GNU_TIME.exists():
        sys.exit(f"--cpp-corels: {cpp_corels.GNU_TIME} (GNU time) measures its peak memory; apt-get install time")
    print(
        f"CORELS on {DATA / 'compas_train'} (lower bound policy, prefix map, progress every "
        f"{args.progress} s, search limit {args.time_limit} s; shared 2-core machine: wall times "
        f"taken under load)"
    )
    print(
        f"{'lambda':>7} {'thr':>3} {'bounds':>14} {'cert':>5} {'objective':>10} {'bound':>10} {'wall s':>8} "
        f"{'cpu s':>8} {'peak MB':>8} {'evaluated':>14} {'eval/s':>11} {'outside':>8} "
        f"{'cores':>5} {'load':>9} {'inserted':>12} {'C++':>17} {'C++ s':>8} {'C++ MB':>7} {'x wall':>7} "
        f"{'x cpu':>6} {'x mem':>6}"
    )
    if args.cpp_corels is None:
        print(
            "(C++ s and C++ MB are from PEER-FIGURES.md, NOT measured in this run; --cpp-corels PATH measures "
            "them; no ratios without it)"
        )
    else:
        print(
            "(C++: the reference tool measured in this run, once per lambda before glasswork's rows; "
            "x wall = its whole-process wall / glasswork's search wall, x cpu = its CPU / glasswork's "
            "search CPU, x mem = its peak / glasswork's peak)"
        )
    rows = []
    peers: list[tuple[float, cpp_corels.CppRun]] = []
    for lam in [float(x) for x in args.lambdas.split(",")]:
        cpp = None
        if args.cpp_corels is not None:
            print(f"  (C++ CORELS at lambda {lam}, at most {args.cpp_time_limit:g} s)", file=sys.stderr, flush=True)
            cpp = cpp_corels.run(
                Path(args.cpp_corels),
                lam,
                DATA / "compas_train",
                args.cpp_time_limit,
                int(args.cpp_memory_limit * 2**30),
            )
            peers.append((lam, cpp))
        for threads, bounds in [
            (int(t), b) for arg in args.threads for t in arg.split(",") if t for b in args.bounds.split(",")
        ]:
            out = subprocess.run(
                [
                    args.python,
                    __file__,
                    "--child",
                    str(lam),
                    "--threads",
                    str(threads),
                    "--time-limit",
                    str(args.time_limit),
                    "--progress",
                    str(args.progress),
                    "--bounds",
                    bounds,
                    "--spill",
                    str(args.spill),
                    "--map-budget",
                    str(args.map_budget),
                    "--bound-every",
                    str(args.bound_every),
                    "--max-evaluations",
                    str(args.max_evaluations),
                ],
                capture_output=True,
                text=True,
            )
            if out.returncode != 0:
                print(f"{lam:>7} {threads:>3} {bounds} failed: {out.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(r)
            rate = r["evaluated"] / max(r["search_s"], 1e-9)
            short = "/".join(
                ("-" if b.startswith("no-") else "") + "".join(w[0] for w in b.removeprefix("no-").split("_"))
                for b in bounds.split("/")
            )
            print(
                f"{lam:>7} {threads:>3} {short:>14} {str(r['certified']):>5} {r['objective']:>10.6f} "
                f"{r['lower_bound']:>10.6f} {r['search_s']:>8.2f} {r['search_cpu_s']:>8.2f} "
                f"{r['peak_rss'] / 2**20:>8.1f} {r['evaluated']:>14,} {rate:>11,.0f} "
                f"{r['outside_s'] / max(r['search_s'], 1e-9):>8.2%} "
                f"{r['search_cpu_s'] / max(r['search_s'], 1e-9):>5.2f} "
                f"{r['load'][0]:>4.1f}-{r['load'][1]:<4.1f} {r['inserted']:>12,} {peer_cells(lam, r, cpp)}",
                flush=True,
            )
            if cpp is not None and cpp.certified and r["certified"]:
                if abs(cpp.objective - r["objective"]) > OBJECTIVES_AGREE:
                    print(
                        f"  WARNING: lambda {lam}: glasswork's objective {r['objective']:.10f} differs from C++ "
                        f"CORELS' {cpp.objective:.10f} by {abs(cpp.objective - r['objective']):.2e}",
                        flush=True,
                    )
    print()
    for lam, cpp in peers:
        finished = (
            f"objective {cpp.objective:.10f}, wall {cpp.wall_s:.2f} s (its own total time {cpp.own_time_s:.2f} s, "
            f"after reading its input), CPU {cpp.cpu_s:.2f} s, num_evaluated {cpp.evaluated:,}"
            if cpp.evaluated >= 0
            else f"wall {cpp.wall_s:.2f} s"
        )
        peak = f"{cpp.peak_rss / 2**20:.1f} MB" if cpp.peak_rss > 0 else "not reported"
        print(
            f"C++ CORELS lambda={lam}: {printable(cpp.status)}, {finished}, peak {peak}, "
            f"load {cpp.load[0]:.1f}-{cpp.load[1]:.1f}"
        )
        if cpp.rules:
            print("  list: " + "; ".join(printable(rule) for rule in cpp.rules))
        print(f"  command: {shell_command(cpp.command)}")
    for r in rows:
        print(
            f"lambda={r['lambda']} threads={r['threads']} bounds={r['bounds']} (pruned by "
            f"Theorem 18: {r['pruned_similar']:,}): rules {r['rules']}; prepare "
            f"{r['prepare_s']:.2f} s; inserted {r['inserted']:,}, max queue {r['max_queue']:,}, "
            f"max trie {r['max_trie']:,}, map {r['map']:,}, search containers "
            f"{r['search_bytes'] / 2**20:.0f} MB, deepest prefix {r['max_depth']}"
        )
        m = r["memory"]
        print(
            f"  search bytes per queued prefix {r['search_bytes'] / max(r['max_queue'], 1):.1f}: trie "
            f"{m['trie'] / 2**20:.0f} MB ({m['node_bytes']} B a node), map slots {m['map_slots'] / 2**20:.0f} MB, "
            f"map records {m['map_records'] / 2**20:.0f} MB (tail {m['record_tail_bytes']} B), queue "
            f"{m['queue'] / 2**20:.0f} MB at the end"
        )
        if r["spill"]["spills"]:
            sp = r["spill"]
            print(
                f"  spilled: {sp['spills']} spills, {sp['reloads']} buckets back, {sp['spilled']:,} prefixes "
                f"written, at most {sp['max_spilled']:,} on disk ({sp['max_spill_bytes'] / 2**20:.0f} MB); "
                f"at the end {r['spilled_at_end'][0]:,} ({r['spilled_at_end'][1] / 2**20:.0f} MB)"
            )
        tt = r["tail_table"]
        if tt.get("tail_table_blocks"):
            print(
                f"  tail table: {tt['tail_table_blocks']} blocks, tails of up to {tt['tail_table_rules']} rules, built "
                f"in {tt['tail_table_seconds']:.2f} s after {tt['evaluated_before_tail_table']:,} evaluations (the "
                f"search then started again); {tt['pruned_tail_table']:,} children pruned by its raise"
            )
        prev = (0.0, 0, 0)
        parts = []
        for t, ev, q in r["samples"]:
            if t > prev[0]:
                parts.append(f"{t:.0f}s {(ev - prev[1]) / (t - prev[0]) / 1e6:.1f}M/s q={q:,}")
            prev = (t, ev, q)
        print("  rate over the run: " + "; ".join(parts))
        if r["bound_marks"]:
            print(f"  lower bound against evaluations (pruned by the reordering check: {r['pruned_reorder']:,}):")
            for ev, lb, cpu, q, disk, smap, rss in r["bound_marks"]:
                print(
                    f"    {ev / 1e6:>8.1f} M  bound {lb:.6f}  cpu {cpu:>7.1f} s  queue {q:>11,}  on disk "
                    f"{disk:>11,}  map {smap:>11,}  rss {rss / 2**20:>6.0f} MB"
                )
        tt = r["thread_times"]
        busy = tt["score"] + tt["lock_wait"] + tt["locked"] + tt["idle"]
        if busy > 0:
            print(
                f"  {r['threads_run']} threads, {busy:.2f} thread-s: scoring {tt['score'] / busy:.1%}, "
                f"waiting for the lock {tt['lock_wait'] / busy:.1%}, holding it "
                f"{tt['locked'] / busy:.1%} (heap pops {tt['locked_take'] / busy:.1%}, admitting "
                f"children {tt['locked_admit'] / busy:.1%}), idle {tt['idle'] / busy:.1%}"
            )


if __name__ == "__main__":
    main()
