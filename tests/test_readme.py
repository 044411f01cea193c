"""README.md opens with the two commands CI runs, word for word."""

from __future__ import annotations

import re
from pathlib import Path

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
    from ruamel.yaml import YAML

    from glasswork.registry import Registry
    from glasswork.spec import validate_spec

    text = (REPO / "README.md").read_text()
    example = re.search(r"```yaml\n(name:.*?)```", text, re.S).group(1)
    spec = validate_spec(YAML(typ="safe").load(example), Registry(entry_points=False, disabled=()))
    assert spec.solver == "corels"


def readme_spec_block() -> str:
    text = (REPO / "README.md").read_text()
    return re.search(r"```yaml\n(name:.*?)```", text, re.S).group(1)


def test_the_readme_spec_example_certifies(tmp_path):
    """The spec a newcomer copies first must finish with a certificate, not stop at its limits."""
    from glasswork.launch import Launch

    (tmp_path / "readme.yaml").write_text(readme_spec_block())
    launch = Launch.from_file(tmp_path / "readme.yaml", no_store=True)
    outcome = launch.run()
    assert outcome.status.value == "optimal", (outcome.status, outcome.result.stats.get("antecedents"))
    assert outcome.result.stats["antecedents"] < 1000  # a small search, not a lucky one


def test_the_readme_rashomon_example_is_a_valid_spec_and_its_filters_name_real_features():
    """The "Rashomon sets" section's spec validates for CORELS once CORELS enumerates sets; until
    then CORELS refuses it at the section's line, exactly as the section says a solver that cannot
    must. Either way the rest of the spec and the section itself are valid, and every feature the
    commands filter on is a feature of its data."""
    import shlex

    from ruamel.yaml import YAML

    from glasswork.launch import Launch
    from glasswork.registry import Registry
    from glasswork.spec import RashomonSpec, SpecError, validate_spec

    text = (REPO / "README.md").read_text()
    section = text[text.index("## Rashomon sets") :].split("\n## ", 1)[0]
    doc = YAML(typ="safe").load(re.search(r"```yaml\n(name:.*?)```", section, re.S).group(1))
    registry = Registry(entry_points=False, disabled=())
    assert RashomonSpec.model_validate(doc["rashomon"]).epsilon == 0.05
    if registry.solver("corels").supports_rashomon:
        assert validate_spec(doc, registry).rashomon is not None
    else:
        try:
            validate_spec(doc, registry)
        except SpecError as exc:
            assert "does not enumerate Rashomon sets" in str(exc)
        else:
            raise AssertionError("a solver without Rashomon support accepted the section")
    plain = validate_spec({k: v for k, v in doc.items() if k != "rashomon"}, registry)
    names = set(Launch(plain, registry=registry, no_store=True).prepare().feature_names)
    commands = re.search(r"```bash\n(glasswork rashomon.*?)```", section, re.S).group(1)
    filtered = [
        words[i + 1]
        for line in commands.splitlines()
        for words in [shlex.split(line, comments=True)]
        for i, word in enumerate(words)
        if word in ("--uses", "--avoids")
    ]
    assert filtered and set(filtered) <= names, set(filtered) - names
