"""FairCORELS 1.0 beside glasswork's CORELS on COMPAS and Adult: same data, lambda, metric and limit
(issue 37 item 5).

FairCORELS is the only other tool that learns fair rule lists; this script measures it the way the
issue states its figures, and puts glasswork's certified unconstrained optimum and its group audit
beside FairCORELS' unconstrained row, and glasswork's constrained run (``constraints.fairness``,
one thread, ``limits.time`` = ``--glasswork-time``) beside each of FairCORELS' constrained rows.

    python bench/faircorels_peer.py [--cases compas adult] [--metrics 1 2 3 4 5 6]
                                    [--max-nodes 1000000] [--time-limit SECONDS] [--json]
                                    [--venv ~/.cache/glasswork-bench/faircorels-venv]
    python bench/faircorels_peer.py --show saved.json    # the tables of a saved --json run

**FairCORELS is GPL-3.0.** It is only ever run as an installed package, in a virtual environment of
its own, in a subprocess fed the data as an ``.npz`` file; none of its code is in this repository.
The first run creates that environment (once; it is reused while ``faircorels`` imports from it):
``pip<25`` (pip 26 builds every sdist through PEP 517, whose ``exec`` of FairCORELS' ``setup.py``
gives it a dict for ``__builtins__``, and the build fails; pip 24 runs ``setup.py bdist_wheel``), then ``numpy==1.26.4
"cython<3" setuptools wheel joblib scikit-learn pandas tqdm``, then ``pip install
--no-build-isolation faircorels`` (a C++ build of about two minutes). The build needs the GMP
headers: run as root, the script installs them with ``apt-get install -y libgmp-dev`` when
``gmp.h`` is missing. FairCORELS 1.0 needs two shims before its import (``numpy.bool = bool``,
``time.clock = time.process_time``): the driver sets them.

Settings (the issue's): the feature columns are the data's 0/1 columns minus the target and the
protected attribute's columns (FairCORELS cannot use them; glasswork reads them under
``data.audit_only``), ``c = 0.005``, ``max_card = 1``, ``min_support = 0.01``, ``policy = "bfs"``,
``mode = 3`` (epsilon constraint: unfairness <= 1 - epsilon), the protected group as ``min_vect``
and every other row as ``maj_vect``. Per data set: no constraint (``epsilon = 0``, a limit of 1 that
every list meets), then each of FairCORELS' six metrics (``fairness = 1..6``) at most 0.05
(``epsilon = 0.95``). FairCORELS stops at ``n_iter`` nodes in its tree (``--max-nodes``) and makes no
statement of optimality either way; the driver records why it stopped (its ``progress`` output prints
the same "max number of nodes" line when ``--time-limit``, its CPU-second limit, stops it).

Every figure of a FairCORELS row except its times is glasswork's: its rule list is rebuilt as a
glasswork ``RuleList`` over the same columns, its predictions come from that list (and are checked
against FairCORELS' own ``predict``), its accuracy and objective (misclassified share + lambda x
rules, glasswork's CORELS objective) from ``glasswork.running.metrics``, and its group figures from
``glasswork.fairness.figures`` on those predictions, not FairCORELS' own claim. The glasswork row is
``glasswork run --json`` on a temporary spec (``data.audit_only`` = the protected columns,
``fairness:`` the group, no test split), timed from outside (CPU of the child process) and inside
(the search's ``elapsed``).

Data: COMPAS is pycorels' ``compas.csv`` (7,214 rows; protected ``Race=African-American``, the six
``Race=*`` columns out of the rules). Adult is risk-slim's ``adult_data.csv`` (32,561 rows, UCI
Adult binarised; protected ``Female``, with ``Male`` and ``Female`` out of the rules; ``White``,
``Black`` and ``OtherRace`` stay features). The files are found under ``$GLASSWORK_DATA`` (default
``../shared/datasets`` beside the repository).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from glasswork.fairness.figures import METRICS
from glasswork.quoting import printable

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("GLASSWORK_DATA", REPO.parent / "shared" / "datasets"))
DEFAULT_VENV = Path("~/.cache/glasswork-bench/faircorels-venv").expanduser()
VENV_PACKAGES = ("numpy==1.26.4", "cython<3", "setuptools", "wheel", "joblib", "scikit-learn", "pandas", "tqdm")
METRIC_NAMES = METRICS  # FairCORELS' fairness=1..6, in its order


@dataclass(frozen=True)
class Case:
    """One data set as the comparison reads it."""

    name: str
    path: str  # under DATA
    target: str
    protected: str  # a 0/1 column: 1 = the protected group
    audit_columns: tuple[str, ...]  # kept out of the rules (the protected attribute's columns)


CASES: dict[str, Case] = {
    "compas": Case(
        "compas",
        "pycorels/compas.csv",
        "Recidivate-Within-Two-Years",
        "Race=African-American",
        (
            "Race=African-American",
            "Race=Caucasian",
            "Race=Asian",
            "Race=Hispanic",
            "Race=Native-American",
            "Race=Other",
        ),
    ),
    "adult": Case("adult", "risk-slim/adult_data.csv", "Over50K", "Female", ("Male", "Female")),
}


@dataclass(frozen=True)
class Settings:
    lam: float = 0.005
    max_card: int = 1
    min_support: float = 0.01
    policy: str = "bfs"
    mode: int = 3
    limit: float = 0.05
    max_nodes: int = 1_000_000
    time_limit: int | None = None  # FairCORELS' fit(time_limit=): CPU seconds
    glasswork_time: int = 300  # glasswork's limits.time per constrained run (wall seconds)


@dataclass
class Prepared:
    """A case's table split the way both tools see it."""

    X: np.ndarray  # uint8, the rules' columns
    features: list[str]
    y: np.ndarray  # uint8 0/1
    protected: np.ndarray  # bool


class DataError(ValueError):
    """The table cannot be compared: the message names the file, the line or column, and the fix."""


def prepare(case: Case, path: Path) -> Prepared:
    """Read a header + 0/1 CSV; the target, the protected flag, and the rules' columns (every other
    column but the audit ones)."""
    try:
        with path.open(encoding="utf-8") as fh:
            header = fh.readline().rstrip("\r\n").split(",")
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror}); set GLASSWORK_DATA to the datasets folder") from exc
    for column in (case.target, case.protected, *case.audit_columns):
        if column not in header:
            raise DataError(f"{path}: no column {column!r} in the header (line 1)")
    try:
        table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)
    except ValueError as exc:
        raise DataError(f"{path}: not a table of numbers ({exc})") from exc
    if table.shape[1] != len(header):
        raise DataError(f"{path}: {table.shape[1]} fields per row but {len(header)} names on line 1")
    bad = ~np.isin(table, (0.0, 1.0))
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise DataError(
            f"{path}: line {row + 2}, column {header[col]!r} holds {float(table[row, col])!r}; "
            "both tools need 0/1 columns (binarise the table first)"
        )
    keep = [j for j, name in enumerate(header) if name != case.target and name not in case.audit_columns]
    return Prepared(
        X=table[:, keep].astype(np.uint8),
        features=[header[j] for j in keep],
        y=table[:, header.index(case.target)].astype(np.uint8),
        protected=table[:, header.index(case.protected)].astype(bool),
    )


# -- glasswork's reading of a returned list ---------------------------------------------------------------


@dataclass
class PeerList:
    """A rule list as FairCORELS returns it: antecedent names (a conjunction each; ``not X`` is a
    negated column) with their predictions, then the default prediction."""

    rules: list[tuple[list[str], int]]
    default: int


def to_rule_list(peer: PeerList, features: Sequence[str], y: np.ndarray, X: np.ndarray) -> Any:
    """The same list as a glasswork ``RuleList`` over the columns ``features`` (leaf predictions as
    FairCORELS gave them; ``counts`` are the training rows each rule captures, per class)."""
    from glasswork.plugins.corels.model import Rule, RuleList

    index = {name: j for j, name in enumerate(features)}
    rules = []
    for names, prediction in peer.rules:
        items = []
        for name in names:
            negated = name.startswith("not ")
            column = name[4:] if negated else name
            if column not in index:
                raise DataError(f"FairCORELS returned an antecedent {name!r} that is no column of the data")
            items.append((index[column], 0 if negated else 1))
        rules.append(Rule(" && ".join(names), items, int(prediction), [0, 0]))
    open_ = np.ones(X.shape[0], dtype=bool)  # rows no rule above has captured
    for rule in rules:
        hit = open_ & rule.matches(X)
        rule.counts = np.bincount(y[hit], minlength=2).tolist()
        open_ &= ~hit
    return RuleList(rules, peer.default, np.bincount(y[open_], minlength=2).tolist(), np.array([0, 1]))


def majority_leaves(model: Any) -> bool:
    """Whether every leaf predicts the majority of the rows it captures, as glasswork's CORELS
    objective assumes (a tie allows either label)."""
    leaves = [(r.counts, r.prediction) for r in model.rules] + [(model.default_counts, model.default)]
    return all(counts[pred] >= counts[1 - pred] for counts, pred in leaves)


def objective(y: np.ndarray, pred: np.ndarray, rules: int, lam: float) -> float:
    """glasswork's CORELS objective: misclassified share + lambda x number of rules (the default
    rule not counted)."""
    from glasswork.running.metrics import accuracy

    return (1.0 - accuracy(y, pred)) + lam * rules


def figures(model: Any, data: Prepared, lam: float) -> dict[str, Any]:
    """Accuracy, objective and the six group metrics of ``model``'s predictions, by glasswork."""
    from glasswork.fairness.figures import disparities
    from glasswork.running.metrics import accuracy

    pred = model.predict(data.X)
    out: dict[str, Any] = {
        "rules": len(model.rules),
        "rule_list": model.to_text(),
        "accuracy": accuracy(data.y, pred),
        "objective": objective(data.y, pred, len(model.rules), lam),
        "majority_leaves": majority_leaves(model),
    }
    out.update(disparities(data.y, pred, data.protected))
    return out


# -- FairCORELS in its own venv --------------------------------------------------------------------------

DRIVER = r"""
import json, sys, time
import numpy
numpy.bool = bool                     # FairCORELS 1.0 predates numpy's removal of numpy.bool
time.clock = time.process_time        # ... and Python 3.8's removal of time.clock
from faircorels import FairCorelsClassifier

data = numpy.load(sys.argv[1])
params = json.loads(sys.argv[2])
X, y, protected = data["X"], data["y"], data["protected"].astype(numpy.int64)
features = json.loads(str(data["features"]))
clf = FairCorelsClassifier(
    c=params["c"], n_iter=params["n_iter"], max_card=params["max_card"], min_support=params["min_support"],
    policy=params["policy"], mode=params["mode"], fairness=params["fairness"], epsilon=params["epsilon"],
    min_vect=protected, maj_vect=1 - protected, verbosity=["progress"],
)
cpu0, wall0 = time.process_time(), time.perf_counter()
clf.fit(X, y, features=features, prediction_name=params["target"], time_limit=params["time_limit"])
cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
rl = clf.rl()
names = list(rl.features)
rules = []
for rule in rl.rules[:-1]:
    ante = [names[a - 1] if a > 0 else "not " + names[-a - 1] for a in rule["antecedents"]]
    rules.append([ante, int(rule["prediction"])])
out = {
    "cpu_seconds": cpu, "wall_seconds": wall, "rules": rules, "default": int(rl.rules[-1]["prediction"]),
    "predictions": [int(p) for p in clf.predict(X)], "text": str(rl),
}
print("FAIRCORELS-RESULT " + json.dumps(out))
"""


def ensure_venv(venv: Path) -> Path:
    """The venv's python, with FairCORELS 1.0 importable (created once, module docstring)."""
    python = venv / "bin" / "python"
    probe = [
        str(python),
        "-c",
        "import numpy, time; numpy.bool = bool; time.clock = time.process_time; import faircorels",
    ]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    if not any(
        Path(d, "gmp.h").exists() for d in ("/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/local/include")
    ):
        if os.geteuid() != 0:
            raise SystemExit("faircorels_peer: FairCORELS needs the GMP headers: apt-get install libgmp-dev (as root)")
        subprocess.run(["apt-get", "install", "-y", "libgmp-dev"], check=True)
    print(f"faircorels_peer: creating {venv} (FairCORELS 1.0, a few minutes, once)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "pip<25"], check=True)
    subprocess.run([*pip, *VENV_PACKAGES], check=True)
    subprocess.run([*pip, "--no-build-isolation", "faircorels==1.0"], check=True)
    subprocess.run(probe, check=True)
    return python


def run_faircorels(
    python: Path, npz: Path, case: Case, settings: Settings, fairness: int, epsilon: float, driver: Path
) -> dict[str, Any]:
    """One FairCORELS fit in a fresh process; its times, list and predictions, and its exit."""
    params = {
        "c": settings.lam,
        "n_iter": settings.max_nodes,
        "max_card": settings.max_card,
        "min_support": settings.min_support,
        "policy": settings.policy,
        "mode": settings.mode,
        "fairness": fairness,
        "epsilon": epsilon,
        "target": case.target,
        "time_limit": settings.time_limit,
    }
    proc = subprocess.run([str(python), str(driver), str(npz), json.dumps(params)], capture_output=True, text=True)
    line = next((s for s in proc.stdout.splitlines() if s.startswith("FAIRCORELS-RESULT ")), None)
    if proc.returncode != 0 or line is None:
        return {"exit": proc.returncode, "error": (proc.stderr or proc.stdout)[-2000:]}
    out = json.loads(line.removeprefix("FAIRCORELS-RESULT "))
    out["exit"] = proc.returncode
    out.update(parse_progress(proc.stdout.splitlines()))
    return out


def parse_progress(lines: Sequence[str]) -> dict[str, Any]:
    """What FairCORELS' ``progress`` output says at its end: why it stopped (``queue empty``: the
    search ran out; ``max number of nodes``: it hit ``n_iter`` or its CPU time limit, for it prints
    that same line for both), the least lower bound left in its
    queue (1 once the queue is empty), the objective it reports for its list, and its node counts.
    ``None`` for what it did not print."""
    out: dict[str, Any] = {
        "stopped_by": None,
        "hit_limit": None,
        "queue_lower_bound": None,
        "tree_nodes": None,
        "own_objective": None,
        "evaluated": None,
    }
    for line in lines:
        text = line.strip()
        if text.startswith("Exited because"):
            out["stopped_by"] = text.removeprefix("Exited because").strip()
            out["hit_limit"] = "max number of nodes" in text
        elif text.startswith("minimum objective:"):
            out["own_objective"] = float(text.split(":", 1)[1])
        elif text.startswith("minimum lower bound in queue:"):
            out["queue_lower_bound"] = float(text.split(":", 1)[1])
        elif text.startswith("final num_nodes:"):
            out["tree_nodes"] = int(text.split(":", 1)[1])
        elif text.startswith("final num_evaluated:"):
            out["evaluated"] = int(text.split(":", 1)[1])
    return out


# -- glasswork ---------------------------------------------------------------------------------------------


def glasswork_spec(
    case: Case, path: Path, settings: Settings, constraint: tuple[str, float] | None = None
) -> dict[str, Any]:
    """The same problem as a glasswork spec: every row, the protected columns audit-only; with
    ``constraint`` (metric, limit), ``constraints.fairness`` and ``limits.time``."""
    spec = {
        "name": f"faircorels-peer-{case.name}",
        "data": {
            "source": str(path),
            "target": case.target,
            "positive": 1,
            "audit_only": list(case.audit_columns),
            "split": {"kind": "none"},
        },
        "solver": "corels",
        "objective": {"regularization": settings.lam},
        "constraints": {"max_card": settings.max_card, "min_support": settings.min_support, "negations": False},
        "fairness": {"protected": {"column": case.protected, "value": 1}},
    }
    if constraint is not None:
        metric, at_most = constraint
        spec["constraints"]["fairness"] = {"metric": metric, "at_most": at_most}  # type: ignore[index]
        spec["limits"] = {"time": settings.glasswork_time}
        spec["search"] = {"threads": 1}
    return spec


def run_glasswork(
    case: Case, path: Path, settings: Settings, workdir: Path, constraint: tuple[str, float] | None = None
) -> dict[str, Any]:
    """``glasswork run --json`` on the spec, in a child process (its CPU time measured here)."""
    spec = workdir / f"{case.name}.yaml"
    spec.write_text(json.dumps(glasswork_spec(case, path, settings, constraint)), encoding="utf-8")  # JSON is YAML
    cli = Path(sys.executable).with_name("glasswork")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall0 = time.perf_counter()
    proc = subprocess.run([str(cli), "run", str(spec), "--json", "--no-store"], capture_output=True, text=True)
    wall = time.perf_counter() - wall0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        return {"exit": proc.returncode, "error": proc.stderr[-2000:]}
    run = json.loads(proc.stdout)
    train = (run.get("fairness") or {}).get("train") or {}
    metrics = run.get("metrics") or {}
    return {
        "exit": proc.returncode,
        "constraint": None if constraint is None else {"metric": constraint[0], "at_most": constraint[1]},
        "status": run["status"],
        "objective": run["objective"],
        "lower_bound": run["lower_bound"],
        "gap": run["gap"],
        "rules": int(metrics["rules"]) if "rules" in metrics else None,
        "rule_list": run["model_text"],
        "no_model": run.get("no_model"),
        "accuracy": metrics.get("train_accuracy"),
        "search_seconds": run["stats"]["elapsed"],
        "time_to_optimum": run["stats"]["time_to_optimum"],
        "process_cpu_seconds": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "process_wall_seconds": wall,
        **{m: train.get(m) for m in METRIC_NAMES},
    }


# -- the comparison ------------------------------------------------------------------------------------------


def compare(case: Case, settings: Settings, python: Path, metrics: Sequence[int]) -> dict[str, Any]:
    path = DATA / case.path
    data = prepare(case, path)
    with tempfile.TemporaryDirectory(prefix="glasswork-faircorels-") as tmp:
        work = Path(tmp)
        npz = work / "data.npz"
        np.savez(npz, X=data.X, y=data.y, protected=data.protected, features=json.dumps(data.features))
        driver = work / "driver.py"
        driver.write_text(DRIVER, encoding="utf-8")
        glass = run_glasswork(case, path, settings, work)
        constrained = [
            run_glasswork(case, path, settings, work, (METRIC_NAMES[k - 1], settings.limit)) for k in metrics
        ]
        rows = []
        for fairness, epsilon in [(1, 0.0)] + [(k, 1.0 - settings.limit) for k in metrics]:
            peer = run_faircorels(python, npz, case, settings, fairness, epsilon, driver)
            row: dict[str, Any] = {
                "constraint": None
                if epsilon == 0.0
                else {"metric": METRIC_NAMES[fairness - 1], "at_most": settings.limit},
                "fairness": fairness,
                "epsilon": epsilon,
                **{k: v for k, v in peer.items() if k not in ("predictions", "rules", "default")},
            }
            if "error" not in peer:
                model = to_rule_list(
                    PeerList([(a, p) for a, p in peer["rules"]], peer["default"]), data.features, data.y, data.X
                )
                row.update(figures(model, data, settings.lam))
                row["predictions_agree"] = bool(np.array_equal(model.predict(data.X), np.asarray(peer["predictions"])))
                if row["constraint"] is not None:
                    value = row[row["constraint"]["metric"]]
                    row["meets_limit"] = value is not None and value <= settings.limit + 1e-12
            rows.append(row)
    return {
        "case": case.name,
        "data": case.path,
        "rows_n": int(data.y.size),
        "features": len(data.features),
        "protected": f"{case.protected} = 1",
        "protected_rows": int(data.protected.sum()),
        "glasswork": glass,
        "glasswork_constrained": constrained,
        "faircorels": rows,
    }


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def _line(label: str, status: str, row: dict[str, Any], cpu: float, wall: float, tail: str = "") -> str:
    return (
        f"{label:<44} {status:<16} {row['objective']:>7.4f} {row['accuracy']:>7.4f} {row['rules']:>5} "
        f"{_fmt(row['statistical_parity']):>7} {cpu:>7.2f} {wall:>7.2f}{tail}"
    )


def print_table(result: dict[str, Any]) -> None:
    print(
        f"\n{result['case']}: {result['data']}, {result['rows_n']} rows, {result['features']} rule columns, "
        f"protected {result['protected']} ({result['protected_rows']} rows)"
    )
    head = ("status", "obj", "acc", "rules", "SP", "cpu s", "wall s")
    print(
        f"{'tool / constraint':<44} {head[0]:<15} "
        + " ".join(f"{h:>{w}}" for h, w in zip(head[1:], (7, 7, 5, 7, 7, 7)))
    )
    g = result["glasswork"]
    if "error" in g:
        print(f"{'glasswork (none)':<44} failed: {printable(g['error'].strip()[-200:])}")
    else:
        status = f"{g['status']} gap {_fmt(g['gap'], 2)}"
        tail = f"   (search {g['search_seconds']:.3f} s)"
        print(_line("glasswork CORELS (none)", status, g, g["process_cpu_seconds"], g["process_wall_seconds"], tail))
    for row in result["faircorels"]:
        limit = row["constraint"]
        label = "FairCORELS (none)" if limit is None else f"FairCORELS {limit['metric']} <= {limit['at_most']}"
        if "error" in row:
            print(f"{label:<44} exit {row['exit']}: {printable(row['error'].strip()[-200:])}")
            continue
        status = "nodes/time limit" if row["hit_limit"] else printable(row["stopped_by"] or "?")[:16]
        tail = f"   own objective {_fmt(row.get('own_objective'))}"
        if row["hit_limit"]:
            tail += f", queue bound {_fmt(row['queue_lower_bound'])}"
        if limit is not None:
            tail += f", {limit['metric']} = {_fmt(row[limit['metric']])}"
        print(_line(label, status, row, row["cpu_seconds"], row["wall_seconds"], tail))
    peers = {json.dumps(r["constraint"]): r for r in result["faircorels"] if r["constraint"] is not None}
    for row in result.get("glasswork_constrained", []):
        limit = row.get("constraint") or {}
        label = f"glasswork {limit.get('metric')} <= {limit.get('at_most')}"
        if "error" in row:
            print(f"{label:<44} exit {row['exit']}: {printable(row['error'].strip()[-200:])}")
            continue
        if row["objective"] is None:
            print(f"{label:<44} {row['status']:<16} no model: {printable(row['no_model'] or '')}")
            continue
        peer = peers.get(json.dumps(limit))
        tail = f"   (to optimum {row['time_to_optimum']:.3f} s"
        if peer is not None and "cpu_seconds" in peer and row["process_cpu_seconds"] > 0:
            tail += f"; FairCORELS cpu / glasswork cpu = {peer['cpu_seconds'] / row['process_cpu_seconds']:.2f}"
        tail += f"; {limit.get('metric')} = {_fmt(row[limit.get('metric')])})"
        status = f"{row['status']} gap {_fmt(row['gap'], 2)}"
        print(_line(label, status, row, row["process_cpu_seconds"], row["process_wall_seconds"], tail))
    for row in [g, *result.get("glasswork_constrained", []), *result["faircorels"]]:
        if row.get("rule_list"):
            who = (
                f"glasswork {row['constraint']['metric']}" if row.get("constraint") and "fairness" not in row
                else "glasswork" if row is g else f"FairCORELS fairness={row['fairness']} eps={row['epsilon']}"
            )  # fmt: skip
            print(f"  {who}: " + " / ".join(printable(line) for line in row["rule_list"].splitlines()))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="+", choices=sorted(CASES), default=["compas", "adult"])
    ap.add_argument(
        "--metrics", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6], help="FairCORELS fairness= values to constrain"
    )
    ap.add_argument("--max-nodes", type=int, default=Settings.max_nodes, help="FairCORELS n_iter (its node limit)")
    ap.add_argument("--time-limit", type=int, help="FairCORELS' CPU-second limit per fit (default none)")
    ap.add_argument(
        "--glasswork-time",
        type=int,
        default=Settings.glasswork_time,
        help="limits.time of glasswork's constrained runs",
    )
    ap.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    ap.add_argument("--json", action="store_true", help="print one JSON document instead of the tables")
    ap.add_argument("--show", type=Path, help="print the tables of a saved --json document, run nothing")
    args = ap.parse_args(argv)
    if args.show is not None:
        show(json.loads(args.show.read_text(encoding="utf-8")))
        return 0
    settings = Settings(max_nodes=args.max_nodes, time_limit=args.time_limit, glasswork_time=args.glasswork_time)
    for name in args.cases:  # before the venv is built: a missing table is said at once
        if not (DATA / CASES[name].path).is_file():
            print(f"faircorels_peer: no file {str(DATA / CASES[name].path)!r}; set GLASSWORK_DATA", file=sys.stderr)
            return 2
    python = ensure_venv(args.venv.expanduser())
    load = os.getloadavg()
    results = []
    for name in args.cases:
        try:
            results.append(compare(CASES[name], settings, python, args.metrics))
        except DataError as exc:
            print(f"faircorels_peer: {exc}", file=sys.stderr)
            return 2
    doc = {
        "settings": settings.__dict__,
        "load_before": load,
        "load_after": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cases": results,
    }
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        show(doc)
    return 0


def show(doc: dict[str, Any]) -> None:
    print(f"{doc['date']}, load {doc['load_before'][0]:.2f} -> {doc['load_after'][0]:.2f}; settings {doc['settings']}")
    for result in doc["cases"]:
        print_table(result)


if __name__ == "__main__":
    sys.exit(main())
