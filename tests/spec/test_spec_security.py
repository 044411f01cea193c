"""What a spec may reach besides its data (issue 17, docs/security.md): the store file it names
stays in its own folder, and a ``${VAR}`` in a path never echoes the variable's value."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.data import DataError, DataSpec, load_problem
from glasswork.spec.models import StoreSpec


@pytest.mark.parametrize(
    "path",
    [
        "/tmp/elsewhere.duckdb",
        "../up.duckdb",
        "a/../../up.duckdb",
        "~/x.duckdb",
        "${HOME}/x.duckdb",
        "notes.txt",
        ".bashrc",
        "C:/x.duckdb",
    ],
)
def test_a_spec_cannot_put_the_store_outside_its_folder(path):
    with pytest.raises(ValueError, match="inside its own folder"):
        StoreSpec(path=path)


def test_a_spec_may_name_a_store_in_its_folder():
    assert StoreSpec(path="runs/history.duckdb").path == "runs/history.duckdb"


def test_validate_names_the_field_with_exit_2(tmp_path, toy_env):
    spec = tmp_path / "s.yaml"
    spec.write_text("name: x\nsolver: toy\ndata: {source: sklearn:iris}\nstore: {path: /etc/glasswork.duckdb}\n")
    result = CliRunner().invoke(cli, ["validate", str(spec)])
    assert result.exit_code == 2 and "store.path" in result.stderr and "--db" in result.stderr


def test_an_expanded_variable_is_never_echoed(tmp_path, monkeypatch):
    monkeypatch.setenv("GW_SECRET_TOKEN", "hunter2-s3cr3t")
    for source in ("${GW_SECRET_TOKEN}.csv", "${GW_SECRET_TOKEN}"):
        with pytest.raises(DataError) as err:
            load_problem(DataSpec(source=source, target="y"), tmp_path)
        assert "hunter2" not in str(err.value) and "GW_SECRET_TOKEN" in str(err.value)
