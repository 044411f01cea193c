"""The CORELS Rashomon set on the COMPAS fold of the reference tool, and what asking for it costs.

Each row runs in a fresh process so its peak memory is its own, through the solver exactly as
``glasswork run`` drives it (``CorelsSolver.solve``: the certified search, then the enumeration
in 5 ms slices with the limit checks and the streamed members).

* ``--epsilons 0.01,0.05``: the set at each epsilon (λ = ``--lam``): count, complete or not,
  how it was counted (``listed`` by the enumerator, or by the ``tail table``, with its seconds,
  entries stored and peak bytes; ``--memory-gb`` sets ``limits.memory``, half of it the table's),
  time of the search and of the enumeration, peak resident memory, the enumerator's own memory,
  prefixes evaluated by the enumeration, nodes, prefixes collapsed, whether (after how many
  expansions) best first went on depth first, and the best members.
* ``--executor dask:local --workers 2``: the same run on a Dask cluster (a set larger than
  ``max_models``: one task counts it by the table, a second lists its best again); its per-task
  figures (seconds, evaluations, bytes) and the count's threads come in the JSON line. Peak RSS is
  then the driver's only. ``--executor local,dask:local`` runs both, alternated ``--repeat``
  times, each wall time beside the first executor's (the anchor: one process).
* ``--overhead``: time to the certified optimum with ``rashomon: {epsilon: 0}`` against a run
  without the section (``--repeat`` pairs, alternated), and the whole run's time with the
  enumeration of the (tiny) set at epsilon 0.

    python bench/corels_rashomon.py [--lam 0.01] [--epsilons 0.01,0.05] [--threads 2] [--memory-gb 6]
                                    [--time-limit 600] [--executor dask:local --workers 2] [--max-models 1000]
                                    [--overhead] [--repeat 3]

The machine is shared: read the CPU time and the counts; wall times are noisy.
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


def child(a: argparse.Namespace) -> None:
    """One solve (the options of ``a``, at ``a.epsilon``), measured from inside the process;
    prints one JSON line."""
    lam, epsilon, threads, time_limit = a.lam, a.epsilon, a.threads, a.time_limit
    memory_gb, executor, workers, max_models = a.memory_gb, a.executor, a.workers, a.max_models
    import resource

    import numpy as np
    from glasswork import Limits, Problem, SolveContext
    from glasswork.contract.solver import ClusterExecutor
    from glasswork.data.corels_format import read_corels
    from glasswork.plugins.corels import CorelsSolver, CorelsSpec

    base = str(DATA / "compas_train")
    data = read_corels(base + ".out", base + ".label", base + ".minor")
    problem = Problem(
        name="compas",
        X=np.ascontiguousarray(data.antecedents.matrix()),
        y=data.y,
        feature_names=list(data.antecedents.names),
        task="binary",
        classes=np.array(["no", "yes"]),
        extras={"premined": True, "antecedents": data.antecedents},
    )
    doc: dict[str, Any] = {
        "name": "bench",
        "data": {"source": "compas_train.out"},
        "solver": "corels",
        "objective": {"regularization": lam},
        "search": {"threads": threads, "progress_interval": 1.0},
        "store": {"enabled": False},
    }
    if epsilon is not None:
        doc["rashomon"] = {"epsilon": epsilon, "max_models": max_models}
    spec = CorelsSpec.model_validate(doc)
    ctx = SolveContext(
        Limits(time=time_limit, memory=None if memory_gb is None else int(memory_gb * 2**30)),
        executor=ClusterExecutor.parse(executor, workers=workers),
    )
    t0 = time.perf_counter()
    c0 = time.process_time()
    result = CorelsSolver(spec).solve(problem, ctx)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    stats = result.stats
    enum_s = float(stats.get("rashomon_seconds", 0.0))
    rset = result.rashomon
    out: dict[str, Any] = {
        "lambda": lam,
        "epsilon": epsilon,
        "threads": threads,
        "status": result.certificate.status.value,
        "objective": result.certificate.objective,
        "wall_s": wall,
        "cpu_s": cpu,
        "to_certified_optimum_s": wall - enum_s,
        "enumeration_s": enum_s,
        "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "load": os.getloadavg()[0],
        "executor": executor,
    }
    if rset is not None:
        out.update(
            count=rset.count,
            complete=rset.complete,
            threshold=rset.threshold,
            unenumerated_bound=rset.unenumerated_bound,
            enumerator_bytes=stats.get("rashomon_bytes"),
            enumerated=stats.get("rashomon_evaluated"),
            expanded=stats.get("rashomon_expanded"),
            max_queue=stats.get("rashomon_max_queue"),
            nodes=stats.get("rashomon_nodes"),
            collapsed=stats.get("rashomon_orderings_collapsed"),
            depth_first_from=stats.get("rashomon_depth_first_from"),
            count_method=stats.get("rashomon_count_method"),
            count_s=stats.get("rashomon_count_seconds"),
            table_entries=stats.get("rashomon_memo_entries_stored"),
            table_peak_bytes=stats.get("rashomon_memo_peak_bytes"),
            table_recomputed=stats.get("rashomon_memo_recomputed"),
            relisted_up_to=stats.get("rashomon_relisted_up_to"),
            listing_s=stats.get("rashomon_listing_seconds"),
            relisting_s=stats.get("rashomon_relisting_seconds"),
            count_evaluated=stats.get("rashomon_count_evaluated"),
            count_threads=stats.get("rashomon_count_threads"),
            tasks=stats.get("rashomon_tasks"),
            best=[(m.objective, m.model.to_text().replace("\n", " | ") if m.model else None) for m in rset.members[:3]],
        )
    print(json.dumps(out))


def run_child(a: argparse.Namespace, epsilon: float | None) -> dict[str, Any]:
    """One solve with the options of ``a`` at ``epsilon`` (None: no set), in a fresh process."""
    lam, threads, time_limit, memory_gb = a.lam, a.threads, a.time_limit, a.memory_gb
    args = [sys.executable, __file__, "--child", "--lam", str(lam), "--threads", str(threads)]
    args += ["--executor", a.executor] + ([] if a.workers is None else ["--workers", str(a.workers)])
    args += ["--max-models", str(a.max_models)]
    if memory_gb is not None:
        args += ["--memory-gb", str(memory_gb)]
    args += ["--time-limit", str(time_limit)]
    if epsilon is not None:
        args += ["--epsilon", str(epsilon)]
    done = subprocess.run(args, capture_output=True, text=True, check=True, timeout=time_limit * 3 + 120)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lam", type=float, default=0.01)
    ap.add_argument("--epsilons", default="0.01,0.05")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--memory-gb", type=float, default=None, help="limits.memory (the tail table gets half)")
    ap.add_argument(
        "--executor",
        default="local",
        help="local, dask:local or dask:HOST:PORT; several, comma-separated, run one after the other per epsilon "
        "(--repeat rounds, alternated) with each wall time over the first's",
    )
    ap.add_argument("--workers", type=int, default=None, help="dask:local's worker processes")
    ap.add_argument("--max-models", type=int, default=1000, help="rashomon.max_models: the lists listed and kept")
    ap.add_argument("--overhead", action="store_true", help="time to the optimum with rashomon at epsilon 0")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--epsilon", type=float, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a)
        return
    if not (DATA / "compas_train.out").exists():
        sys.exit(f"no COMPAS files under {DATA} (set GLASSWORK_DATA)")
    if a.overhead:
        plain, with_set = [], []
        for _ in range(a.repeat):
            plain.append(run_child(a, None))
            with_set.append(run_child(a, 0.0))
        p = sorted(r["to_certified_optimum_s"] for r in plain)[len(plain) // 2]
        r = sorted(r["to_certified_optimum_s"] for r in with_set)[len(with_set) // 2]
        whole = sorted(r["wall_s"] for r in with_set)[len(with_set) // 2]
        print(f"lambda {a.lam}, {a.threads} thread(s), medians of {a.repeat} (load {os.getloadavg()[0]:.1f}):")
        print(f"  plain run: certified optimum in {p:.2f} s")
        print(f"  rashomon epsilon 0: certified optimum in {r:.2f} s ({r / p:.2f}x), whole run {whole:.2f} s")
        print(f"  set at epsilon 0: {with_set[0].get('count')} list(s), complete {with_set[0].get('complete')}")
        for row in plain + with_set:
            print("  " + json.dumps({k: row[k] for k in ("epsilon", "wall_s", "cpu_s", "to_certified_optimum_s")}))
        return
    executors = a.executor.split(",")
    rounds = a.repeat if len(executors) > 1 else 1
    print(
        "| epsilon | executor | count | complete | method | wall s | search s | listing s | count s | relisting s "
        "| CPU s | peak RSS | table peak | wall / first's | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for eps in (float(x) for x in a.epsilons.split(",")):
        for _ in range(rounds):
            first = None
            for executor in executors:  # alternated, so both see the same machine
                a.executor = executor
                r = run_child(a, eps)
                first = r["wall_s"] if first is None else first
                print(
                    f"| {eps} | {executor} | {r.get('count'):,} | {r.get('complete')} | {r.get('count_method')} | "
                    f"{r['wall_s']:.1f} | {r['to_certified_optimum_s']:.2f} | {r.get('listing_s') or 0:.1f} | "
                    f"{r.get('count_s') or 0:.1f} | {r.get('relisting_s') or 0:.1f} | {r['cpu_s']:.1f} | "
                    f"{r['peak_rss'] / 2**20:.0f} MB | {(r.get('table_peak_bytes') or 0) / 2**20:.0f} MB | "
                    f"{r['wall_s'] / first:.2f} | {r['load']:.1f} |",
                    flush=True,
                )
                print("  " + json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
