"""The documentation stays in step with the code it describes (as datasette's test_docs does)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from glasswork.hooks import specs as hookspecs

ROOT = Path(__file__).resolve().parent.parent


def _hookspecs() -> dict[str, list[str]]:
    """Every hook spec: its name and its arguments, in order."""
    return {
        name: list(inspect.signature(fn).parameters)
        for name, fn in vars(hookspecs).items()
        if callable(fn) and hasattr(fn, f"{hookspecs.PROJECT}_spec")
    }


def test_the_plugin_guides_hook_table_lists_every_hook_with_its_arguments():
    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    hook_table = text[text.index("| hook | what it is for |") :].split("\n\n", 1)[0]
    table = re.findall(r"^\| `(\w+)\(([^)]*)\)` \|", hook_table, re.MULTILINE)
    documented = {name: [a.strip() for a in args.split(",") if a.strip()] for name, args in table}
    assert documented == _hookspecs()


def test_every_hook_spec_has_a_docstring():
    for name in _hookspecs():
        assert (getattr(hookspecs, name).__doc__ or "").strip(), f"hook {name} has no docstring"


# -- the documents point only at what a user has -------------------------------------------------

DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
# the project's development folders, its private peer figures and specifications, its issue tracker
UNAVAILABLE = re.compile(r"\.\./shared|shared/docs|PEER-FIGURES|algorithms/\w+\.md|\bissues? \d+", re.IGNORECASE)


def unavailable_references(paths: list[Path]) -> list[str]:
    found = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in UNAVAILABLE.finditer(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)}")
    return found


def test_the_documents_point_at_nothing_a_user_does_not_have():
    assert unavailable_references(DOCUMENTS) == []


def test_the_reference_check_sees_a_reference(tmp_path: Path, monkeypatch):
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    page = tmp_path / "page.md"
    page.write_text("See `../shared/docs/algorithms/moss.md`,\nPEER-FIGURES.md and Issue 13 item 3.\n")
    assert unavailable_references([page]) == [
        "page.md:1: ../shared",
        "page.md:1: algorithms/moss.md",
        "page.md:2: PEER-FIGURES",
        "page.md:2: Issue 13",
    ]


def test_the_readmes_query_runs_with_what_glasswork_installs(toy_env, tmp_path: Path, monkeypatch):
    """The README's SQL example needs no DuckDB command-line tool (``pip install duckdb`` gives none)."""
    import shlex
    import subprocess
    import sys

    from click.testing import CliRunner
    from glasswork.cli import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(
        "name: q\nsolver: toy\ndata:\n  source: sklearn:breast_cancer\n  binarize: {thresholds: 2}\n"
    )
    assert CliRunner().invoke(cli, ["run", "s.yaml", "-q"], catch_exceptions=False).exit_code == 0
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("glasswork runs compare latest") :].split("```", 1)[0]
    [query] = [line for line in block.splitlines() if "SELECT" in line]
    argv = shlex.split(query)
    assert argv[0] == "python"
    out = subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "toy" in out.stdout


# -- every link between the documents lands: a moved section leaves no dead link behind ----------

LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def dead_links(paths: list[Path]) -> list[str]:
    dead = []
    for path in paths:
        for target in LINK.findall(path.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            page = (path.parent / file).resolve() if file else path
            if not page.exists():
                dead.append(f"{path.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and page.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.MULTILINE)
                if anchor not in {_anchor(h) for h in headings}:
                    dead.append(f"{path.relative_to(ROOT)}: {target} (no such section)")
    return dead


def test_every_link_between_the_documents_lands():
    assert dead_links(DOCUMENTS) == []


def test_the_link_check_sees_a_dead_link(tmp_path: Path, monkeypatch):
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    (tmp_path / "other.md").write_text("# The queue on disk: what `spill` does\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#the-queue-on-disk-what-spill-does) [web](https://example.org/x.md)\n"
        "[gone](moved.md) [section](other.md#threads)\n"
    )
    assert dead_links([page]) == ["page.md: moved.md (no such file)", "page.md: other.md#threads (no such section)"]
