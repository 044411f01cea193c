"""What a plain CORELS spec does on ordinary tables: certified or not, time, peak memory, antecedents.

    python bench/corels_defaults.py [--time-limit 30] [--memory 4GB] [--set PATH=VALUE ...]
                                    [--only NAME ...] [--out DIR]

Writes two synthetic tables (a 1,200-row credit-like CSV with numeric and text columns, a yes/no
target and a few missing values; a 20,000-row one with 25 numeric and text columns) and runs a
plain spec on them and on the shipped real data sets (COMPAS's CSV, FICO, Adult, scikit-learn's
breast cancer): ``data`` with ``binarize: {thresholds: 3}``, ``solver: corels``, nothing else but
the limits. Each run is its own ``glasswork run --json --no-store`` process; the peak resident
memory is the child's ``ru_maxrss``. The solver's rough time estimate and whether it
warned at run start are shown next to what happened.
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

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def credit_table(path: Path, n: int = 1200, seed: int = 0) -> None:
    """A small credit-like table: numbers, words, a yes/no target, a few empty cells."""
    rng = np.random.default_rng(seed)
    age = rng.integers(19, 75, n)
    income = np.round(rng.lognormal(10.3, 0.5, n), -2)
    debt_ratio = np.round(rng.beta(2, 5, n), 3)
    months_employed = rng.integers(0, 360, n)
    accounts = rng.poisson(4, n)
    amount = np.round(rng.lognormal(8.5, 0.7, n), -1)
    purpose = rng.choice(["car", "home", "education", "business", "other"], n)
    housing = rng.choice(["own", "rent", "free"], n, p=[0.5, 0.4, 0.1])
    employment = rng.choice(["salaried", "self-employed", "unemployed"], n, p=[0.7, 0.2, 0.1])
    score = (
        -2
        + 3 * debt_ratio
        + 0.8 * (employment == "unemployed")
        - 0.01 * (age - 40)
        + 0.5 * (housing == "rent")
        + 0.3 * (amount > 8000)
        - months_employed / 300
    )
    default = rng.random(n) < 1 / (1 + np.exp(-score))
    rows = ["age,income,debt_ratio,months_employed,accounts,amount,purpose,housing,employment,default"]
    for i in range(n):
        cells = [
            str(age[i]),
            f"{income[i]:.0f}",
            f"{debt_ratio[i]}",
            str(months_employed[i]),
            str(accounts[i]),
            f"{amount[i]:.0f}",
            str(purpose[i]),
            str(housing[i]),
            str(employment[i]),
            "yes" if default[i] else "no",
        ]
        if i % 97 == 5:
            cells[1] = ""  # a few missing incomes
        rows.append(",".join(cells))
    path.write_text("\n".join(rows) + "\n")


def wide_table(path: Path, n: int = 20000, seed: int = 1) -> None:
    """20,000 rows, 20 numeric and 5 text columns, a 0/1 target driven by a few of them."""
    rng = np.random.default_rng(seed)
    num = rng.normal(size=(n, 20)).round(3)
    cats = [rng.choice([f"c{j}v{k}" for k in range(3 + j)], n) for j in range(5)]
    score = 1.2 * num[:, 0] - 0.8 * num[:, 3] + 0.6 * (cats[1] == "c1v0") + 0.4 * num[:, 7] ** 2 - 0.5
    y = (rng.random(n) < 1 / (1 + np.exp(-score))).astype(int)
    header = [f"x{j}" for j in range(20)] + [f"c{j}" for j in range(5)] + ["y"]
    lines = [",".join(header)]
    for i in range(n):
        lines.append(",".join([*(f"{v}" for v in num[i]), *(c[i] for c in cats), str(y[i])]))
    path.write_text("\n".join(lines) + "\n")


def cases(out: Path, datasets: Path) -> dict[str, dict]:
    credit, wide = out / "credit.csv", out / "wide.csv"
    if not credit.exists():
        credit_table(credit)
    if not wide.exists():
        wide_table(wide)
    table = {
        "readme (breast cancer)": {"source": "sklearn:breast_cancer"},
        "credit 1200x9": {"source": str(credit), "target": "default", "missing": "drop"},
        "wide 20000x25": {"source": str(wide), "target": "y"},
        "compas csv 6489x7": {
            "source": str(datasets / "corels" / "compas_train.csv"),
            "target": "recidivate-within-two-years",
        },
        "fico 10459x23": {
            "source": str(datasets / "treefarms" / "fico" / "original.csv"),
            "target": "PoorRiskPerformance",
        },
        "adult 26049x36": {
            "source": str(datasets / "fasterrisk-tutorial" / "adult_train_data.csv"),
            "target": "Over50K",
        },
    }
    return {name: {**data, "binarize": {"thresholds": 3}} for name, data in table.items()}


def run_case(name: str, data: dict, out: Path, time_limit: float, memory: str, overrides: list[str]) -> dict:
    spec = {"name": "plain", "data": data, "solver": "corels", "limits": {"time": time_limit, "memory": memory}}
    spec_path = out / f"{name.split()[0]}.json"
    spec_path.write_text(json.dumps(spec))
    cmd = [
        sys.executable,
        "-c",
        "from glasswork.cli import main; main()",
        "run",
        str(spec_path),
        "--json",
        "--no-store",
        "-q",
    ]
    for item in overrides:
        cmd += ["--set", item]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    row = {
        "case": name,
        "wall": wall,
        "peak_mb": peak / 1024 if peak > before else float("nan"),
        "stderr": proc.stderr.strip().splitlines()[-3:],
    }
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        row["status"] = f"exit {proc.returncode}"
        return row
    stats = doc.get("stats") or {}
    row.update(
        status=doc.get("status"),
        gap=doc.get("gap"),
        antecedents=stats.get("antecedents"),
        estimate=stats.get("estimated_seconds"),
        warned="unlikely to certify" in proc.stderr,
    )
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--memory", default="4GB")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--out", type=Path, default=Path("/tmp/glasswork-corels-defaults"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    datasets = Path(os.environ.get("GLASSWORK_DATA") or REPO.parent / "shared" / "datasets")
    print(f"limits: time {args.time_limit} s, memory {args.memory}; overrides {args.overrides}")
    for name, data in cases(args.out, datasets).items():
        if args.only and not any(o in name for o in args.only):
            continue
        # peak RSS of children is cumulative: one process per case keeps it per case
        child = subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                name,
                json.dumps(data),
                str(args.out),
                str(args.time_limit),
                args.memory,
                json.dumps(args.overrides),
            ],
            capture_output=True,
            text=True,
        )
        print(child.stdout.strip() or child.stderr.strip()[-500:], flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        _, _, case, data_json, out_dir, limit, mem, over = sys.argv
        r = run_case(case, json.loads(data_json), Path(out_dir), float(limit), mem, json.loads(over))
        gap, est = r.get("gap"), r.get("estimate")
        print(
            f"{r['case']:24s} {str(r.get('status')):16s} gap {'-' if gap is None else f'{gap:.1%}':>6s} "
            f"antecedents {r.get('antecedents')!s:>6s}  wall {r['wall']:6.1f} s  "
            f"peak {r['peak_mb']:7.0f} MB  estimate "
            f"{'-' if est is None else f'{est:.3g} s'}"
            f"{'  (warned)' if r.get('warned') else ''}" + ("" if r.get("status") else f"\n    {r['stderr']}")
        )
        sys.exit(0)
    sys.exit(main())
