"""bench/faircorels_peer.py's own parts: reading the table both tools get, rebuilding FairCORELS'
list as a glasswork list, the objective, and reading FairCORELS' exit. The FairCORELS run itself
is tested only where its venv exists (the script creates it; it is not a test dependency)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "faircorels_peer.py"
_spec = importlib.util.spec_from_file_location("faircorels_peer", BENCH)
assert _spec is not None and _spec.loader is not None
peer = importlib.util.module_from_spec(_spec)
sys.modules["faircorels_peer"] = peer
_spec.loader.exec_module(peer)

CASE = peer.Case("toy", "toy.csv", "y", "grp=a", ("grp=a", "grp=b"))


def write(path: Path, header: list[str], rows: np.ndarray) -> Path:
    path.write_text(",".join(header) + "\n" + "\n".join(",".join(str(int(v)) for v in r) for r in rows) + "\n")
    return path


def random_table(tmp_path: Path, seed: int = 0, n: int = 300) -> tuple[Path, np.ndarray]:
    rng = np.random.default_rng(seed)
    feats = rng.integers(0, 2, size=(n, 4))
    grp = rng.integers(0, 2, size=n)
    y = ((feats[:, 0] | feats[:, 1]) ^ (rng.random(n) < 0.15)).astype(int)
    table = np.column_stack([feats[:, :2], grp, 1 - grp, feats[:, 2:], y])
    header = ["f0", "f1", "grp=a", "grp=b", "f2", "f3", "y"]
    return write(tmp_path / "toy.csv", header, table), table


def test_prepare_keeps_audit_columns_out_of_the_rules(tmp_path: Path) -> None:
    path, table = random_table(tmp_path)
    data = peer.prepare(CASE, path)
    assert data.features == ["f0", "f1", "f2", "f3"]
    assert data.X.dtype == np.uint8 and data.X.shape == (table.shape[0], 4)
    np.testing.assert_array_equal(data.X, table[:, [0, 1, 4, 5]])
    np.testing.assert_array_equal(data.y, table[:, 6])
    np.testing.assert_array_equal(data.protected, table[:, 2].astype(bool))


def test_prepare_refuses_a_value_that_is_not_0_or_1(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.csv", ["f0", "grp=a", "grp=b", "y"], np.array([[0, 1, 0, 1], [1, 0, 1, 2]]))
    with pytest.raises(peer.DataError, match=r"line 3, column 'y' holds 2\.0"):
        peer.prepare(CASE, path)


def test_prepare_names_a_missing_column_and_a_missing_file(tmp_path: Path) -> None:
    path = write(tmp_path / "short.csv", ["f0", "grp=a", "y"], np.array([[0, 1, 1]]))
    with pytest.raises(peer.DataError, match="no column 'grp=b'"):
        peer.prepare(CASE, path)
    with pytest.raises(peer.DataError, match="cannot be read"):
        peer.prepare(CASE, tmp_path / "absent.csv")


def test_rebuilt_list_predicts_and_scores_as_written() -> None:
    X = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [0, 0], [0, 1]], dtype=np.uint8)
    y = np.array([1, 1, 0, 0, 1, 1], dtype=np.uint8)
    # if a then 1 / else if not b then 0 / else 1
    model = peer.to_rule_list(peer.PeerList([(["a"], 1), (["not b"], 0)], 1), ["a", "b"], y, X)
    pred = model.predict(X)
    np.testing.assert_array_equal(pred, [1, 1, 1, 0, 0, 1])
    assert [r.counts for r in model.rules] == [[0, 2], [1, 1]]
    assert model.default_counts == [1, 1]
    # two errors (rows 2 and 4) in six, two rules
    assert peer.objective(y, pred, len(model.rules), 0.01) == pytest.approx(2 / 6 + 0.02)
    assert peer.majority_leaves(model)
    minority = peer.to_rule_list(peer.PeerList([(["a"], 0)], 1), ["a", "b"], y, X)
    assert not peer.majority_leaves(minority)


def test_rebuilt_list_refuses_an_unknown_antecedent() -> None:
    X = np.zeros((2, 1), dtype=np.uint8)
    with pytest.raises(peer.DataError, match="'c'"):
        peer.to_rule_list(peer.PeerList([(["c"], 1)], 0), ["a"], np.array([0, 1]), X)


def test_objective_agrees_with_glasswork_certified_objective(tmp_path: Path) -> None:
    """glasswork's own optimum, read back as a returned list and rescored by the script, has the
    objective glasswork certified: the two tools' rows are scored alike."""
    path, _ = random_table(tmp_path, seed=3)
    settings = peer.Settings(lam=0.01)
    run = peer.run_glasswork(CASE, path, settings, tmp_path)
    assert run["exit"] == 0, run.get("error")
    assert run["status"] == "optimal"
    rules = []
    for line in run["rule_list"].splitlines()[:-1]:
        antecedent = line.split("({", 1)[1].split("})", 1)[0]
        prediction = int(line.rsplit("({", 1)[1].split("})", 1)[0])
        rules.append(([antecedent], prediction))
    default = int(run["rule_list"].splitlines()[-1].rsplit("({", 1)[1].split("})", 1)[0])
    data = peer.prepare(CASE, path)
    figures = peer.figures(peer.to_rule_list(peer.PeerList(rules, default), data.features, data.y, data.X), data, 0.01)
    assert figures["objective"] == pytest.approx(run["objective"], abs=1e-12)
    assert figures["statistical_parity"] == pytest.approx(run["statistical_parity"], abs=1e-12)


def test_parse_progress_reads_the_exit() -> None:
    lines = [
        "LEARNING RULE LIST via BFS Prefix Map",
        "Exited because max number of nodes in the tree was reached",
        "minimum objective: 0.4521860272",
        "minimum lower bound in queue: 0.3491114500",
        "final num_nodes: 97123",
        "final num_evaluated: 21488",
    ]
    got = peer.parse_progress(lines)
    assert got == {
        "stopped_by": "max number of nodes in the tree was reached",
        "hit_limit": True,
        "queue_lower_bound": pytest.approx(0.34911145),
        "tree_nodes": 97123,
        "own_objective": pytest.approx(0.4521860272),
        "evaluated": 21488,
    }
    assert peer.parse_progress(["Exited because queue empty"])["hit_limit"] is False
    assert peer.parse_progress([])["stopped_by"] is None


VENV_PYTHON = peer.DEFAULT_VENV / "bin" / "python"


def _faircorels_installed() -> bool:
    if not VENV_PYTHON.exists():
        return False
    probe = "import numpy, time; numpy.bool = bool; time.clock = time.process_time; import faircorels"
    return subprocess.run([str(VENV_PYTHON), "-c", probe], capture_output=True).returncode == 0


@pytest.mark.skipif(
    not _faircorels_installed(), reason="FairCORELS' venv is not built (bench/faircorels_peer.py builds it)"
)
def test_faircorels_unconstrained_matches_glasswork_optimum(tmp_path: Path) -> None:
    path, _ = random_table(tmp_path, seed=5)
    data = peer.prepare(CASE, path)
    npz = tmp_path / "data.npz"
    np.savez(npz, X=data.X, y=data.y, protected=data.protected, features=peer.json.dumps(data.features))
    driver = tmp_path / "driver.py"
    driver.write_text(peer.DRIVER)
    settings = peer.Settings(lam=0.01, max_nodes=100_000)
    out = peer.run_faircorels(VENV_PYTHON, npz, CASE, settings, 1, 0.0, driver)
    assert out["exit"] == 0, out.get("error")
    assert out["hit_limit"] is False
    model = peer.to_rule_list(peer.PeerList(out["rules"], out["default"]), data.features, data.y, data.X)
    np.testing.assert_array_equal(model.predict(data.X), out["predictions"])
    glass = peer.run_glasswork(CASE, path, settings, tmp_path)
    assert peer.figures(model, data, 0.01)["objective"] == pytest.approx(glass["objective"], abs=1e-12)
    assert out["own_objective"] == pytest.approx(glass["objective"], abs=1e-9)


def test_a_missing_table_is_said_before_anything_is_built(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(peer, "DATA", tmp_path)
    venv = tmp_path / "venv"
    assert peer.main(["--cases", "adult", "--venv", str(venv)]) == 2
    assert "risk-slim/adult_data.csv" in capsys.readouterr().err
    assert not venv.exists()
