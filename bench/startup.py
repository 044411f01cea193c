"""What ``glasswork run`` costs beyond the search: start-up, data, store, metrics, output.

    python bench/startup.py [--repeat 5] [--case readme|readme-no-store|compas|compas-no-store|all]

Each repetition is a fresh ``glasswork run`` process (the real command, through ``glasswork.cli``)
with timers wrapped around the steps of the run path: start-up (interpreter, imports, the
registry loading the plugins, the spec read and validated: everything before the data load),
data (``Launch.prepare``), store (opening it, and the store sink's work while the run starts and
finishes), search (the solver's ``solve``: for CORELS the mining, the size estimate and the
branch-and-bound), metrics (``glasswork.running.launch._add_metrics``), output (printing the result), and
exit.
Prints the median of each step over the repetitions, the overhead (everything but the search)
and its ratio to the search, measured in the same runs.

Cases: ``readme`` is ``specs/corels_breast_cancer.yaml`` (the README's first command) recorded
in a run store (a DuckDB file of its own in a temporary folder, created by the warm-up run, as a
user's ``./glasswork.duckdb`` is by their first run): the headline, printed last, against issue
25's target of 0.5 CPU-s. ``compas`` is ``specs/corels_compas.yaml`` at lambda 0.01 (needs
$GLASSWORK_DATA, default ../shared/datasets). ``-no-store`` cases run with ``--no-store``.

Measured on 2026-11-25, 5 runs each, on the shared 2-core machine under a very heavy load (load
average 15 to 55), so read the CPU seconds: before (scikit-learn's metrics, MOSS's searches and
scipy imported by every run) the overhead beyond the search was 2.6 CPU-s on the README example
and 2.2 CPU-s on COMPAS at 0.01 (metrics 2.46 s wall there: the scikit-learn import); after, 2.0
and 0.78 CPU-s (metrics 0.006 s). What is left on the README example is its data step (1.4
CPU-s): ``sklearn:breast_cancer`` and the holdout split import scikit-learn (1.7 CPU-s for
``import sklearn.datasets`` alone); COMPAS's ``.out`` files need none.

Measured again later that day (README example, 5 runs, load average 7 to 13): with the
breast-cancer CSV read directly and the holdout split drawn without scikit-learn, its data step
went from 1.78 to 0.07 CPU-s and the overhead from 2.50 to 0.94 CPU-s with the environment's
``PYTHONDONTWRITEBYTECODE=1`` (every run compiling glasswork's sources again, about 0.25 CPU-s),
0.67 CPU-s with bytecode cached as a user's runs have it (the default now; ``--no-bytecode-cache``
gives the former). Nearly all of it is start-up (0.55 CPU-s): importing NumPy, pydantic, rich and
click alone takes about 0.31 CPU-s, the registry loading every plugin and building their spec
models most of the rest.

Fast start (2026-11-25, evening; CPU-s beyond the search, median of 5 or 7; other sessions were
running on the 2 shared cores, so the load is given and the figures move by +-0.05 between
repeats). Four changes, each measured: (1) the ``glasswork`` command sets
``OPENBLAS_THREAD_TIMEOUT=4`` unless the user set it: OpenBLAS's worker thread spun ~0.1 s of a
core after NumPy's import (``python -c "import numpy"`` 0.24 -> 0.13 CPU-s at load 1.4; it spins
by the clock, so it costs less CPU on a busier machine); (2) built-in plugins load when needed
(the ``faststart`` branch's registry: a CORELS run imports neither MOSS nor FasterRisk, and its
spec is validated with CORELS's model alone; 0.03-0.05 CPU-s); (3) the run opens DuckDB once,
for its own fold at its end, instead of also before the run (0.02-0.04 CPU-s); (4) that fold
opens DuckDB through its compiled engine ``_duckdb`` without ``duckdb`` 2.0's Python layer
(0.1-0.2 CPU-s to import, never used by the store): the store step 0.13-0.16 -> 0.08-0.09
(docs/run-store.md).

README example with its store (the headline): 0.73 CPU-s before (load 0.7; 0.89 s wall), 0.49
after (load 2.0; 0.57 s wall): the target of 0.5 is met, narrowly (start-up 0.36, data 0.027,
store 0.079). Same run: ``--no-store`` 0.45, COMPAS at 0.01 with its store 0.61, without 0.54.
Old and new code alternated run by run (old through ``PYTHONPATH``, the same bench), at load 1.5
to 2.3: README with its store 0.645 -> 0.482 (start-up 0.44 -> 0.36, data 0.043 -> 0.025,
store 0.134 -> 0.081), COMPAS with its store 0.72 -> 0.59; at load 12, README 0.69 -> 0.54,
``--no-store`` 0.50 -> 0.42.

What is left, measured one piece at a time in one process at load 2-4: the interpreter with
site 0.035-0.045, pydantic's import and first model 0.11-0.13 (its schema machinery: any
validated spec needs it), NumPy 0.08, rich 0.035 (the result is printed through the plugins'
rich views, also with ``-q``, so a plain printer would not drop it), click and ruamel.yaml
0.026, glasswork's own modules and the CORELS plugin about 0.08 (pydantic spec models, the data
layer), reading the spec 0.016, the data 0.027, and the store 0.08 (DuckDB's engine, one
connection, the run's rows, the checkpoint on close). Leaving the fold to the next reader would
take the store step to 0.005 (tried: docs/run-store.md), but then a DuckDB client outside
glasswork would not see a run until a glasswork command opened the store, which the README
promises it does.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STEPS = ("startup", "data", "store", "search", "metrics", "output", "exit")


def child(argv: list[str], out_file: str) -> None:
    """Run the real command with timers around its steps; write the timings as JSON."""
    t0 = time.perf_counter()
    spent = {"data": 0.0, "store": 0.0, "search": 0.0, "metrics": 0.0, "output": 0.0}
    cpu = dict.fromkeys(spent, 0.0)
    marks: dict[str, float] = {}

    def timed(owner: object, name: str, step: str) -> None:
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            start, start_cpu = time.perf_counter(), time.process_time()
            marks.setdefault("first_step", start)
            marks.setdefault("first_step_cpu", start_cpu)
            try:
                return original(*args, **kwargs)
            finally:
                spent[step] += time.perf_counter() - start
                cpu[step] += time.process_time() - start_cpu

        is_static = isinstance(inspect.getattr_static(owner, name), staticmethod)
        setattr(owner, name, staticmethod(wrapper) if is_static else wrapper)

    sys.argv = ["glasswork", *argv]  # before glasswork's first import: the process is the command
    from glasswork.cli import main
    from glasswork.display import console
    from glasswork.running import launch
    from glasswork.store import journal

    t_imported = time.perf_counter()
    timed(launch.Launch, "prepare", "data")
    timed(launch.Launch, "open_store", "store")
    timed(launch, "_add_metrics", "metrics")
    for hook in ("on_start", "on_event", "on_finish"):
        timed(journal.StoreSink, hook, "store")
    timed(console, "render_outcome", "output")
    original_run = launch.Launch.run

    def run_with_timed_solver(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        timed(self.registry.solver(self.loaded.spec.solver), "solve", "search")
        return original_run(self, *args, **kwargs)

    launch.Launch.run = run_with_timed_solver  # type: ignore[method-assign]
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    t_end, cpu_end = time.perf_counter(), time.process_time()
    Path(out_file).write_text(
        json.dumps(
            {
                "code": code,
                "in_process": t_end - t0,
                "imports": t_imported - t0,
                "before_first_step": marks.get("first_step", t_end) - t0,
                **spent,
                "cpu": {**cpu, "startup": marks.get("first_step_cpu", cpu_end), "all": cpu_end},
            }
        )
    )


def one_run(argv: list[str], env: dict[str, str]) -> dict[str, float]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        out = fh.name
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, __file__, "--child", out, *argv],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.perf_counter() - start
    data = json.loads(Path(out).read_text())
    os.unlink(out)
    if data["code"] != 0:
        raise SystemExit(f"glasswork {' '.join(argv)} exited {data['code']}: {proc.stderr[-500:]}")
    accounted = data["data"] + data["store"] + data["search"] + data["metrics"] + data["output"]
    startup = wall - data["in_process"] + data["before_first_step"]  # interpreter + imports + spec
    c = data["cpu"]
    return {
        "total": wall,
        "startup": startup,
        "data": data["data"],
        "store": data["store"],
        "search": data["search"],
        "metrics": data["metrics"],
        "output": data["output"],
        "exit": wall - startup - accounted,
        "imports": data["imports"],
        # CPU seconds of the process (all threads), less disturbed by a loaded machine
        "cpu_overhead": c["all"] - c["search"],
        "cpu_search": c["search"],
        "cpu_startup": c["startup"],
        "cpu_data": c["data"],
        "cpu_store": c["store"],
    }


README = ["run", "specs/corels_breast_cancer.yaml", "-q"]
COMPAS = ["run", "specs/corels_compas.yaml", "-q", "--set", "objective.regularization=0.01"]
CASES = {  # the README's first command with its store is the headline (issue 25's target: 0.5 CPU-s)
    "readme": README,
    "readme-no-store": [*README, "--no-store"],
    "compas": COMPAS,
    "compas-no-store": [*COMPAS, "--no-store"],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--case", choices=(*CASES, "all"), default="all")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE as the environment sets it (every run compiles the sources again)",
    )
    args = parser.parse_args()
    env = dict(os.environ)
    env.setdefault("GLASSWORK_DATA", str(REPO.parent / "shared" / "datasets"))
    tmp = tempfile.mkdtemp(prefix="glasswork-startup-")
    if not args.no_bytecode_cache:  # as a user's runs are: compiled once (the warm-up run), then cached
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")  # never written into the checkout
    print(f"median of {args.repeat} runs per case, seconds; load average {os.getloadavg()[0]:.1f}")
    print(f"{'case':15s} " + " ".join(f"{s:>8s}" for s in (*STEPS, "total", "overhead")) + "  overhead/search")
    headline = None
    for name, argv in CASES.items():
        if args.case not in ("all", name):
            continue
        if "--no-store" not in argv:  # a store of its own per case, as a user's ./glasswork.duckdb
            argv = [*argv, "--db", os.path.join(tmp, f"{name}.duckdb")]
        one_run(argv, env)  # warm the file cache and the compiled modules; creates the store
        runs = [one_run(argv, env) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        overhead = statistics.median(r["total"] - r["search"] for r in runs)
        print(
            f"{name:15s} "
            + " ".join(f"{med[s]:8.3f}" for s in (*STEPS, "total"))
            + f" {overhead:8.3f}  {overhead / med['search']:.2f}",
            flush=True,
        )
        print(
            f"{'':15s} CPU seconds: overhead {med['cpu_overhead']:.3f} (start-up {med['cpu_startup']:.3f}, "
            f"data {med['cpu_data']:.3f}, store {med['cpu_store']:.3f}), search {med['cpu_search']:.3f}; "
            f"imports {med['imports']:.3f} s wall",
            flush=True,
        )
        if name == "readme":
            headline = med["cpu_overhead"]
    if headline is not None:
        print(
            f"headline: the README example with its store costs {headline:.3f} CPU-s beyond the search "
            f"(target 0.5; load average now {os.getloadavg()[0]:.1f})"
        )
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[3:], sys.argv[2])
        sys.exit(0)
    sys.exit(main())
