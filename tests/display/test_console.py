"""Console output: the printed result, record tables, and the live progress line."""

from __future__ import annotations

import ast
import io
import re
from dataclasses import replace
from pathlib import Path

import pytest
from glasswork.contract.events import Event
from glasswork.display.console import (
    ProgressSink,
    fmt_bytes,
    fmt_gap,
    fmt_number,
    fmt_percent,
    make_console,
    render_outcome,
)
from glasswork.running.launch import Launch
from glasswork.spec.load import validate_spec
from rich.console import Console
from rich.table import Table


def console(terminal: bool) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=terminal, width=120, color_system=None), buffer


def run_toy(registry, sinks=(), **search):
    spec = validate_spec(
        {
            "name": "c",
            "solver": "toy",
            "search": search,
            "data": {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}},
        },
        registry,
    )
    return Launch(spec, registry=registry, no_store=True).run(sinks)


def test_render_outcome_shows_every_section_and_record_tables(toy_registry):
    outcome = run_toy(toy_registry)
    outcome.result.stats["pool"] = [{"loss": 0.5, "size": 3, "model": "a"}, {"loss": 0.6, "size": 2, "model": "b"}]
    out, buffer = console(False)
    render_outcome(outcome, out)
    text = buffer.getvalue()
    for piece in (
        "Model",
        "if ",
        "Certificate",
        "optimal",
        "lower bound",
        "Metrics",
        "test_auc",
        "Search",
        "peak memory",
        "Pool",
        "loss",
    ):
        assert piece in text, piece


def test_a_gap_in_a_record_table_reads_as_every_other_gap(toy_registry):
    """Issue 36: the FasterRisk pool and MOSS frontier tables printed gaps as raw fractions."""
    outcome = run_toy(toy_registry)
    outcome.result.stats["pool"] = [{"rank": 1, "loss": 0.5, "gap": 0.01234}, {"rank": 2, "loss": 0.6, "gap": None}]
    out, buffer = console(False)
    render_outcome(outcome, out)
    # the pool's first row: rank 1 and its loss (a figure elsewhere, "760.5 MiB", may hold "0.5" too)
    row = next(line for line in buffer.getvalue().splitlines() if re.match(r"\W*1\s", line) and "0.5" in line)
    assert fmt_gap(1.0, 1.0 - 0.01234, compact=True) in row and "0.01234" not in row


def test_progress_line_appears_only_on_a_terminal_for_long_runs(toy_registry):
    out, buffer = console(True)
    sink = ProgressSink(out, delay=0.0)
    sink.on_start(type("Info", (), {"solver": "toy"})())  # minimal RunInfo stand-in
    sink.on_event(Event("progress", 0.1, objective=0.25, lower_bound=0.2, nodes=1234))
    sink.on_finish(None, None, None)
    assert "best 0.25" in buffer.getvalue() and "nodes 1,234" in buffer.getvalue()
    assert "gap 20 % (lower bound 0.2)" in buffer.getvalue()

    quiet, quiet_buffer = console(False)
    sink = ProgressSink(quiet, delay=0.0)
    sink.on_start(type("Info", (), {"solver": "toy"})())
    sink.on_event(Event("progress", 0.1, objective=0.25, lower_bound=0.2, nodes=1))
    sink.on_finish(None, None, None)
    assert quiet_buffer.getvalue() == ""


def test_warnings_are_printed_even_off_terminal():
    out, buffer = console(False)
    sink = ProgressSink(out)
    sink.on_event(Event("log", 0.0, message="interrupted: stopping", level="warning"))
    assert "interrupted: stopping" in buffer.getvalue()


def test_fmt_bytes():
    assert fmt_bytes(512) == "512 B" and fmt_bytes(3 * 1024**2) == "3.0 MiB"


def test_names_and_messages_print_no_control_codes_and_no_markup(toy_registry):
    """Data reaches the terminal as text: ESC, BEL, bidi marks escaped; ``[red]`` printed as written."""
    outcome = run_toy(toy_registry)
    outcome.info.name = "run\x1b[2J\x07 [red]x[/red] \u202e"
    outcome.result.stats["pool"] = [{"model": "m\x1b[31m [bold]b[/bold]", "loss": 0.5}]
    out, buffer = console(True)  # a terminal: styles are written, but never the data's own codes
    render_outcome(outcome, out)
    sink = ProgressSink(out)
    sink.on_event(Event("log", 0.0, message="bad \x1b]0;title\x07 [blue]value[/blue]", level="warning"))
    text = buffer.getvalue()
    assert "\x07" not in text and "\u202e" not in text and "\x1b[2J" not in text and "\x1b[31m" not in text
    assert "\x1b]0;" not in text
    assert "[red]x[/red]" in text and "[bold]b[/bold]" in text and "[blue]value[/blue]" in text
    assert "\\x1b[2J" in text and "\\u202e" in text  # shown escaped, so a reader sees what the name holds


def test_numbers_are_written_as_people_write_them():
    assert fmt_number(9.477891309e-07, 10) == "9.48e-07"  # no ten-figure scientific notation
    assert fmt_number(1234567.891) == "1,234,568" and fmt_number(12345) == "12,345"
    assert fmt_number(0.07990610329, 10) == "0.07990610329" and fmt_number(0.0799061034) == "0.0799061"
    assert fmt_number(4.0) == "4" and fmt_number(0.1) == "0.1" and fmt_number(0.001) == "0.001"
    assert fmt_number(-0.25) == "-0.25" and fmt_number(0.0) == "0" and fmt_number(None) == "-"
    assert fmt_number(float("nan")) == "-" and fmt_number(float("-inf")) == "-inf"


def test_percentages_keep_three_figures_and_never_round_a_gap_to_zero():
    assert fmt_percent(0.001062711) == "0.106 %"
    assert fmt_percent(0.2) == "20 %" and fmt_percent(0.3181) == "31.8 %" and fmt_percent(1.0) == "100 %"
    assert fmt_percent(0.0) == "0 %"
    assert fmt_percent(9.477891309e-07) == "< 0.001 %"  # not zero: a gap that is left is shown


def test_the_one_gap_format():
    assert fmt_gap(0.25, 0.2) == "20 % (lower bound 0.2)"
    assert fmt_gap(0.0799, 0.0799, "optimal") == "0 % (optimal)"
    assert fmt_gap(0.0799, 0.0799, "stopped_time") == "0 % (lower bound 0.0799)"  # not certified: no "optimal"
    assert fmt_gap(1.0, 0.9999, "optimal") == "0.01 % (optimal within tolerance, lower bound 0.9999)"
    assert fmt_gap(0.5, None) == "-" and fmt_gap(None, None, "optimal") == "-"


def test_a_console_into_a_pipe_neither_wraps_nor_cuts_nor_colours(monkeypatch):
    buffer = io.StringIO()
    monkeypatch.setattr("sys.stdout", buffer)
    console = make_console()
    assert not console.is_terminal and console.color_system is None
    long = "if " + "worst_concave_points_" * 12 + " then malignant"
    table = Table("rule", "captured")
    table.add_column("name", no_wrap=True)
    table.add_row(long, "107", "x" * 150)
    console.print(long)
    console.print(table)
    out = buffer.getvalue()
    assert out.splitlines()[0] == long and long in out and "x" * 150 in out
    assert "…" not in out and "\x1b" not in out


# -- one gap format: nothing in core, plugins or tui formats a gap but fmt_gap ------------------------

GAP_HOME = "core/display/console.py"  # fmt_gap and fmt_percent live here
NUMERIC_SPEC = re.compile(r"[%eEfFgGn]\s*$")


def _gap_names(node: ast.AST) -> list[str]:
    """The gap-named variables and attributes an expression reads (``gap``, ``r.gap``,
    ``certified_gap``), not the functions it calls: ``fmt_gap(...)`` is the one format, not a gap."""
    callees = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    names = []
    for n in ast.walk(node):
        if id(n) in callees:
            continue
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        if "gap" in name.lower():
            names.append(name)
    return names


def _literal(node: ast.AST | None) -> str:
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def gaps_formatted_by_hand(source: str) -> list[int]:
    """Lines that print a gap-named value as a number of their own: an f-string field with a
    numeric format (``{gap:.2%}``, ``{r.gap:>9.2e}``) or followed by ``%`` (``{100 * gap:.3g} %``),
    ``"%.2f" % gap``, ``"{:.2%}".format(gap)`` or ``format(gap, ".2%")``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            for i, part in enumerate(node.values):
                if not isinstance(part, ast.FormattedValue) or not _gap_names(part.value):
                    continue
                following = node.values[i + 1] if i + 1 < len(node.values) else None
                if NUMERIC_SPEC.search(_literal(part.format_spec)) or _literal(following).lstrip().startswith("%"):
                    found.append(node.lineno)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and "%" in _literal(node.left):
            if _gap_names(node.right):
                found.append(node.lineno)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "format" and _literal(func.value):
                if any(_gap_names(a) for a in node.args):
                    found.append(node.lineno)
            elif isinstance(func, ast.Name) and func.id == "format" and _gap_names(node.args[0]):
                found.append(node.lineno)
    return found


def test_every_gap_is_formatted_by_fmt_gap() -> None:
    repo = Path(__file__).resolve().parents[2]
    offenders = [
        f"{path.relative_to(repo)}:{line}"
        for folder in ("core", "plugins", "tui")
        for path in sorted((repo / folder).rglob("*.py"))
        if path.relative_to(repo).as_posix() != GAP_HOME
        for line in gaps_formatted_by_hand(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, f"gaps formatted outside glasswork.display.console.fmt_gap: {offenders}"


@pytest.mark.parametrize(
    "code",
    [
        'f"{gap:.2%}"',
        'f"{r.gap:>9.2e} {r.status}"',
        'f"At most {100 * worse_gap:.3g} % worse"',
        'f"{100 * self.certified_gap} %"',
        '"%.2f%%" % (gap * 100)',
        '"{:.2%}".format(state.gap)',
        'format(gap, ".2%")',
    ],
)
def test_the_gap_check_sees_a_gap_formatted_by_hand(code: str) -> None:
    assert gaps_formatted_by_hand(f"x = 1\ntext = {code}\n") == [2]


@pytest.mark.parametrize(
    "code",
    [
        'f"gap {fmt_gap(r.objective, r.lower_bound, compact=True):>10}"',
        'f"mip_rel_gap={mip_rel_gap}"',
        'f"{value:.2%}"',
        'f"{closed:.0%} of the first gap closed"',
        '"limits/gap %s" % name',
    ],
)
def test_the_gap_check_lets_the_one_format_and_other_figures_pass(code: str) -> None:
    assert gaps_formatted_by_hand(f"text = {code}\n") == []


def test_compact_gap_is_the_same_figure_without_the_bound() -> None:
    assert fmt_gap(0.25, 0.2, compact=True) == "20 %"
    assert fmt_gap(0.0799, 0.0799, "optimal", compact=True) == "0 %"
    assert fmt_gap(1.0, 1.0 - 1e-9, compact=True) == "< 0.001 %"
    assert fmt_gap(None, 0.2, compact=True) == "-"


def test_a_rashomon_set_prints_each_features_share_and_importance_range():
    """What the README promises ``glasswork run`` and ``glasswork rashomon`` print: each feature's
    share of the set and its reliance range (lowest to highest over the members), and the range per
    raw column; hostile names escaped."""
    from glasswork.display.console import render_rashomon
    from glasswork.rashomon import SetSummary

    hostile = "\x1b[31mred [bold]x[/bold]"
    summary = {
        "count": 3,
        "kept": 3,
        "complete": True,
        "threshold": 0.2,
        "epsilon": 0.1,
        "optimum": 0.18,
        "optimum_proven": True,
        "multiplicity": {
            "rows": "test",
            "n_rows": 31,
            "members": 3,
            "count": 3,
            "ambiguity": 0.25,
            "discrepancy": 0.2,
            "split_rows": 8,
            "variable_use": {"age<=50": 1.0, hostile: 1 / 3},
            "reliance": {"age<=50": [2.0, 5.0], hostile: [0.875, 2.3333]},
            "reliance_columns": {"age": [2.0, 5.0], hostile: [0.875, 2.3333]},
        },
    }
    out, buffer = console(False)
    render_rashomon(SetSummary.from_dict(summary), [], out)
    lines = buffer.getvalue().splitlines()
    age = next(line for line in lines if line.split()[:1] == ["age<=50"])
    assert "100 %" in age and "2" in age.split() and "5" in age.split()
    red = next(line for line in lines if "red [bold]x[/bold]" in line and "%" in line)
    assert "33.3 %" in red and "0.875" in red and "2.3333" in red and "\x1b" not in buffer.getvalue()
    assert any(line.split()[:1] == ["age"] and "5" in line.split() for line in lines)  # the raw column's range
    summary["multiplicity"] = {**summary["multiplicity"], "reliance": {}, "reliance_columns": {}}
    out, buffer = console(False)  # rashomon.keep: summary: shares, and no empty reliance columns
    render_rashomon(SetSummary.from_dict(summary), [], out)
    assert "100 %" in buffer.getvalue() and "reliance" not in buffer.getvalue()


def test_a_set_still_being_enumerated_is_not_said_to_have_stopped():
    """``glasswork rashomon latest`` on a live run reads the set its events have announced so far:
    it says the run goes on, not "INCOMPLETE: the enumeration stopped"."""
    from glasswork.display.console import rashomon_summary_text
    from glasswork.rashomon import SetSummary

    summary = SetSummary(count=9581241, kept=50, complete=False, threshold=0.336, unenumerated_bound=0.27)
    live = rashomon_summary_text(summary.live())
    assert "stopped" not in live and "still running" in live and "9,581,241" in live
    assert "the enumeration stopped" in rashomon_summary_text(summary)


def test_one_model_is_one_model() -> None:
    """Issue 36: "1 models"."""
    from glasswork.display.console import rashomon_point_text, rashomon_summary_text
    from glasswork.rashomon import PointSet, SetSummary

    point = PointSet(point=2, count=1, complete=True, threshold=0.5)
    assert "1 model within" in rashomon_point_text(point)
    assert "3 models within" in rashomon_point_text(replace(point, count=3))
    assert rashomon_summary_text(SetSummary(count=1, kept=1, threshold=0.5, complete=True)).startswith("1 model ")
