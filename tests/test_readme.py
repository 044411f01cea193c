"""README.md opens with the two commands CI runs, word for word."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).parent.parent


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block, "README.md must open with a bash block"
    assert text.index(block.group(0)) < text.index("## "), "the commands come before any section"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_install_and_test_commands():
    install, tests = readme_commands()
    assert install.startswith('pip install -e ".[test]"') and "glasswork run specs/" in install
    assert "pytest" in tests


def test_ci_runs_the_readme_commands_verbatim():
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    for command in readme_commands():
        assert any(line == command or line.startswith(command + " ||") for line in ci), (
            f"{command!r} is in the README but not in .ci/run"
        )


def test_the_readme_example_spec_exists():
    install, _ = readme_commands()
    spec = re.search(r"glasswork run (\S+)", install).group(1)
    assert (REPO / spec).is_file()


def test_the_readme_spec_example_validates():
    from glasswork.hooks.registry import Registry
    from glasswork.spec.load import validate_spec
    from ruamel.yaml import YAML

    text = (REPO / "README.md").read_text()
    example = re.search(r"```yaml\n(name:.*?)```", text, re.S).group(1)
    spec = validate_spec(YAML(typ="safe").load(example), Registry(entry_points=False, disabled=()))
    assert spec.solver == "corels"


def readme_spec_block() -> str:
    text = (REPO / "README.md").read_text()
    return re.search(r"```yaml\n(name:.*?)```", text, re.S).group(1)


def test_the_readme_spec_example_certifies(tmp_path):
    """The spec a newcomer copies first must finish with a certificate, not stop at its limits."""
    from glasswork.running.launch import Launch

    (tmp_path / "readme.yaml").write_text(readme_spec_block())
    launch = Launch.from_file(tmp_path / "readme.yaml", no_store=True)
    outcome = launch.run()
    assert outcome.status.value == "optimal", (outcome.status, outcome.result.stats.get("antecedents"))
    assert outcome.result.stats["antecedents"] < 1000  # a small search, not a lucky one


@pytest.mark.slow
def test_the_readme_rashomon_example_runs_to_a_complete_set_and_its_commands_work(tmp_path, monkeypatch):
    """The "Rashomon sets" section's spec, run as written: the optimum certified, the set complete
    (as the section says), and each of its `glasswork rashomon` and `export` commands exits 0 on
    the recorded run, its filters naming a feature or a raw column of the data."""
    import shlex

    from click.testing import CliRunner
    from glasswork.cli import cli
    from ruamel.yaml import YAML

    text = (REPO / "README.md").read_text()
    section = text[text.index("## Rashomon sets") :].split("\n## ", 1)[0]
    block = re.search(r"```yaml\n(name:.*?)```", section, re.S).group(1)
    assert YAML(typ="safe").load(block)["rashomon"]["epsilon"] == 0.01
    (tmp_path / "set.yaml").write_text(block)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    ran = runner.invoke(cli, ["run", "--json", "-q", "set.yaml"], catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    doc = json.loads(ran.stdout)
    assert doc["status"] == "optimal" and doc["rashomon"]["complete"] and doc["rashomon"]["count"] > 100
    commands = re.search(r"```bash\n(glasswork rashomon.*?)```", section, re.S).group(1)
    for line in commands.splitlines():
        words = shlex.split(line, comments=True)
        assert words[0] == "glasswork"
        result = runner.invoke(cli, words[1:], catch_exceptions=False)
        assert result.exit_code == 0, (line, result.output)
        if "--avoids" in words:  # sex-blind: no member's rule looks at the column named
            column = words[words.index("--avoids") + 1]
            listed = runner.invoke(cli, [*words[1:], "--json"], catch_exceptions=False)
            models = json.loads(listed.stdout)["models"]
            assert models and all(not any(f.startswith(column + ":") for f in m["features"]) for m in models)


def test_the_readme_states_the_prefixes_its_spec_and_its_first_command_evaluate(tmp_path):
    """Issue 36: the README's figure (3.2 M prefixes) was its snippet's, beside a first command whose
    spec evaluates 17.2 M; and that spec's comment spoke of pairs while it sets max_card 1."""
    from glasswork.running.launch import Launch
    from ruamel.yaml import YAML

    text = (REPO / "README.md").read_text()
    example = re.search(r"```yaml\n(name:.*?)```", text, re.S).group(1)
    (tmp_path / "snippet.yaml").write_text(example)
    install, _ = readme_commands()
    first = REPO / re.search(r"glasswork run (\S+)", install).group(1)
    for spec in (tmp_path / "snippet.yaml", first):
        evaluated = Launch.from_file(spec, [], no_store=True).run([]).result.stats["evaluated"]
        assert f"{evaluated / 1e6:.1f} M" in text, (spec.name, evaluated)
    document = YAML(typ="safe").load(first.read_text())
    comment = "".join(line for line in first.read_text().splitlines() if line.startswith("#"))
    if document["constraints"].get("max_card", 1) < 2:
        assert "negations and pairs" not in comment and "would add pairs" in comment


@pytest.mark.slow  # about 15 s: the COMPAS set, then every command of the workflow
@pytest.mark.skipif(
    not (Path(__import__("os").environ.get("GLASSWORK_DATA", "/nonexistent")) / "pycorels" / "compas.csv").is_file(),
    reason="needs GLASSWORK_DATA (pycorels)",
)
def test_the_readme_workflow_on_the_compas_set_runs_as_written(tmp_path, monkeypatch):
    """Issue 38: "Choosing a model from the set", command by command on a new file of COMPAS rows:
    the spec gives its 44 lists, the filter keeps some, the set predicts every row, its SQL and
    the report (with the set explorer) are written."""
    import os
    import shlex

    import pandas as pd
    from click.testing import CliRunner
    from glasswork.cli import cli

    text = (REPO / "README.md").read_text()
    section = text[text.index("### Choosing a model from the set") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    table = pd.read_csv(Path(os.environ["GLASSWORK_DATA"]) / "pycorels" / "compas.csv")
    table.sample(200, random_state=0).drop(columns=["Recidivate-Within-Two-Years"]).to_csv(
        tmp_path / "new.csv", index=False
    )
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    db = ["--db", str(tmp_path / "runs.duckdb")]
    for line in block.splitlines():
        words = shlex.split(line, comments=True)
        assert words[0] == "glasswork"
        words = [str(REPO / w) if w.startswith("specs/") else w for w in words]
        result = runner.invoke(cli, [*words[1:], *db], catch_exceptions=False)
        assert result.exit_code == 0, (line, result.output)
        if words[1] == "rashomon":
            listed = runner.invoke(cli, [*words[1:], *db, "--json"], catch_exceptions=False)
            assert 0 < len(json.loads(listed.stdout)["models"]) < 44
    doc = json.loads(runner.invoke(cli, ["rashomon", "latest", "--json", "--limit", "100", *db]).stdout)
    assert doc["count"] == 44 and doc["complete"] and all(m["metrics"]["test_auc"] for m in doc["models"])
    assert len(pd.read_csv(tmp_path / "set.csv")) == 200 and (tmp_path / "set.sql").read_text().startswith("--")
    assert "id=gx-data" in (tmp_path / "compas.html").read_text()
