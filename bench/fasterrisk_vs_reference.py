"""glasswork's FasterRisk against the public reference package, on the same data.

    python bench/fasterrisk_vs_reference.py [--k 3 5 7 10] [--data adult mammo ...] [--paper]

The reference (``pip install fasterrisk``) pins old numpy, pandas and scikit-learn, so it lives in
its own virtual environment (``/tmp/fasterrisk-ref-venv`` unless ``FASTERRISK_REF_VENV`` says
otherwise), created here when missing; it runs in a subprocess that reads the same arrays. For
each case the script prints the training logistic loss of each side's best card, their relative
difference (negative: ours is lower) and the wall-time ratio (ours / reference). Both sides use
the reference code's defaults (k, B=10, epsilon=0.05, T=50, N_m=20, top 50); ``--paper`` adds a
run of ours with the paper's defaults. Data come from ``GLASSWORK_DATA`` (default
``../shared/datasets``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("GLASSWORK_DATA", REPO.parent / "shared" / "datasets"))
VENV = Path(os.environ.get("FASTERRISK_REF_VENV", "/tmp/fasterrisk-ref-venv"))
CACHE = Path(os.environ.get("FASTERRISK_REF_CACHE", "/tmp/fasterrisk-ref-results.json"))

DRIVER = r"""
import json, sys, time
import numpy as np
from fasterrisk.fasterrisk import RiskScoreOptimizer
X = np.load(sys.argv[1]); y = np.load(sys.argv[2])
out = []
for k in map(int, sys.argv[3].split(",")):
    t, c = time.perf_counter(), time.process_time()
    opt = RiskScoreOptimizer(X=X, y=y, k=k, parent_size=10)
    opt.optimize()
    elapsed, cpu = time.perf_counter() - t, time.process_time() - c
    m, b0, betas = opt.get_models()
    losses = [float(np.logaddexp(0, -y * (X @ betas[i] + b0[i]) / m[i]).sum()) for i in range(len(m))]
    i = int(np.argmin(losses))
    out.append({"k": k, "time": elapsed, "cpu": cpu, "loss": losses[i], "pool": len(m),
                "points": {int(j): int(betas[i][j]) for j in np.flatnonzero(betas[i])},
                "intercept": float(b0[i]), "multiplier": float(m[i])})
print(json.dumps(out))
"""


def ensure_reference() -> Path:
    python = VENV / "bin" / "python"
    probe = [str(python), "-c", "import fasterrisk"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"installing the reference fasterrisk into {VENV} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "fasterrisk"], check=True)
    return python


def _csv(relative: str, label: str = "first") -> tuple[np.ndarray, np.ndarray, list[str]]:
    path = DATA / relative
    names = path.read_text().split("\n", 1)[0].strip().split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    if label == "first":
        return data[:, 1:], data[:, 0], names[1:]
    return data[:, :-1], data[:, -1], names[:-1]


def binarize_thresholds(X: np.ndarray, names: list[str], max_thresholds: int = 100, seed: int = 0):
    """``x <= t`` dummies at every unique value but the largest; a column with more than
    ``max_thresholds`` unique values gets that many, drawn uniformly from them (as the reference
    package's ``convert_continuous_df_to_binary_df`` does). FICO: 1,275 columns."""
    rng = np.random.default_rng(seed)
    cols, out = [], []
    for j, name in enumerate(names):
        values = np.unique(X[:, j])
        if values.size > max_thresholds:
            values = np.sort(rng.choice(values, max_thresholds, replace=False))
        for t in values[values < X[:, j].max()]:
            cols.append(X[:, j] <= t)
            out.append(f"{name}<={t:g}")
    return np.column_stack(cols).astype(np.float64), out


def datasets() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every case as (X, y in {-1, +1})."""
    pm = lambda y: np.where(y > 0, 1.0, -1.0)  # noqa: E731
    sets = {}
    X, y, _ = _csv("fasterrisk-tutorial/adult_train_data.csv")
    sets["adult"] = (X, pm(y))
    for name in ("mammo", "mushroom", "spambase"):
        X, y, _ = _csv(f"risk-slim/{name}_data.csv")
        sets[name] = (X, pm(y))
    X, y, _ = _csv("corels/compas_train-binary.csv", label="last")
    sets["compas"] = (X, pm(y))
    X, y, names = _csv("treefarms/fico/original.csv", label="last")
    Xb, _ = binarize_thresholds(X, names, 100)
    sets["fico"] = (Xb, pm(y))
    return sets


def run_reference(
    python: Path, name: str, X: np.ndarray, y: np.ndarray, ks: list[int], refresh: bool
) -> dict[int, dict]:
    """Reference results per k, from the cache when the same data and k were run before."""
    digest = hashlib.sha1(np.ascontiguousarray(X).tobytes() + np.ascontiguousarray(y).tobytes()).hexdigest()[:16]
    cache = json.loads(CACHE.read_text()) if CACHE.exists() else {}
    keys = {k: f"{name}:{digest}:{k}" for k in ks}
    todo = [k for k in ks if refresh or keys[k] not in cache]
    if todo:
        with tempfile.TemporaryDirectory() as tmp:
            np.save(f"{tmp}/X.npy", X)
            np.save(f"{tmp}/y.npy", y)
            proc = subprocess.run(
                [str(python), "-c", DRIVER, f"{tmp}/X.npy", f"{tmp}/y.npy", ",".join(map(str, todo))],
                capture_output=True,
                text=True,
            )
        if proc.returncode != 0:
            print(f"{name}: reference failed:\n{proc.stderr[-2000:]}")
        else:
            for row in json.loads(proc.stdout.strip().splitlines()[-1]):
                cache[keys[row["k"]]] = row
            CACHE.write_text(json.dumps(cache, indent=1))
    return {k: cache[keys[k]] for k in ks if keys[k] in cache}


def run_ours(X: np.ndarray, y: np.ndarray, k: int, defaults: str, **overrides: object) -> dict:
    from glasswork.plugins.fasterrisk.engine import Engine, Settings

    t, c = time.perf_counter(), time.process_time()
    cards, _ = Engine(X, y, None, Settings.preset(defaults, k=k, **overrides)).run()
    elapsed, cpu = time.perf_counter() - t, time.process_time() - c
    best = cards[0]
    margin = y * (X[:, best.features] @ best.points + best.intercept) / best.multiplier
    return {"time": elapsed, "cpu": cpu, "loss": float(np.logaddexp(0, -margin).sum()), "pool": len(cards)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, nargs="+", default=[3, 5, 7, 10])
    parser.add_argument("--data", nargs="+", default=["adult", "mammo", "mushroom", "spambase", "compas", "fico"])
    parser.add_argument("--paper", action="store_true", help="also run ours with the paper's defaults")
    parser.add_argument("--no-reference", action="store_true", help="skip the reference runs")
    parser.add_argument("--refresh-reference", action="store_true", help="ignore cached reference results")
    args = parser.parse_args()

    python = None if args.no_reference else ensure_reference()
    sets = datasets()
    variants = [("code", "reference", {}), ("code+newton", "reference", {"finetune": "newton"})]
    if args.paper:
        variants.append(("paper", "paper", {}))
    print(
        "loss: training logistic loss (sum) of the best card; diff: relative to the reference; "
        "ratio: our wall time / the reference's; cpu r: the same for process CPU time"
    )
    header = f"{'data':<9}{'n':>6}{'p':>6}{'k':>4} {'ref loss':>11} {'ref s':>7}"
    for label, _, _ in variants:
        header += f" | {label + ' loss':>17} {'diff':>8} {'s':>6} {'ratio':>6} {'cpu r':>6}"
    print(header)
    print("-" * len(header))
    worst: dict[str, list[float]] = {label: [-np.inf, 0.0] for label, _, _ in variants}
    for name in args.data:
        X, y = sets[name]
        ref_rows = {} if python is None else run_reference(python, name, X, y, args.k, args.refresh_reference)
        for k in args.k:
            ref = ref_rows.get(k)
            line = f"{name:<9}{X.shape[0]:>6}{X.shape[1]:>6}{k:>4} "
            line += f"{ref['loss']:>11.3f} {ref['time']:>7.2f}" if ref else f"{'-':>11} {'-':>7}"
            for label, defaults, overrides in variants:
                ours = run_ours(X, y, k, defaults, **overrides)
                if ref:
                    diff = (ours["loss"] - ref["loss"]) / ref["loss"]
                    ratio = ours["time"] / ref["time"]
                    worst[label] = [max(worst[label][0], diff), max(worst[label][1], ratio)]
                    cpu = ours["cpu"] / ref["cpu"] if ref.get("cpu") else float("nan")
                    line += f" | {ours['loss']:>17.3f} {diff:>+8.3%} {ours['time']:>6.2f} {ratio:>6.3f} {cpu:>6.3f}"
                else:
                    line += f" | {ours['loss']:>17.3f} {'-':>8} {ours['time']:>6.2f} {'-':>6} {'-':>6}"
            print(line, flush=True)
    if python is not None:
        print()
        for label, (diff, ratio) in worst.items():
            print(
                f"{label:<12} worst loss difference {diff:+.4%} (goal <= +0.1%), "
                f"worst time ratio {ratio:.3f} (goal <= 0.2)"
            )


if __name__ == "__main__":
    main()
