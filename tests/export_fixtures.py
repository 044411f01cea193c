"""One recorded run of every built-in solver's example spec (made quick where it is long), for
the export and report tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from glasswork.running.launch import Launch
from glasswork.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("GLASSWORK_DATA", ROOT.parent / "shared" / "datasets"))

# (spec, overrides): every solver's example spec, made quick where the example is long
CASES = {
    "corels_compas": ("corels_compas.yaml", ()),
    "corels_breast_cancer": ("corels_breast_cancer.yaml", ("objective.regularization=0.03",)),
    "fasterrisk_adult": ("fasterrisk_adult.yaml", ()),
    "fasterrisk_breast_cancer": ("fasterrisk_breast_cancer.yaml", ()),
    "moss_diabetes": (
        "moss_diabetes_frontier.yaml",
        ("objective.candidates.trees=50", "constraints.frontier.points=3", "constraints.max_rules=4"),
    ),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[object, dict, Launch]]]:
    if not (DATA / "corels").is_dir():
        pytest.skip(f"the shared data sets are not at {DATA} (set GLASSWORK_DATA)")
    with pytest.MonkeyPatch.context() as patch:  # the module's tests reload data: keep it set for them
        patch.setenv("GLASSWORK_DATA", str(DATA))
        db = tmp_path_factory.mktemp("export") / "runs.duckdb"
        out = {}
        for case, (spec, overrides) in CASES.items():
            launch = Launch.from_file(ROOT / "specs" / spec, list(overrides), db=db)
            outcome = launch.run([])
            details = RunStore(db).open().details(outcome.info.run_id)
            out[case] = (outcome, details, launch)
        yield out
