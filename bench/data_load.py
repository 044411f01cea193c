"""Time the data layer on COMPAS and FICO: load, binarize, mine antecedents, read/write CORELS files.

    python bench/data_load.py [--repeat 5]

Data come from $GLASSWORK_DATA (default: ../shared/datasets next to the repository). Prints one
line per step with the median wall time over the repeats and the sizes produced.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    fn()  # warm up: imports, first DuckDB connection
    times = []
    out = None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    root = Path(os.environ.get("GLASSWORK_DATA") or REPO.parent / "shared" / "datasets")
    if not (root / "corels" / "compas_train.csv").exists():
        print(f"data sets not found under {root}; set GLASSWORK_DATA", file=sys.stderr)
        return 1
    os.environ["GLASSWORK_DATA"] = str(root)

    from glasswork.data import DataSpec, load_problem
    from glasswork.data.corels_format import read_corels, write_corels
    from glasswork.data.rules import mine_antecedents, minority_mask

    rows: list[tuple[str, float, str]] = []

    def step(label: str, fn: Callable[[], Any], describe: Callable[[Any], str]) -> Any:
        seconds, out = _timed(fn, args.repeat)
        rows.append((label, seconds, describe(out)))
        print(f"{label:<52} {seconds * 1000:9.1f} ms   {describe(out)}", flush=True)
        return out

    compas = DataSpec(
        source="data:corels/compas_train.csv", target="recidivate-within-two-years", split={"kind": "none"}, binarize={}
    )
    p = step(
        "COMPAS: load CSV + one-hot (DuckDB)",
        lambda: load_problem(compas),
        lambda p: f"{p.X.shape[0]} rows x {p.X.shape[1]} features",
    )
    step(
        "COMPAS: mine max_card=2, support [0.005,0.995]",
        lambda: mine_antecedents(p.X, p.feature_names, negations=False, dedupe=False),
        lambda a: f"{len(a)} antecedents",
    )
    step(
        "COMPAS: mine, with negations and dedupe",
        lambda: mine_antecedents(p.X, p.feature_names, negations=True),
        lambda a: f"{len(a)} antecedents, {a.duplicates_removed} duplicates removed",
    )
    step(
        "COMPAS: load CSV + one-hot + mine (end to end)",
        lambda: (lambda q: mine_antecedents(q.X, q.feature_names, negations=False))(load_problem(compas)),
        lambda a: f"{len(a)} antecedents",
    )
    step("COMPAS: minority mask", lambda: minority_mask(p.X, p.y), lambda z: f"{int(z.sum())} minority samples")
    out = root / "corels" / "compas_train.out"
    data = step(
        "COMPAS: read .out/.label/.minor", lambda: read_corels(out), lambda d: f"{len(d.antecedents)} x {d.n_samples}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        step(
            "COMPAS: write .out/.label/.minor",
            lambda: write_corels(data, Path(tmp) / "c.out"),
            lambda w: f"{sum(f.stat().st_size for f in w) / 1e6:.1f} MB",
        )
    step(
        "COMPAS: load_problem on compas_train.out + test",
        lambda: load_problem(DataSpec(source="data:corels/compas_train.out", test="data:corels/compas_test.out")),
        lambda p: f"{p.X.shape[0]} x {p.X.shape[1]}, test {p.X_test.shape[0]}",
    )

    fico_path = root / "treefarms" / "fico" / "original.csv"
    if fico_path.exists():
        for k in (4, 8, 16):
            spec = DataSpec(
                source="data:treefarms/fico/original.csv",
                target="PoorRiskPerformance",
                split={"kind": "none"},
                binarize={"thresholds": k},
            )
            f = step(
                f"FICO: load CSV + {k} quantile thresholds per column",
                lambda spec=spec: load_problem(spec),
                lambda p: f"{p.X.shape[0]} rows x {p.X.shape[1]} features",
            )
            step(
                f"FICO ({k} thr.): mine max_card=2, negations, dedupe",
                lambda f=f: mine_antecedents(f.X, f.feature_names),
                lambda a: f"{len(a)} antecedents, {a.duplicates_removed} duplicates removed",
            )
        fb = DataSpec(source="data:treefarms/fico/fico-binary.csv", target="RiskPerform", split={"kind": "none"})
        b = step(
            "FICO binary: load CSV (17 binary columns)",
            lambda: load_problem(fb),
            lambda p: f"{p.X.shape[0]} rows x {p.X.shape[1]} features",
        )
        Xb = b.X.astype("uint8")
        step(
            "FICO binary: mine max_card=2, negations, dedupe",
            lambda: mine_antecedents(Xb, b.feature_names),
            lambda a: f"{len(a)} antecedents, {a.duplicates_removed} duplicates removed",
        )
        step(
            "FICO binary: mine max_card=3, negations, dedupe",
            lambda: mine_antecedents(Xb, b.feature_names, max_card=3),
            lambda a: f"{len(a)} antecedents, {a.duplicates_removed} duplicates removed",
        )
    else:
        print(f"FICO skipped: {fico_path} absent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
