"""The set explorer (``glasswork report RUN`` for a run with a Rashomon set): the data it embeds
are the set's own figures (reliance equal to the card's ranges, predictions equal to the
members'), hostile names, labels and target stay data, and in a real headless Chromium the page
makes no request, its filters agree with ``glasswork rashomon --where``, sorting and the keyboard
work. One CORELS set over a loans table with hostile names, built once for the module."""

from __future__ import annotations

import base64
import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from glasswork.cli import cli
from loans_table import loans_frame

EVIL = '</script><script>alert("x\'\\\\")</script>'  # quotes and a backslash: --where must quote it
YES, NO = "<b>yes</b>'\"", "no&amp;<!--"
TARGET = f"default {EVIL}"
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


class SetRun:
    """The recorded run, its store and the report written from it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.db = str(folder / "runs.duckdb")
        self.runner = CliRunner()

    def call(self, *args: str) -> Any:
        return self.runner.invoke(cli, [*args, "--db", self.db], catch_exceptions=False)


@pytest.fixture(scope="module")
def set_run(tmp_path_factory: pytest.TempPathFactory) -> SetRun:
    """A CORELS Rashomon set (50 rule lists) over loans whose employment column, target name and
    labels are hostile, with a protected group audited; then its report."""
    folder = tmp_path_factory.mktemp("explorer")
    frame = loans_frame(400, seed=1).rename(columns={"employment": EVIL, "default": TARGET})
    frame[TARGET] = frame[TARGET].map({"yes": YES, "no": NO})
    frame["group"] = np.where(np.random.default_rng(2).random(len(frame)) < 0.4, "g1", "g2")
    frame.to_csv(folder / "loans.csv", index=False)
    spec = {
        "name": f"loans {EVIL}",
        "data": {
            "source": "loans.csv",
            "target": TARGET,
            "positive": YES,
            "binarize": {"thresholds": 3},
            "audit_only": ["group"],
        },
        "solver": "corels",
        "limits": {"time": 30},
        "fairness": {"protected": {"column": "group", "value": "g1"}, "metrics": ["statistical_parity"]},
        "rashomon": {"epsilon": 0.01},
    }
    (folder / "spec.json").write_text(json.dumps(spec))
    run = SetRun(folder)
    result = run.call("run", "-q", str(folder / "spec.json"))
    assert result.exit_code == 0, result.output
    result = run.call("report", "latest", "-o", str(folder / "report.html"))
    assert result.exit_code == 0, result.output
    assert "model card and set explorer of 50 members" in result.stderr
    return run


def page_of(run: SetRun) -> str:
    return (run.folder / "report.html").read_text(encoding="utf-8")


def embedded(page: str) -> dict[str, Any]:
    found = re.findall(r"<script type=application/json id=gx-data>(.*?)</script>", page, re.S)
    assert len(found) == 1
    return json.loads(found[0])


def listing(run: SetRun, *args: str) -> dict[str, Any]:
    result = run.call("rashomon", "latest", "--json", "--limit", "1000", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# -- what the page embeds --------------------------------------------------------------------------


def test_hostile_names_labels_and_target_stay_data(set_run: SetRun) -> None:
    page = page_of(set_run)
    assert page.count("<script") == 2  # the JSON block and the explorer's own script, nothing from data
    assert EVIL not in page and "<b>yes" not in page and "<!--" not in page
    assert not re.search(r"(src|href)=\"?(https?:)?//", page)
    doc = embedded(page)
    assert f"{EVIL}:unemployed" in doc["features"] and EVIL in doc["columns"]
    assert doc["classes"] == [NO, YES] or doc["classes"] == [YES, NO]
    assert any(YES in m["rules"] for m in doc["members"])


def test_the_members_carry_the_figures_the_listing_gives(set_run: SetRun) -> None:
    doc = embedded(page_of(set_run))
    listed = listing(set_run)["models"]
    assert [m["rank"] for m in doc["members"]] == [m["rank"] for m in listed] and len(listed) == 50
    for shown, kept in zip(doc["members"], listed):
        assert shown["f"]["objective"] == pytest.approx(kept["objective"])
        assert shown["f"]["test_auc"] == pytest.approx(kept["metrics"]["test_auc"])
        assert shown["f"]["train_statistical_parity"] == pytest.approx(kept["fairness"]["train"]["statistical_parity"])
        assert sorted(doc["features"][j] for j in shown["features"]) == sorted(kept["features"])
        alike = [m["rank"] for m in listed if m["fingerprint"] == kept["fingerprint"]]
        assert shown["like"] == min(alike) == kept["decides_as"]  # the listing says the same, from one home
    assert "test_statistical_parity" in doc["columns_shown"] and "train_log_loss" not in doc["columns_shown"]
    assert "train_log_loss" in doc["figures"]  # every figure can be filtered on
    assert 1 < len({m["like"] for m in doc["members"]}) < 50  # some lists decide alike, not all


def test_reliance_per_member_spans_the_cards_ranges(set_run: SetRun) -> None:
    """The bars' per-member reliance is the card's model class reliance, term by term: over every
    member its min and max are the stored range of each feature."""
    doc = embedded(page_of(set_run))
    stored = json.loads(set_run.call("runs", "show", "latest", "--json").stdout)["rashomon"]["multiplicity"]
    assert doc["reliance"] and set(stored["reliance"]) == {doc["features"][int(j)] for j in doc["reliance"]}
    for j, ratios in doc["reliance"].items():
        low, high = stored["reliance"][doc["features"][int(j)]]
        assert len(ratios) == 50 and min(ratios) == pytest.approx(low, abs=1e-6)
        assert max(ratios) == pytest.approx(high, abs=1e-6)
        unused = [r for r, m in zip(ratios, doc["members"]) if int(j) not in m["features"]]
        assert all(r == 1.0 for r in unused)


def test_the_predictions_are_the_members_own(set_run: SetRun) -> None:
    """The packed predictions decode to each member's predictions of the test rows (the split
    rows the sample holds are where they differ), and the set's test ambiguity follows from them."""
    doc = embedded(page_of(set_run))
    n = doc["n_rows"]
    matrix = np.frombuffer(base64.b64decode(doc["predictions"]["data"]), dtype=np.uint8).reshape(-1, n)
    assert matrix.shape == (50, n) and doc["part"] == "test"
    split = np.flatnonzero((matrix != matrix[0]).any(axis=0))
    assert doc["sample"]["at"] == split.tolist() and doc["sample"]["split_rows"] == len(split) > 0
    stored = json.loads(set_run.call("runs", "show", "latest", "--json").stdout)["rashomon"]["multiplicity"]
    assert stored["split_rows"] == len(split)
    assert len(doc["sample"]["label"]) == len(split) and set(doc["sample"]["label"]) <= {YES, NO}


def test_data_that_cannot_be_loaded_again_leave_the_members_and_say_why(set_run: SetRun, tmp_path: Path) -> None:
    from glasswork.display.report import build_report
    from glasswork.store import RunStore

    store = RunStore(set_run.db)
    [run_id] = store.resolve(("latest",))
    details = store.details(run_id)
    moved = dict(details, spec={**details["spec"], "data": {**details["spec"]["data"], "source": "gone.csv"}})
    page = build_report(moved, [], None, store.rashomon_members(run_id))
    doc = embedded(page)
    assert len(doc["members"]) == 50 and "predictions" not in doc and "reliance" not in doc
    assert "could not be loaded again" in doc["no_rows"]


def test_members_kept_as_summaries_are_listed_by_their_features(tmp_path: Path) -> None:
    from loans_table import loans_spec

    run = SetRun(tmp_path)
    spec = loans_spec(tmp_path, "corels", "rashomon: {epsilon: 0.01, keep: summary}\n", binarize=True)
    assert run.call("run", "-q", str(spec)).exit_code == 0
    assert run.call("report", "latest", "-o", str(tmp_path / "r.html")).exit_code == 0
    doc = embedded((tmp_path / "r.html").read_text())
    assert len(doc["members"]) == 50 and "kept as summaries" in doc["no_rows"] and "predictions" not in doc
    first = doc["members"][0]
    assert first["rules"] == f"(kept as a summary) uses {', '.join(doc['features'][j] for j in first['features'])}"
    assert set(first["f"]) == {"rank", "objective"}  # no figures are made up


def test_script_json_keeps_markup_out_of_the_block() -> None:
    from glasswork.quoting import script_json

    text = script_json({"a": EVIL, "b": "<!-- & \u2028 é"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": EVIL, "b": "<!-- & \u2028 é"}
    with pytest.raises(ValueError):
        script_json({"a": float("nan")})


def test_report_of_a_run_without_a_set_is_the_card_and_of_no_run_exit_2(tmp_path: Path) -> None:
    from loans_table import loans_spec

    run = SetRun(tmp_path)
    spec = loans_spec(tmp_path, "corels", binarize=True)
    assert run.call("run", "-q", str(spec)).exit_code == 0
    result = run.call("report", "latest", "-o", str(tmp_path / "card.html"))
    assert result.exit_code == 0 and "no Rashomon set, so no set explorer" in result.stderr
    card = (tmp_path / "card.html").read_text()
    assert "<script" not in card and "Set explorer" not in card and "Certificate" in card
    missing = run.call("report", "0123456789ab")
    assert missing.exit_code == 2 and "no run with an id starting '0123456789ab'" in missing.output


# -- in a real browser ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Any:
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (Debian: apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="no playwright here (pip install -e '.[test]')")
    with sync_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, set_run: SetRun) -> Any:
    """The report opened in a fresh page, every request it makes recorded (``page.requests``),
    every script error, console error and dialog too (``page.problems``)."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    opened.requests, opened.problems = [], []
    opened.on("request", lambda r: opened.requests.append(r.url))
    opened.on("pageerror", lambda e: opened.problems.append(f"error: {e}"))
    opened.on("console", lambda m: opened.problems.append(f"console: {m.text}") if m.type == "error" else None)
    opened.on("dialog", lambda d: (opened.problems.append(f"dialog: {d.message}"), d.dismiss()))
    opened.goto((set_run.folder / "report.html").as_uri())
    opened.wait_for_selector("#gx-body tr")
    yield opened
    assert opened.problems == []
    context.close()


def shown_ranks(page: Any) -> list[int]:
    return [int(r) for r in page.eval_on_selector_all("#gx-body tr", "rows => rows.map(r => r.dataset.rank)")]


def where_of(page: Any) -> list[str]:
    """The page's own command line for its choice, as words (``glasswork rashomon RUN ...``)."""
    return shlex.split(page.locator("#gx-where").text_content())


def test_the_page_makes_no_request_beyond_itself(page: Any, set_run: SetRun) -> None:
    page.click("#gx-head button[data-sort=test_auc]")
    page.select_option("#gx-a", index=3)
    allowed = (set_run.folder / "report.html").as_uri()
    assert page.requests and all(u == allowed or u.startswith(("data:", "about:")) for u in page.requests)
    assert page.evaluate("document.scripts.length") == 2  # no script came from data


def test_filters_change_what_is_shown_as_where_does(page: Any, set_run: SetRun) -> None:
    """A threshold and an avoided raw column change the rows shown, and the members left are those
    ``glasswork rashomon --where`` lists for the expression the page prints."""
    assert len(shown_ranks(page)) == 50
    page.select_option("#gx-figure", "test_auc")
    page.fill("#gx-value", "0.9")
    page.click("#gx-add-figure")
    after_threshold = shown_ranks(page)
    assert 0 < len(after_threshold) < 50
    assert page.locator("#gx-count").text_content().startswith(f"Showing {len(after_threshold)} of 50")
    page.select_option("#gx-use-mode", "avoids")
    page.select_option("#gx-feature", value=f"c{EVIL}")
    page.click("#gx-add-feature")
    ranks = shown_ranks(page)
    assert 0 < len(ranks) < len(after_threshold)
    words = where_of(page)
    assert words[:3] == ["glasswork", "rashomon", embedded(page_of(set_run))["run"]]
    listed = listing(set_run, *words[3:])["models"]
    assert [m["rank"] for m in listed] == ranks
    assert all(not any(f.startswith(EVIL) for f in m["features"]) for m in listed)
    page.click("#gx-conditions button")  # remove the threshold: only the avoided column holds
    assert len(shown_ranks(page)) > len(ranks)
    page.click("#gx-clear")
    assert len(shown_ranks(page)) == 50


def test_sorting_by_a_column_heading(page: Any, set_run: SetRun) -> None:
    auc = {m["rank"]: m["metrics"]["test_auc"] for m in listing(set_run)["models"]}
    page.click("#gx-head button[data-sort=test_auc]")
    values = [auc[r] for r in shown_ranks(page)]
    assert values == sorted(values) and values[0] < values[-1]
    assert page.get_attribute("#gx-head th:has(button[data-sort=test_auc])", "aria-sort") == "ascending"
    page.click("#gx-head button[data-sort=test_auc]")
    assert [auc[r] for r in shown_ranks(page)] == sorted(values, reverse=True)
    assert where_of(page)[-2:] == ["--sort", "-test_auc"]
    assert [m["rank"] for m in listing(set_run, "--sort", "-test_auc")["models"]] == shown_ranks(page)


def test_the_keyboard_reaches_every_control_and_picks_members(page: Any) -> None:
    """Tab reaches the filters, the headings' sort buttons and the table; in the table the arrows
    move between members and a / b choose the two compared; focus is drawn."""
    reached = []
    active = "(e => e.id || e.dataset.sort || e.tagName)(document.activeElement)"
    for _ in range(40):
        page.keyboard.press("Tab")
        reached.append(page.evaluate(active))
    controls = ("gx-figure", "gx-value", "gx-add-figure", "gx-feature", "gx-add-feature", "rank", "test_auc", "TR")
    for control in (*controls, "gx-a", "gx-b", "gx-heatmap"):
        assert control in reached, (control, reached)
    page.focus("#gx-body tr[tabindex='0']")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("none", "")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.rank") == "3"
    page.keyboard.press("b")
    assert page.locator("#gx-compare h4").nth(1).text_content() == "B: member 3"
    page.keyboard.press("End")
    page.keyboard.press("a")
    assert page.locator("#gx-compare h4").nth(0).text_content() == "A: member 50"
    differ = page.locator("#gx-differ").text_content()
    assert re.match(r"They disagree on \d+ of the 80 test rows", differ)
    page.focus("#gx-heatmap")  # the heatmap's cells: arrows move a cursor, Enter compares its two members
    for key in ("ArrowRight", "ArrowDown", "ArrowDown", "Enter"):
        page.keyboard.press(key)
    first = shown_ranks(page)[:3]
    assert page.locator("#gx-compare h4").all_text_contents() == [f"A: member {first[2]}", f"B: member {first[1]}"]
    assert page.locator("#gx-heat-cell").text_content().startswith(f"members {first[2]} and {first[1]}: agree on ")


def test_two_members_side_by_side_show_the_rows_they_disagree_on(page: Any, set_run: SetRun) -> None:
    doc = embedded(page_of(set_run))
    n = doc["n_rows"]
    matrix = np.frombuffer(base64.b64decode(doc["predictions"]["data"]), dtype=np.uint8).reshape(-1, n)
    a, b = next((0, j) for j in range(1, 50) if (matrix[0] != matrix[j]).any())
    page.select_option("#gx-a", str(a))
    page.select_option("#gx-b", str(b))
    differ = int((matrix[a] != matrix[b]).sum())
    assert page.locator("#gx-differ").text_content().startswith(f"They disagree on {differ} of the {n} test rows")
    rows = page.locator("#gx-rows tr")
    assert rows.count() == 1 + min(differ, 20)
    classes = doc["classes"]
    first = rows.nth(1).locator("td").all_text_contents()
    assert first[2] != first[3] and {first[2], first[3]} == set(classes)  # hostile labels shown as text
    assert page.locator("#gx-heat rect[data-i]").count() == 50 * 50


def test_the_heatmap_follows_the_filter_and_its_cap(page: Any) -> None:
    page.select_option("#gx-figure", "test_auc")
    page.fill("#gx-value", "0.9")
    page.click("#gx-add-figure")
    shown = len(shown_ranks(page))
    assert page.locator("#gx-heat rect[data-i]").count() == min(shown, 50) ** 2
    assert "at most 50" in page.locator("#gx-heat-note").text_content()


@pytest.mark.slow  # about 8 s: a MOSS set on the diabetes data
def test_a_regression_set_compares_members_by_how_far_apart_they_predict(tmp_path: Path, browser: Any) -> None:
    """For a regression set "alike" means nothing (real predictions differ by rounding): the page
    holds float32 predictions equal to the members' own, and compares two members by the mean
    and largest absolute difference of their predictions."""
    from glasswork.store import RunStore

    spec = {
        "name": "moss-set",
        "data": {"source": "sklearn:diabetes", "split": {"kind": "holdout", "test_size": 0.2, "seed": 0}},
        "solver": "moss",
        "objective": {"gamma": 0.001, "encoding": "sirus", "standardize": True, "refit": "ols",
                      "candidates": {"trees": 30, "depth": 2, "max_features": 0.333, "quantiles": 10, "seed": 0}},
        "constraints": {"max_rules": 2, "min_stability": 0.0},
        "search": {"policy": "branch_and_bound"},
        "limits": {"time": 60},
        "rashomon": {"epsilon": 0.05, "max_models": 12},
    }  # fmt: skip
    (tmp_path / "moss.json").write_text(json.dumps(spec))
    run = SetRun(tmp_path)
    assert run.call("run", "-q", str(tmp_path / "moss.json")).exit_code == 0
    assert run.call("report", "latest", "-o", str(tmp_path / "moss.html")).exit_code == 0
    doc = embedded((tmp_path / "moss.html").read_text())
    assert doc["regression"] and doc["part"] == "test"
    n = doc["n_rows"]
    matrix = np.frombuffer(base64.b64decode(doc["predictions"]["data"]), dtype="<f4").reshape(-1, n)
    store = RunStore(run.db)
    [run_id] = store.resolve(("latest",))
    details = store.details(run_id)
    from glasswork.data import load_again
    from glasswork.export import ModelInputs
    from glasswork.hooks.registry import get_registry

    problem = load_again(details["spec"]["data"], details.get("spec_path"), details["data_fingerprint"])
    inputs = ModelInputs.model_validate(details["inputs"]) if details.get("inputs") else None
    for k, member in enumerate(store.rashomon_members(run_id)):
        model = get_registry().rebuild_model(member.model, inputs).value
        np.testing.assert_allclose(matrix[k], model.predict(problem.X_test).astype(np.float32), rtol=1e-6)
    context = browser.new_context()
    page = context.new_page()
    page.goto((tmp_path / "moss.html").as_uri())
    gap = np.abs(matrix[0].astype(np.float64) - matrix[1])
    page.select_option("#gx-b", "1")
    text = page.locator("#gx-differ").text_content()
    said = re.match(r"Their predictions differ by (\S+) on average \(largest (\S+),", text)
    assert said and float(said.group(1)) == pytest.approx(gap.mean(), rel=1e-3)
    assert float(said.group(2)) == pytest.approx(gap.max(), rel=1e-3)
    assert page.locator("#gx-heat rect[data-i]").count() == len(matrix) ** 2
    context.close()
