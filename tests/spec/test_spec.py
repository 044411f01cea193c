"""Spec loading: every invalid case gives FILE:LINE:COL: path: message, and valid specs round-trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from glasswork.spec.document import TOP_LEVEL_KEYS, SpecError
from glasswork.spec.load import json_schema, load_spec
from spec_files import write

VALID = """\
name: tiny
solver: toy
data:
  source: sklearn:breast_cancer
  binarize:
    thresholds: 2
objective:
  regularization: 1e-3
limits:
  time: 10
  memory: 2GiB
"""


def issues_of(path: Path, registry) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path, registry)
    return [str(i) for i in info.value.issues]


def test_valid_yaml_loads_with_defaults_and_numbers(tmp_path, toy_registry):
    loaded = load_spec(write(tmp_path / "ok.yaml", VALID), toy_registry)
    spec = loaded.spec
    assert spec.solver == "toy"
    assert spec.objective.regularization == pytest.approx(1e-3)  # ruamel reads 1e-3 as a number
    assert int(spec.limits.memory) == 2 * 1024**3
    assert spec.search.behaviour == "exact"
    assert loaded.base_dir == tmp_path


def test_json_spec_is_equivalent_to_yaml(tmp_path, toy_registry):
    yaml_spec = load_spec(write(tmp_path / "ok.yaml", VALID), toy_registry).spec
    doc = yaml_spec.resolved()
    json_spec = load_spec(write(tmp_path / "ok.json", json.dumps(doc, indent=2)), toy_registry).spec
    assert json_spec == yaml_spec
    assert json_spec.spec_hash() == yaml_spec.spec_hash()


def test_unknown_key_is_located_and_suggests_the_right_one(tmp_path, toy_registry):
    text = VALID.replace("  regularization: 1e-3", "  regularisation: 1e-3")
    [issue] = issues_of(write(tmp_path / "s.yaml", text), toy_registry)
    assert issue.startswith(f"{tmp_path / 's.yaml'}:8:3: objective.regularisation: unknown key")
    assert "did you mean 'regularization'" in issue


def test_unknown_top_level_key(tmp_path, toy_registry):
    [issue] = issues_of(write(tmp_path / "s.yaml", VALID + "colour: red\n"), toy_registry)
    assert ":12:1: colour: unknown key 'colour'" in issue
    assert "objective" in issue  # lists the allowed keys
    assert "unknown key 'colour'; allowed keys here: " in issue  # one sentence, not two run together


def test_an_unknown_key_close_to_one_reads_as_one_sentence(tmp_path, toy_registry):
    text = VALID.replace("  regularization: 1e-3", "  regularisation: 1e-3")
    [issue] = issues_of(write(tmp_path / "s.yaml", text), toy_registry)
    assert "did you mean 'regularization'; allowed keys here: " in issue


def test_wrong_type(tmp_path, toy_registry):
    text = VALID.replace("time: 10", "time: soon")
    [issue] = issues_of(write(tmp_path / "s.yaml", text), toy_registry)
    assert ":10:9: limits.time:" in issue and "'soon'" in issue


def test_out_of_range_number(tmp_path, toy_registry):
    text = VALID.replace("regularization: 1e-3", "regularization: 2.5")
    [issue] = issues_of(write(tmp_path / "s.yaml", text), toy_registry)
    assert ":8:19: objective.regularization: Input should be less than or equal to 1 (got 2.5)" in issue


def test_bad_literal_lists_allowed_values(tmp_path, toy_registry):
    text = VALID + "search:\n  behaviour: quick\n"
    [issue] = issues_of(write(tmp_path / "s.yaml", text), toy_registry)
    assert ":13:14: search.behaviour:" in issue
    assert "'exact'" in issue and "'endless'" in issue


def test_every_error_is_reported_not_just_the_first(tmp_path, toy_registry):
    text = VALID.replace("time: 10", "time: -1").replace("thresholds: 2", "thresholds: 0")
    issues = issues_of(write(tmp_path / "s.yaml", text), toy_registry)
    assert len(issues) == 2
    assert any("data.binarize.thresholds" in i for i in issues)
    assert any("limits.time" in i for i in issues)


def test_missing_required_key(tmp_path, toy_registry):
    text = VALID.replace("name: tiny\n", "")
    [issue] = issues_of(write(tmp_path / "s.yaml", text), toy_registry)
    assert issue.endswith("name: required key is missing")


def test_unknown_solver_lists_installed_ones(tmp_path, toy_registry):
    text = VALID.replace("solver: toy", "solver: corelz")
    [issue] = issues_of(write(tmp_path / "s.yaml", text), toy_registry)
    assert ":2:9: solver: unknown solver 'corelz'; installed solvers: toy (plugin 'toy', explicit)" in issue


def test_missing_solver(tmp_path, toy_registry):
    text = VALID.replace("solver: toy\n", "")
    [issue] = issues_of(write(tmp_path / "s.yaml", text), toy_registry)
    assert "missing key 'solver'" in issue


def test_malformed_yaml(tmp_path, toy_registry):
    text = "name: x\nsolver: toy\ndata:\n  source: [unclosed\n"
    [issue] = issues_of(write(tmp_path / "s.yaml", text), toy_registry)
    assert issue.startswith(f"{tmp_path / 's.yaml'}:5:1: invalid YAML:")


def test_duplicate_yaml_key(tmp_path, toy_registry):
    [issue] = issues_of(write(tmp_path / "s.yaml", VALID + "name: again\n"), toy_registry)
    assert "invalid YAML" in issue and ":12:1:" in issue


def test_malformed_json(tmp_path, toy_registry):
    text = '{\n  "name": "x",\n  "solver": "toy",\n  "data": {"source": "sklearn:iris",}\n}\n'
    [issue] = issues_of(write(tmp_path / "s.json", text), toy_registry)
    assert issue.startswith(f"{tmp_path / 's.json'}:4:") and "invalid JSON" in issue


def test_json_errors_carry_positions(tmp_path, toy_registry):
    text = '{\n  "name": "x",\n  "solver": "toy",\n  "data": {"source": "sklearn:iris"},\n  "limits": {"nodes": 0}\n}\n'
    [issue] = issues_of(write(tmp_path / "s.json", text), toy_registry)
    assert ":5:23: limits.nodes: Input should be greater than 0" in issue


def test_spec_must_be_a_mapping(tmp_path, toy_registry):
    [issue] = issues_of(write(tmp_path / "s.yaml", "- a\n- b\n"), toy_registry)
    assert "a spec must be a mapping" in issue
    [issue] = issues_of(write(tmp_path / "e.yaml", ""), toy_registry)
    assert "empty file" in issue


def test_missing_file(tmp_path, toy_registry):
    [issue] = issues_of(tmp_path / "nope.yaml", toy_registry)
    assert issue.endswith("file not found")


def test_file_source_needs_a_target(tmp_path, toy_registry):
    text = VALID.replace("sklearn:breast_cancer", "data.csv")
    [issue] = issues_of(write(tmp_path / "s.yaml", text), toy_registry)
    assert "data:" in issue and "target" in issue


def test_spec_hash_ignores_formatting_but_not_values(tmp_path, toy_registry):
    a = load_spec(write(tmp_path / "a.yaml", VALID), toy_registry).spec
    b = load_spec(write(tmp_path / "b.yaml", "# comment\n" + VALID.replace("1e-3", "0.001")), toy_registry).spec
    c = load_spec(write(tmp_path / "c.yaml", VALID.replace("1e-3", "0.002")), toy_registry).spec
    assert a.spec_hash() == b.spec_hash() != c.spec_hash()


def test_schema_is_built_from_registered_models(toy_registry):
    schema = json_schema(toy_registry)
    text = json.dumps(schema)
    assert schema["title"] == "glasswork problem spec"
    assert "ToySearch" in text and "regularization" in text
    assert schema.get("additionalProperties") is False or '"additionalProperties": false' in text


def test_a_solver_without_rashomon_support_refuses_the_section_at_its_line(tmp_path, toy_registry, monkeypatch):
    import toy_plugin

    monkeypatch.setattr(toy_plugin.ToySolver, "supports_rashomon", False)
    [issue] = issues_of(write(tmp_path / "s.yaml", VALID + "rashomon:\n  epsilon: 0.05\n"), toy_registry)
    assert issue.startswith(f"{tmp_path / 's.yaml'}:12:1: rashomon: solver 'toy' does not enumerate Rashomon sets")


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("rashomon: {}\n", "give either epsilon"),
        ("rashomon: {epsilon: 0.1, threshold: 0.3}\n", "not both"),
        ("rashomon: {epsilon: -0.1}\n", "greater than or equal to 0"),
        ("rashomon: {threshold: 0.3, max_models: 0}\n", "greater than 0"),
        ("rashomon: {threshold: 0.3, keep: everything}\n", "'model' or 'summary'"),
    ],
)
def test_a_bad_rashomon_section_is_a_spec_error(tmp_path, toy_registry, section, message):
    issues = issues_of(write(tmp_path / "s.yaml", VALID + section), toy_registry)
    assert any(message in issue for issue in issues), issues


def test_a_spec_without_rashomon_hashes_as_before_the_section_existed(tmp_path, toy_registry):
    spec = load_spec(write(tmp_path / "a.yaml", VALID), toy_registry).spec
    # the hash is of the resolved document: without the sections (rashomon, fairness and
    # data.audit_only) it has the keys it always had
    assert set(spec.resolved()) == set(TOP_LEVEL_KEYS) - {"rashomon", "fairness"}
    assert "audit_only" not in spec.resolved()["data"]


def test_a_mistake_given_by_set_is_located_at_that_argument_not_at_a_line_of_the_file(tmp_path, toy_registry):
    """Issue 36: ``--set`` errors were reported at the line of the file whose value they replaced
    (or the line of their section, for a new key)."""
    path = write(tmp_path / "s.yaml", VALID)
    with pytest.raises(SpecError) as info:
        load_spec(
            path,
            toy_registry,
            overrides=["objective.regularisation=0.1", "limits.time=-1", "limits.time=-2", "limits.memory=2GB"],
        )
    found = sorted(map(str, info.value.issues))
    assert found[0].startswith("--set 'limits.time=-2': limits.time: ")  # the last --set of a field wins
    assert found[1].startswith("--set 'objective.regularisation=0.1': objective.regularisation: unknown key")
    assert len(found) == 2 and not any(str(path) in issue for issue in found)
    # a mistake of the file itself stays at its line, beside a --set of another field
    text = VALID.replace("  time: 10", "  time: -10")
    [issue] = issues_of_overridden(write(tmp_path / "t.yaml", text), toy_registry, ["objective.regularization=0.5"])
    assert issue.startswith(f"{tmp_path / 't.yaml'}:10:9: limits.time")


def issues_of_overridden(path: Path, registry, overrides: list[str]) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path, registry, overrides=overrides)
    return [str(i) for i in info.value.issues]
