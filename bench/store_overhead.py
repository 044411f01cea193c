"""What recording a run costs: the same solve with and without the run store.

    python bench/store_overhead.py [SPEC] [--repeat N]

The default spec is a CORELS search on COMPAS that emits thousands of progress events. Runs are
interleaved (store, no store, store, ...) in one process so that machine noise hits both sides
alike; the figure is the ratio of median wall times of ``Launch.run`` (the one run path) on data
loaded once and a store already open (search, events and recording; no process start-up). The
goal in issue 7 is an overhead under 2 %.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from glasswork import load_problem, load_spec
from glasswork.contract.events import CollectingSink
from glasswork.running.launch import Launch
from glasswork.store import RunStore

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SPEC = REPO / "specs" / "corels_compas.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec", nargs="?", default=str(DEFAULT_SPEC))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--set-regularization",
        type=float,
        default=0.01,
        help="objective.regularization for the run (CORELS: 0.01 gives a search of seconds)",
    )
    parser.add_argument(
        "--progress-interval",
        type=float,
        default=0.002,
        help="search.progress_interval: seconds between progress events (thousands per run)",
    )
    args = parser.parse_args()

    loaded = load_spec(args.spec)
    spec = loaded.spec.model_copy(deep=True)
    if hasattr(spec.objective, "regularization"):
        spec.objective.regularization = args.set_regularization
    if hasattr(spec.search, "progress_interval"):
        spec.search.progress_interval = args.progress_interval
    loaded = type(loaded)(spec, loaded.path)
    problem = load_problem(spec.data, loaded.base_dir)  # once, so both sides time the search alone

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        times: dict[str, list[float]] = {"no store": [], "store": []}
        events = 0
        for i in range(args.repeat * 2):
            mode = "store" if i % 2 == 0 else "no store"
            counter = CollectingSink()
            launch = Launch(loaded, db=db, no_store=mode == "no store", problem=problem)
            launch.open_store()  # opened (and migrated) outside the timing, as one store serves many runs
            started = time.perf_counter()
            outcome = launch.run([counter])
            times[mode].append(time.perf_counter() - started)
            events = len(counter.events)
        store = RunStore(db)
        recorded = len(store.events(store.list_runs(limit=1)[0].run_id))

    base, with_store = statistics.median(times["no store"]), statistics.median(times["store"])
    fastest = min(times["store"]) / min(times["no store"])
    print(f"spec: {args.spec} (regularization {args.set_regularization})")
    print(
        f"status {outcome.status}, objective {outcome.result.certificate.objective:.5f}, "
        f"{events:,} events per run ({recorded:,} recorded)"
    )
    for mode, values in times.items():
        print(f"  {mode:<9} median {statistics.median(values):.3f} s  runs: " + ", ".join(f"{v:.3f}" for v in values))
    print(
        f"overhead of recording: {100 * (with_store / base - 1):+.2f} % by medians, "
        f"{100 * (fastest - 1):+.2f} % by the fastest runs (goal: under 2 %)"
    )


if __name__ == "__main__":
    main()
