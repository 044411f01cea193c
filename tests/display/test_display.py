"""Model views and monitor panels come from plugins' hooks; core draws nothing by solver name."""

from __future__ import annotations

from typing import Any

import toy_plugin
from glasswork import hookimpl
from glasswork.display.panels import BarsPanel, ScatterPanel, SeriesPanel
from glasswork.display.views import model_view
from glasswork.hooks.registry import Registry
from rich.console import Console


def rendered(renderable: Any) -> str:
    console = Console(width=100, record=True, file=open("/dev/null", "w"))
    console.print(renderable)
    return console.export_text()


def progress(t: float, **counters: Any) -> dict[str, Any]:
    return {"kind": "progress", "elapsed": t, "objective": 1.0 / (1 + t), "counters": counters}


def test_series_panel_follows_one_counter_over_time() -> None:
    panel = SeriesPanel("remaining", counter="log10_remaining")
    assert not panel.has_data
    for t in range(5):
        panel.feed(progress(float(t), log10_remaining=10.0 - t))
    panel.feed(progress(5.0, other=1))  # an event without the counter adds nothing
    panel.feed({"kind": "log", "elapsed": 6.0, "message": "hello"})
    assert panel.has_data and panel.series.ys == [10.0, 9.0, 8.0, 7.0, 6.0]


def test_bars_panel_keeps_the_latest_histogram_in_numeric_order() -> None:
    panel = BarsPanel("lengths", counter="queue_lengths")
    panel.feed(progress(0.0, queue_lengths={"1": 3}))
    panel.feed(progress(1.0, queue_lengths={"10": 1, "2": 40, "1": 5}))
    assert panel.bars() == (["1", "2", "10"], [5.0, 40.0, 1.0])


def test_scatter_panel_gathers_points_and_takes_the_results_final_word() -> None:
    panel = ScatterPanel("frontier", x="h1", y="objective", result_points="frontier", result_y="h2")
    panel.feed(progress(0.0, h1=0.9))
    panel.feed(progress(1.0, h1=0.5))
    assert [p[0] for p in panel.points] == [0.9, 0.5]
    panel.feed({"kind": "finish", "result": {"stats": {"frontier": [{"h1": 0.9, "h2": 3.0}, {"h1": 0.5, "h2": 2.0}]}}})
    assert panel.points == [(0.9, 3.0), (0.5, 2.0)]


def test_a_model_without_a_view_shows_its_own_text() -> None:
    registry = Registry(builtins=False, entry_points=False, disabled=(), extra=[("toy", toy_plugin)])
    text = rendered(model_view({"kind": "stump", "feature": 3}, "if x3 == 1 then yes else no", registry=registry))
    assert "if x3 == 1 then yes else no" in text
    assert "no model yet" in rendered(model_view(None, None, registry=registry))


def test_a_failing_view_falls_back_to_the_text_and_says_so() -> None:
    class _Broken:
        @staticmethod
        @hookimpl
        def render_model(model: dict[str, Any]) -> Any:
            raise KeyError("points")

    registry = Registry(builtins=False, entry_points=False, disabled=(), extra=[("broken", _Broken)])
    text = rendered(model_view({"kind": "card"}, "SCORE = 2 age", registry=registry))
    assert "SCORE = 2 age" in text and "view of 'card' models failed" in text


def test_a_view_that_cannot_be_drawn_falls_back_to_the_text_and_says_so() -> None:
    """A view that fails only when drawn (a name read as rich markup, '[/]' closing nothing) or
    that is no renderable at all (a wrong return type) is the plugin's failure, shown as a note
    over the model's text, never an exception where ``glasswork run`` prints the model."""
    from glasswork.display.views import model_table

    def markup_table() -> Any:
        table = model_table()
        table.add_column("rule")
        table.add_row("[/]x3")
        return table

    for answer, why in ((markup_table, "MarkupError"), (lambda: object(), "not a rich renderable")):

        class _Undrawable:
            view = staticmethod(answer)

            @hookimpl
            def render_model(self, model: dict[str, Any]) -> Any:
                return self.view()

        registry = Registry(builtins=False, entry_points=False, disabled=(), extra=[("undrawable", _Undrawable())])
        text = rendered(model_view({"kind": "card"}, "SCORE = 2 age", registry=registry))
        assert "SCORE = 2 age" in text and "view of 'card' models failed" in text and why in text, text
        assert "plugin 'undrawable'" in text


def test_builtin_views_render_their_own_kinds_only() -> None:
    registry = Registry(builtins=True, entry_points=False, disabled=())
    rule_list = {
        "kind": "rule_list",
        "classes": ["no", "yes"],
        "target": "recid",
        "rules": [{"antecedent": "priors>3", "prediction": "yes", "class_counts": [10, 30], "captured": 40}],
        "default": {"prediction": "no", "class_counts": [50, 10], "captured": 60},
    }
    text = rendered(model_view(rule_list, "(text)", registry=registry))
    assert "if ({priors>3}) then ({recid:yes})" in text and "75.00%" in text and "(text)" not in text
    card = {
        "kind": "score_card",
        "features": ["age<30"],
        "points": [2],
        "classes": [0, 1],
        "table": [{"score": 0, "risk": 0.1}, {"score": 2, "risk": 0.4}],
    }
    assert "+2" in rendered(model_view(card, registry=registry))
    assert "mystery" in rendered(model_view({"kind": "mystery"}, "mystery", registry=registry))


def test_views_print_names_as_text_without_control_codes() -> None:
    """A rule, a feature or a model's text holding ESC or markup is printed as it is written."""
    registry = Registry(builtins=True, entry_points=False, disabled=())
    rule_list = {
        "kind": "rule_list",
        "classes": ["no", "[red]yes[/red]"],
        "target": "t\x1b[31m",
        "rules": [{"antecedent": "a\x1b[2Jb", "prediction": "[red]yes[/red]", "class_counts": [1, 3], "captured": 4}],
        "default": {"prediction": "no", "class_counts": [5, 1], "captured": 6},
    }
    card = {
        "kind": "score_card",
        "features": ["[bold]age\x1b[0m"],
        "points": [2],
        "classes": ["a", "b\x07"],
        "table": [{"score": 0, "risk": 0.1}],
    }
    rule_set = {
        "kind": "rule_set",
        "intercept": 1.0,
        "rules": [{"text": "x\u202e <= 1 [i]", "value_inside": 1.0, "value_outside": 0.0, "pi": 0.5}],
    }
    shown = [rendered(model_view(m, registry=registry)) for m in (rule_list, card, rule_set)]
    shown.append(rendered(model_view({"kind": "mystery"}, "line 1\nline\x1b[2J 2 [red]", registry=registry)))
    for text in shown:
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "[red]yes[/red]" in shown[0] and "a\\x1b[2Jb" in shown[0]
    assert "[bold]age\\x1b[0m" in shown[1] and "x\\u202e <= 1 [i]" in shown[2]
    assert "line 1\nline\\x1b[2J 2 [red]" in shown[3]  # the text keeps its lines


def test_bars_panel_shows_an_emptied_histogram_not_its_last_full_one() -> None:
    """Issue 25: at the end of a search its queue is empty; the panel showed the last full bar."""
    import plotext
    from glasswork.tui.widgets import draw_panel

    panel = BarsPanel("queue by prefix length", counter="queue_lengths")
    panel.feed(progress(0.0, queue_lengths={"1": 30}))
    panel.feed(progress(1.0, queue_lengths={}))  # the final progress of a finished search
    assert panel.has_data and panel.bars() == ([], [])
    plotext.clear_figure()
    plotext.plotsize(60, 12)
    draw_panel(plotext, panel)
    drawn = plotext.build()
    assert "queue by prefix length: empty" in drawn and "█" not in drawn
