"""The model card: what it says for each solver, that it is self-contained and small, and a
screenshot of it in a real headless browser (Chromium from the system packages)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html import escape as html_escape
from pathlib import Path

import numpy as np
import pytest
from export_fixtures import runs  # noqa: F401  (the module-scoped fixture)
from glasswork.display.report import build_report, certificate_words
from glasswork.store import RunStore

MAX_BYTES = 60_000
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


def _card(runs: dict, case: str) -> str:
    outcome, details, launch = runs[case]
    return build_report(details, RunStore(launch.store.path).open().events(details["run_id"]))


@pytest.mark.parametrize(
    "case", ["corels_compas", "corels_breast_cancer", "fasterrisk_adult", "fasterrisk_breast_cancer", "moss_diabetes"]
)
def test_the_card_is_self_contained_and_small(runs: dict, case: str) -> None:
    card = _card(runs, case)
    assert card.startswith("<!doctype html>") and card.rstrip().endswith("</html>")
    assert len(card.encode()) < MAX_BYTES
    assert "<script" not in card and not re.search(r"(src|href)=\"?(https?:)?//", card)
    assert "<svg" in card and "Reproduce" in card and runs[case][1]["data_fingerprint"] in card


def test_the_rule_list_card_shows_rules_captures_and_the_proof(runs: dict) -> None:
    card = _card(runs, "corels_compas")
    assert "<b>Proven optimal.</b>" in card
    assert "sex:Male,juvenile-crimes:&gt;0" in card and "790" in card  # the rule and its capture
    assert "ROC curve" in card and "calibration" in card and "lower bound" in card


def test_the_score_card_shows_points_and_the_risk_curve(runs: dict) -> None:
    card = _card(runs, "fasterrisk_adult")
    assert "+4 points" in card and "Married" in card and "P(1) by score" in card
    # the card is heuristic, and its proven lower bound says how far from the best it may be
    assert "to the best possible</b>" in card and "a heuristic found this model" in card


def test_the_rule_set_card_places_it_on_the_frontier(runs: dict) -> None:
    card = _card(runs, "moss_diabetes")
    assert "loss H2 by stability H1" in card and "Predictions (test data)" in card


def test_certificate_words_for_a_gap() -> None:
    # the one gap form (fmt_gap): the relative gap (objective - bound) / objective, the bound next to it
    words = certificate_words({"status": "stopped_time", "objective": 1.0, "lower_bound": 0.9, "gap": 0.1})
    assert "<b>Gap 10 % (lower bound 0.9) to the best possible</b>" in words and "worse" not in words
    words = certificate_words({"status": "stopped_time", "objective": 2.0, "lower_bound": 1.0, "gap": 0.5})
    assert "<b>Gap 50 % (lower bound 1) to the best possible</b>" in words
    # a gap too small for three decimals is escaped for the HTML: "&lt; 0.001 %"
    words = certificate_words({"status": "heuristic", "objective": 1.0, "lower_bound": 1.0 - 1e-9, "gap": 1e-9})
    assert "Gap &lt; 0.001 % (lower bound 1)" in words
    # a trivial bound (0) on a positive objective bounds nothing: say so, not "gap 100 %"
    words = certificate_words({"status": "heuristic", "objective": 44.3, "lower_bound": 0.0, "gap": 1.0})
    assert "No useful guarantee" in words and "100 %" not in words and "lower bound 0" in words
    assert "No guarantee" in certificate_words({"status": "heuristic", "objective": 1.0})


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (Debian: apt-get install -y chromium)")
def test_the_card_renders_in_a_headless_browser(runs: dict, tmp_path: Path) -> None:
    from PIL import Image

    page = tmp_path / "card.html"
    page.write_text(_card(runs, "fasterrisk_adult"), encoding="utf-8")
    shot = tmp_path / "card.png"
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1000,1600",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    image = Image.open(shot).convert("RGB")
    assert image.size == (1000, 1600)
    # the drawing is there: the charts' blue lines and the text make many non-white pixels
    pixels = np.asarray(image, dtype=np.int64)
    ink = int((pixels.sum(axis=2) < 600).sum())
    blue = int(((pixels[:, :, 2] > 150) & (pixels[:, :, 0] < 100)).sum())
    assert ink > 20_000 and blue > 500, (ink, blue)


def test_a_model_no_plugin_draws_still_gets_a_card() -> None:
    details = {
        "run_id": "9" * 32,
        "name": "odd",
        "solver": "elsewhere",
        "status": "stopped_time",
        "objective": 2.0,
        "lower_bound": 1.5,
        "gap": 0.25,
        "metrics": {"train_accuracy": 0.7},
        "spec": {"name": "odd"},
        "data_fingerprint": "f" * 64,
        "spec_hash": "h",
        "models": [{"model": {"kind": "mystery_tree"}, "text": "if x then <y>"}],
    }
    card = build_report(details, [{"kind": "progress", "elapsed": 1.0, "objective": 2.0, "lower_bound": 1.5}])
    assert "<pre>if x then &lt;y&gt;</pre>" in card  # the model's own text, escaped
    assert "Gap 25 % (lower bound 1.5) to the best possible" in card
    assert "could not be loaded again" in card and "<svg" in card  # no data, yet the trajectory


def _tick_labels(svg: str) -> tuple[list[str], list[str]]:
    """The x labels (under the frame, text-anchor middle) and y labels (left of it, anchor end)."""
    xs = re.findall(r'<text x="[\d.]+" y="[\d.]+" text-anchor="middle">([^<]*)</text>', svg)
    ys = re.findall(r'<text x="[\d.]+" y="[\d.]+" text-anchor="end">([^<]*)</text>', svg)
    return xs[:-1], ys  # the last middle-anchored text is the x axis's name


@pytest.mark.parametrize(
    "lo, hi, ticks",
    [
        (0.0, 1.0, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        (-3.56, 11.56, [0.0, 5.0, 10.0]),
        (0.037, 0.913, [0.2, 0.4, 0.6, 0.8]),
        (1234.0, 98765.0, [20000.0, 40000.0, 60000.0, 80000.0]),
        (-0.0021, 0.0013, [-0.002, -0.001, 0.0, 0.001]),
    ],
)
def test_nice_ticks_follow_the_1_2_5_rule(lo: float, hi: float, ticks: list[float]) -> None:
    from glasswork.display.report import nice_ticks

    assert nice_ticks(lo, hi) == pytest.approx(ticks)


def test_chart_axes_have_round_ticks() -> None:
    """The card's curves used to mark the frame's quarters: -3.56, 0.22, 4 ... instead of 0, 5, 10."""
    from glasswork.display.report import line_chart, scatter_chart

    svg = line_chart(
        [("risk", [-3, 0, 5, 11], [0.03, 0.2, 0.7, 0.97])], xlabel="score", ylabel="P(yes)", ylim=(0.0, 1.0)
    )
    xs, ys = _tick_labels(svg)
    assert xs == ["0", "5", "10"]
    assert ys == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    svg = scatter_chart([(0.5, 1234.5), (2.75, 11810.0), (4.0, 7000.0)], xlabel="stability", ylabel="loss")
    xs, ys = _tick_labels(svg)
    assert xs == ["0.5", "1.0", "1.5", "2.0", "2.5", "3.0", "3.5", "4.0"] or xs == ["1", "2", "3", "4"]
    assert ys == ["2,000", "4,000", "6,000", "8,000", "10,000", "12,000"]


def test_the_card_escapes_hostile_names(runs: dict) -> None:
    """Names, labels and rule texts are data: in the card they show as text, never as markup."""
    outcome, details, launch = runs["corels_compas"]
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    model = json.loads(json.dumps(details["models"][0]["model"]).replace('"Yes"', json.dumps(evil)))
    model["rules"][0]["antecedent"] = evil
    assert evil in model["classes"]
    spec = dict(details["spec"], name=evil)
    hostile = dict(details, name=evil, spec=spec, models=[dict(details["models"][0], model=model, text=evil)])
    card = build_report(hostile, [])
    assert "<script" not in card and "<img" not in card
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in card


# -- issue 25: what the card's charts show -----------------------------------------------------------


def _search_svg(card: str) -> str:
    return card.split("<h2>Search</h2>", 1)[1].split("</svg>", 1)[0]


def _texts(svg: str) -> list[tuple[float, float, str, str]]:
    """Every text of a chart as ``(x, y, anchor, text)`` (anchor ``start`` when not given), but the
    rotated y axis name."""
    out = []
    for attrs, text in re.findall(r"<text ([^>]*)>([^<]*)</text>", svg):
        if "rotate" in attrs:
            continue
        x, y = (float(re.search(rf'{k}="([-\d.]+)"', attrs).group(1)) for k in ("x", "y"))
        anchor = re.search(r'text-anchor="(\w+)"', attrs)
        out.append((x, y, anchor.group(1) if anchor else "start", text))
    return out


def test_a_lower_bound_proved_at_the_end_is_in_the_search_plot(runs: dict) -> None:
    """A FasterRisk card's search plot showed no lower bound, though the certificate proved one."""
    from glasswork.display.report import bound_trajectory

    svg = bound_trajectory(
        [
            {"kind": "progress", "elapsed": 0.5, "objective": 3.0},
            {"kind": "progress", "elapsed": 1.0, "objective": 2.5},
        ],
        {"objective": 2.5, "lower_bound": 2.1, "elapsed": 1.2},
    )
    assert ">lower bound</text>" in svg and 'fill="#ee6677"' in svg  # the bound's series, drawn
    details = runs["fasterrisk_adult"][1]
    assert details["lower_bound"] is not None
    assert ">lower bound</text>" in _search_svg(_card(runs, "fasterrisk_adult"))


def test_legends_sit_under_the_chart_off_the_curves() -> None:
    from glasswork.display.report import B, H, line_chart

    svg = line_chart(
        [("best objective", [0, 1, 2], [3.0, 2.0, 1.0]), ("lower bound", [0, 1, 2], [0.0, 0.5, 1.0])],
        xlabel="seconds",
        ylabel="objective",
    )
    height = float(re.search(r'<svg[^>]* height="(\d+)"', svg).group(1))
    legend = [(x, y) for x, y, _, text in _texts(svg) if text in ("best objective", "lower bound")]
    assert len(legend) == 2
    assert all(H - B + 14 < y <= height for _, y in legend)  # below the frame and its tick labels, inside the chart


def test_axis_labels_are_not_clipped_or_overlapped() -> None:
    """The MOSS predicted-vs-observed chart's y labels ran off the left edge over the axis name."""
    from glasswork.display.report import CHAR_PX, W, scatter_chart

    svg = scatter_chart([(20_000.0, 31_000.0), (90_000.0, 152_500.0)], xlabel="predicted", ylabel="observed")
    texts = _texts(svg)
    name_right = 12 + 6  # the rotated y axis name, centred at x = 12, 10 px tall
    for x, _, anchor, text in texts:
        width = len(text) * CHAR_PX
        left = {"end": x - width, "middle": x - width / 2}.get(anchor, x)
        right = {"end": x, "middle": x + width / 2}.get(anchor, x + width)
        assert 0 <= left and right <= W, text
        if anchor == "end":  # a y tick label
            assert left >= name_right, text


def test_a_frontier_is_drawn_as_points_not_one_line(runs: dict) -> None:
    """MOSS's frontier points are separate problems: the search plot joined them into one line."""
    from glasswork.display.report import bound_trajectory

    events = [
        {
            "kind": "progress",
            "elapsed": 0.1 * k,
            "objective": 10.0 - k,
            "lower_bound": 9.9 - k,
            "counters": {"frontier_points": k, "epsilon": 1.0 - 0.1 * k},
        }
        for k in range(1, 5)
    ]
    svg = bound_trajectory(events, {"objective": 8.0, "lower_bound": 7.9, "elapsed": 0.5})
    assert "<polyline" not in svg and svg.count("<circle") == 8 + 2  # the points, and the legend's dots
    search = _search_svg(_card(runs, "moss_diabetes"))
    assert "<polyline" not in search and "<circle" in search


def test_a_card_without_curves_gives_the_real_reason(runs: dict) -> None:
    """A card said "drawn for binary classifiers only" when the plugin only lacked load_model."""
    outcome, details, launch = runs["corels_compas"]
    model = dict(details["models"][0]["model"], kind="mystery_rules")
    card = build_report(dict(details, models=[dict(details["models"][0], model=model)]), [])
    assert "binary classifiers only" not in card
    assert "no installed plugin gives load_model for this kind of model" in card
    assert "ROC curve" in _card(runs, "corels_compas")  # a model its plugin loads still has its curves


# -- issue 26: the Rashomon set on the card ------------------------------------------------------------


def test_the_card_shows_the_rashomon_set_with_its_importance_ranges(tmp_path: Path, toy_registry) -> None:
    from glasswork.running.launch import Launch
    from glasswork.spec.load import validate_spec

    spec = validate_spec(
        {
            "name": "set",
            "solver": "toy",
            "data": {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}},
            "rashomon": {"epsilon": 0.5, "max_models": 4},
        },
        toy_registry,
    )
    outcome = Launch(spec, registry=toy_registry, db=tmp_path / "g.duckdb").run()
    store = RunStore(tmp_path / "g.duckdb")
    details = store.details(outcome.info.run_id)
    card = build_report(details, store.events(outcome.info.run_id), toy_registry)
    section = card.split("<h2>Rashomon set</h2>", 1)[1].split("<h2>", 1)[0]
    assert "6 models with objective &lt;= " in section and "complete; 4 kept" in section
    assert "over the 4 kept members of 6: ambiguity" in section
    figures = outcome.multiplicity
    for name, (low, high) in figures["reliance"].items():
        assert f"<title>{low:g} to {high:.6g}</title>" in section
        assert html_escape(name) in section
    by_column = figures["reliance_columns"]  # the same per raw column, in a second table
    assert by_column and "<th>raw column</th>" in section
    assert section.count("<tr>") == 2 + len(figures["variable_use"]) + len(by_column)
    for column, (low, high) in by_column.items():
        assert f"<tr><td>{html_escape(column)}</td><td class=n>{low:.6g}</td><td class=n>{high:.6g}</td>" in section
    plain = dict(details)
    plain.pop("rashomon")
    assert "Rashomon set" not in build_report(plain, [], toy_registry)  # a run without a set: no section


def test_the_rashomon_section_escapes_hostile_feature_names() -> None:
    from glasswork.display.report import rashomon_section
    from glasswork.rashomon import SetSummary

    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    summary = {
        "count": 3,
        "complete": False,
        "exhaustive": True,
        "threshold": 0.2,
        "epsilon": None,
        "optimum": 0.1,
        "optimum_proven": True,
        "unenumerated_bound": 0.15,
        "kept": 2,
        "multiplicity": {
            "rows": "train",
            "n_rows": 10,
            "members": 2,
            "count": 3,
            "ambiguity": 0.1,
            "discrepancy": 0.1,
            "split_rows": 1,
            "variable_use": {evil: 0.5},
            "reliance": {evil: [1.0, 2.0]},
            "reliance_columns": {evil: [1.0, 3.0]},
        },
    }
    section = rashomon_section(SetSummary.from_dict(summary))
    assert "<script" not in section and "<img" not in section and section.count("&lt;script&gt;") == 2
    assert "INCOMPLETE" in section and "objective &gt;= 0.15" in section


def test_control_characters_in_names_reach_the_card_as_visible_escapes() -> None:
    """A column named with an ANSI escape or a bidi mark shows in the card as ``\\x1b[31m``, as in
    the terminal, not as raw bytes a browser hides (and ``cat card.html`` would run)."""
    from glasswork.display.report import rashomon_section
    from glasswork.rashomon import SetSummary

    evil = "\x1b[31mred\x1b[0m \u202eevil"
    figures = {"rows": "train", "n_rows": 10, "members": 2, "count": 2, "ambiguity": 0.1, "discrepancy": 0.1}
    figures |= {"variable_use": {evil: 0.5}, "reliance": {evil: [1.0, 2.0]}, "reliance_columns": {evil: [1.0, 3.0]}}
    summary = {"count": 2, "complete": True, "threshold": 0.2, "optimum": 0.1, "optimum_proven": True, "kept": 2}
    section = rashomon_section(SetSummary.from_dict({**summary, "multiplicity": figures}))
    assert "\x1b" not in section and "\u202e" not in section
    assert "\\x1b[31mred\\x1b[0m" in section
