"""CORELS on a wide antecedent set: the 1,200-row credit-like table mined with pairs (issue 27 item 3).

    python bench/corels_wide.py [--time-limit 60] [--lambdas 0.01] [--threads 2]
                                [--set PATH=VALUE ...] [--out DIR]

Writes the table (``corels_defaults.credit_table``: seeded, numeric and text columns, a yes/no
target, a few empty cells) and ``bench/corels_credit_pairs.yaml``'s spec next to it (``binarize:
{thresholds: 2}``, ``max_card: 2``, lambda 0.01: 970 antecedents over the 949 training rows),
then runs ``glasswork run --json --no-store`` once per lambda, each in its own process, and
prints what the search reached when it stopped: status, objective, lower bound, gap, antecedents
and units, evaluations, the largest queue, the search's containers (``search_bytes``) and the
child's peak resident memory, with the load average before and after. ``--set`` passes overrides
to the run (``search.ablation=[similar_support]``, ``search.symmetry_map=captured``...).

The machine is shared: read evaluations and the bound reached rather than the wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from corels_defaults import credit_table

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "bench" / "corels_credit_pairs.yaml"
DEFAULT_OUT = Path("/tmp/glasswork-corels-wide")


def prepare(out: Path) -> Path:
    """The table (written once, seeded) and the spec pointing at it; returns the spec's path."""
    out.mkdir(parents=True, exist_ok=True)
    table = out / "credit_pairs.csv"
    if not table.exists():
        credit_table(table, n=1200, seed=0)
    spec = out / SPEC.name
    spec.write_text(SPEC.read_text().replace(str(DEFAULT_OUT / table.name), str(table)))
    return spec


def run_one(spec: Path, lam: float, time_limit: float, threads: int, overrides: list[str]) -> dict:
    cmd = [sys.executable, "-c", "from glasswork.cli import main; main()", "run", str(spec), "--json", "--no-store"]
    cmd += ["-q", "--set", f"objective.regularization={lam}", "--set", f"limits.time={time_limit}"]
    cmd += ["--set", f"search.threads={threads}"]
    for item in overrides:
        cmd += ["--set", item]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    row: dict = {"lambda": lam, "wall": wall, "load": (load, os.getloadavg()[0])}
    row["peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        row["error"] = f"exit {proc.returncode}: {proc.stderr.strip().splitlines()[-2:]}"
        return row
    stats = doc.get("stats") or {}
    row.update(
        status=doc["status"],
        objective=doc["objective"],
        lower_bound=doc["lower_bound"],
        gap=doc["gap"],
        model=doc.get("model_text"),
        **{k: stats.get(k) for k in ("antecedents", "units", "evaluated", "max_queue", "search_bytes", "improvements")},
    )
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--lambdas", default="0.01")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--one", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    spec = prepare(args.out)
    if args.one:  # one run per process: ru_maxrss of the children is then this run's
        lam, limit, threads, overrides = args.one
        print(json.dumps(run_one(spec, float(lam), float(limit), int(threads), json.loads(overrides))))
        return 0
    print(f"{spec}: time {args.time_limit} s, {args.threads} thread(s), overrides {args.overrides} (shared machine)")
    for lam in [float(x) for x in args.lambdas.split(",")]:
        one = [str(lam), str(args.time_limit), str(args.threads), json.dumps(args.overrides)]
        child = subprocess.run(
            [sys.executable, __file__, "--out", str(args.out), "--one", *one], capture_output=True, text=True
        )
        if child.returncode != 0:
            print(f"lambda {lam}: failed: {child.stderr.strip()[-500:]}")
            continue
        r = json.loads(child.stdout.strip().splitlines()[-1])
        if "error" in r:
            print(f"lambda {lam}: {r['error']}")
            continue
        print(
            f"lambda {lam}: {r['status']}, objective {r['objective']:.6f}, lower bound {r['lower_bound']:.6f}, "
            f"gap {r['gap']:.1%}; {r['antecedents']} antecedents, {r['units']} units; "
            f"{r['evaluated']:,} evaluations, max queue {r['max_queue']:,}, search "
            f"{r['search_bytes'] / 2**20:,.0f} MB, peak RSS {r['peak_mb']:,.0f} MB, wall {r['wall']:.1f} s, "
            f"load {r['load'][0]:.1f}-{r['load'][1]:.1f}; model {r['model']}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
