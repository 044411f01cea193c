"""``glasswork rashomon RUN --curves``: the set's figures as epsilon grows, recorded with the set
and read back from the store as a table and as JSON (the same document ``run --json`` carries);
the card draws them; a set recorded without them is told so (exit 2), never shown empty curves."""

from __future__ import annotations

import json

import duckdb

from test_cli_rashomon import invoke  # noqa: F401  (the fixture: the CLI in-process, in tmp_path)
from test_cli_rashomon_figures import spec  # noqa: F401  (the toy solver's set, hostile column names)


def test_curves_are_stored_with_the_set_and_listed(invoke, spec, tmp_path):
    result = invoke("run", "--json", "-q", str(spec))
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)["rashomon"]
    recorded = document["multiplicity"]["curves"]
    points = recorded["points"]
    assert recorded["rows"] == ["train", "test"] and points["size"][-1] == document["kept"]
    assert points["size"] == sorted(points["size"]) and points["train_ambiguity"][0] == 0.0
    stored = invoke("rashomon", "latest", "--curves", "--json")
    assert stored.exit_code == 0, stored.output
    assert json.loads(stored.stdout)["curves"] == recorded  # read from the store, never recomputed
    text = invoke("rashomon", "latest", "--curves").stdout
    assert "the set as epsilon grows, exact at each of" in text
    assert "train_ambiguity" in text and "test_patterns" in text
    assert f"{points['size'][-1]:,}" in text and "\x1b" not in text
    assert invoke("report", "latest", "-o", "card.html").exit_code == 0
    card = (tmp_path / "card.html").read_text(encoding="utf-8").split("<h3>The set as epsilon grows</h3>")[1]
    assert "set size by epsilon" in card and "share of rows by epsilon" in card


def test_a_set_recorded_without_curves_is_told_so(invoke, spec, tmp_path):
    assert invoke("run", "-q", str(spec)).exit_code == 0
    con = duckdb.connect(str(tmp_path / "glasswork.duckdb"))
    try:
        # the figures as a set recorded before curves has them
        con.execute("UPDATE rashomon_sets SET multiplicity = json_merge_patch(multiplicity, '{\"curves\": null}')")
    finally:
        con.close()
    missing = invoke("rashomon", "latest", "--curves")
    assert missing.exit_code == 2 and "has no curves" in missing.stderr and "run its spec again" in missing.stderr
    as_json = invoke("rashomon", "latest", "--curves", "--json")
    assert as_json.exit_code == 2 and "has no curves" in as_json.stdout + as_json.stderr
    assert invoke("report", "latest", "-o", "card.html").exit_code == 0
    assert "The set as epsilon grows" not in (tmp_path / "card.html").read_text(encoding="utf-8")
