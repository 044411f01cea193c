"""The model card: one self-contained HTML file that shows a run's model to people.

No network, and no script but the set explorer's: the charts are inline SVG drawn here (``line_chart``,
``scatter_chart``, ``stacked_bar``), which plugins also use to draw their models in the
``export_model`` hook's ``html`` format. The card holds the model as people draw it (from its
plugin), the certificate in plain words, training and test metrics, the calibration and ROC
curves (the data are loaded again from the stored spec and checked against the run's data
fingerprint), the search's bound trajectory (from the run's events) and the spec and data
fingerprint that reproduce it. A run with a Rashomon set also gets the set explorer
(``glasswork.display.explorer``): its members to sort, filter and compare in the browser, its one
script inline, its data embedded as JSON.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from glasswork._version import __version__
from glasswork.display.console import fmt_gap
from glasswork.quoting import html_text
from glasswork.rashomon import SetSummary

if TYPE_CHECKING:
    from glasswork.hooks.registry import Registry

PALETTE = ("#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb")
W, H = 360, 240  # chart size in px
L, R, T, B = 56, 28, 12, 36  # margins (the left one grows with the y tick labels)
CHAR_PX = 6.2  # width of a character of the charts' 10 px text (a generous estimate)
LEGEND_ROW = 14  # px per legend line, under the chart: a legend never sits on a curve


def esc(value: Any) -> str:
    """Data as HTML text: markup escaped, control characters (ESC, bidi marks) as visible escapes."""
    return html_text(value)


def nice_step(span: float, most: int = 6) -> float:
    """The smallest 1, 2 or 5 times a power of ten that cuts ``span`` into at most ``most`` steps."""
    if not (span > 0 and math.isfinite(span)):
        return 1.0
    rough = span / max(1, most)
    power = 10.0 ** math.floor(math.log10(rough))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if factor * power >= rough * (1 - 1e-9):
            return factor * power
    return 10.0 * power


def nice_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Round tick values inside ``[lo, hi]`` (the 1-2-5 rule): 0, 0.2, 0.4, ... not 0.037, 0.283, ..."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    step = nice_step(hi - lo, most)
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    decimals = max(0, -math.floor(math.log10(step)))
    return [round(k * step, decimals) + 0.0 for k in range(first, last + 1)]  # + 0.0: never "-0"


def tick_label(v: float, step: float) -> str:
    """A tick at a multiple of ``step``, with as many decimals as the step has and no more."""
    decimals = max(0, -math.floor(math.log10(step))) if step > 0 else 3
    if decimals > 4 or abs(v) >= 1e7:
        return f"{v:.3g}"
    return f"{v:,.{decimals}f}" if abs(v) >= 1000 else f"{v:.{decimals}f}"


# -- charts -----------------------------------------------------------------------------------------


def stacked_bar(counts: Sequence[float], fraction: float = 1.0, width: int = 160, height: int = 12) -> str:
    """A bar ``fraction`` of ``width`` long, split in the colours of the classes by ``counts``."""
    total = float(sum(counts))
    out, x = [], 0.0
    for k, c in enumerate(counts):
        w = 0.0 if total <= 0 else width * max(fraction, 0.0) * c / total
        if w > 0:
            out.append(
                f'<rect x="{x:.1f}" width="{w:.1f}" height="{height}" fill="{PALETTE[k % len(PALETTE)]}">'
                f"<title>{c:g}</title></rect>"
            )
        x += w
    return f'<svg width="{width}" height="{height}" role="img">{"".join(out)}</svg>'


def class_legend(classes: Sequence[Any]) -> str:
    """Coloured squares naming the classes, in ``stacked_bar``'s colours."""
    return " ".join(
        f'<span class=key style="background:{PALETTE[k % len(PALETTE)]}"></span>{esc(c)}' for k, c in enumerate(classes)
    )


class _Axes:
    """Linear maps from data to the chart's pixels, with the frame and ticks."""

    def __init__(
        self,
        xs: Sequence[float],
        ys: Sequence[float],
        xlim: tuple[float, float] | None,
        ylim: tuple[float, float] | None,
    ) -> None:
        self.x0, self.x1 = xlim or _limits(xs)
        self.y0, self.y1 = ylim or _limits(ys)
        ystep = nice_step(self.y1 - self.y0)
        self.y_labels = [(y, tick_label(y, ystep)) for y in nice_ticks(self.y0, self.y1)]
        widest = max((len(text) for _, text in self.y_labels), default=1)
        # room for the widest y tick label and, left of it, the rotated axis name: never clipped
        self.left = max(float(L), 4 + 16 + 4 + widest * CHAR_PX + 4)

    def px(self, x: float) -> float:
        return self.left + (x - self.x0) / (self.x1 - self.x0) * (W - self.left - R)

    def py(self, y: float) -> float:
        return H - B - (y - self.y0) / (self.y1 - self.y0) * (H - T - B)

    def frame(self, xlabel: str, ylabel: str) -> str:
        left = self.left
        parts = [
            f'<rect x="{left:.1f}" y="{T}" width="{W - left - R:.1f}" height="{H - T - B}" fill="none" stroke="#999"/>'
        ]
        xstep = nice_step(self.x1 - self.x0)
        for x in nice_ticks(self.x0, self.x1):
            parts.append(
                f'<text x="{self.px(x):.1f}" y="{H - B + 14}" text-anchor="middle">{tick_label(x, xstep)}</text>'
            )
        for y, text in self.y_labels:
            parts.append(f'<text x="{left - 4:.1f}" y="{self.py(y) + 4:.1f}" text-anchor="end">{text}</text>')
        parts.append(f'<text x="{(left + W - R) / 2:.1f}" y="{H - 4}" text-anchor="middle">{esc(xlabel)}</text>')
        parts.append(
            f'<text x="12" y="{(T + H - B) / 2}" text-anchor="middle" '
            f'transform="rotate(-90 12 {(T + H - B) / 2})">{esc(ylabel)}</text>'
        )
        return "".join(parts)


def _limits(values: Sequence[float]) -> tuple[float, float]:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return 0.0, 1.0
    lo, hi = min(finite), max(finite)
    if hi - lo < 1e-12:
        return lo - 0.5, hi + 0.5
    pad = 0.04 * (hi - lo)
    return lo - pad, hi + pad


def _svg(body: str, title: str, height: int = H) -> str:
    return (
        f'<svg class=chart viewBox="0 0 {W} {height}" width="{W}" height="{height}" role="img">'
        f"<title>{esc(title)}</title>{body}</svg>"
    )


def _legend(labels: Sequence[str], *, dots: Sequence[bool] = ()) -> tuple[str, int]:
    """The series' names under the chart (a swatch and the name a line each), and the height it adds."""
    parts = []
    for k, label in enumerate(labels):
        color, y = PALETTE[k % len(PALETTE)], H + LEGEND_ROW * k + 10  # clear of the x axis's name
        swatch = (
            f'<circle cx="{L + 9}" cy="{y - 4}" r="3" fill="{color}"/>'
            if k < len(dots) and dots[k]
            else f'<line x1="{L}" y1="{y - 4}" x2="{L + 18}" y2="{y - 4}" stroke="{color}" stroke-width="2"/>'
        )
        parts.append(f'{swatch}<text class="legend" x="{L + 24}" y="{y}">{esc(label)}</text>')
    return "".join(parts), LEGEND_ROW * len(labels) + (12 if labels else 0)


def line_chart(
    series: Sequence[tuple[str, Sequence[float], Sequence[float]]],
    *,
    xlabel: str,
    ylabel: str,
    xlim: tuple[float, float] | None = None,
    ylim: tuple[float, float] | None = None,
    dots: bool = False,
    diagonal: bool = False,
    step: bool = False,
    lines: bool = True,
) -> str:
    """Lines ``(label, xs, ys)`` on shared axes (``step``: held until the next point, as bounds are;
    ``lines=False``: points only, for values of separate problems that no line may join). The
    legend, with several series, sits under the chart, off the curves."""
    xs = [x for _, sx, _ in series for x in sx]
    ys = [y for _, _, sy in series for y in sy]
    ax = _Axes(xs, ys, xlim, ylim)
    parts = [ax.frame(xlabel, ylabel)]
    if diagonal:
        parts.append(
            f'<line x1="{ax.px(ax.x0):.1f}" y1="{ax.py(ax.y0):.1f}" x2="{ax.px(ax.x1):.1f}" '
            f'y2="{ax.py(ax.y1):.1f}" stroke="#bbb" stroke-dasharray="4 3"/>'
        )
    drawn_as_dots = []
    for k, (_, sx, sy) in enumerate(series):
        color = PALETTE[k % len(PALETTE)]
        points = [(x, y) for x, y in zip(sx, sy) if y is not None and math.isfinite(y)]
        drawn_as_dots.append(dots or not lines or len(points) == 1)
        if step:
            points = [p for i, (x, y) in enumerate(points) for p in ([(x, points[i - 1][1])] if i else []) + [(x, y)]]
        path = " ".join(f"{ax.px(x):.1f},{ax.py(y):.1f}" for x, y in points)
        if lines and len(points) > 1:
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        if drawn_as_dots[-1]:  # a lone point is drawn, not lost as a line of no length
            parts += [f'<circle cx="{ax.px(x):.1f}" cy="{ax.py(y):.1f}" r="3" fill="{color}"/>' for x, y in points]
    legend, extra = _legend([label for label, _, _ in series], dots=drawn_as_dots)
    if len(series) > 1:
        parts.append(legend)
    return _svg("".join(parts), f"{ylabel} by {xlabel}", H + (extra if len(series) > 1 else 0))


def scatter_chart(
    points: Sequence[tuple[float, float]], ringed: Sequence[tuple[float, float]] = (), *, xlabel: str, ylabel: str
) -> str:
    """Points, the ``ringed`` ones circled (a model's place among others)."""
    ax = _Axes([p[0] for p in points], [p[1] for p in points], None, None)
    parts = [ax.frame(xlabel, ylabel)]
    parts += [f'<circle cx="{ax.px(x):.1f}" cy="{ax.py(y):.1f}" r="3" fill="{PALETTE[0]}"/>' for x, y in points]
    parts += [
        f'<circle cx="{ax.px(x):.1f}" cy="{ax.py(y):.1f}" r="7" fill="none" stroke="{PALETTE[1]}" stroke-width="2"/>'
        for x, y in ringed
    ]
    return _svg("".join(parts), f"{ylabel} by {xlabel}")


# -- what the card says ----------------------------------------------------------------------------------


def certificate_words(details: dict[str, Any]) -> str:
    """The certificate in plain words."""
    status, objective, bound, gap = (details.get(k) for k in ("status", "objective", "lower_bound", "gap"))
    figures = f"objective {_num(objective)}, lower bound {_num(bound)}"
    if status == "optimal":
        return f"<b>Proven optimal.</b> No model of this kind scores better on the training objective ({figures})."
    if status == "infeasible":
        return (
            "<b>Proven infeasible.</b> The whole search space was searched and no model of this kind "
            "meets the constraints."
        )
    if objective is None and details.get("no_model"):
        return (
            f"<b>No model yet.</b> The search ended ({esc(status)}) before any model met the constraints; "
            f"every model that meets them has a training objective of at least {_num(bound)}."
            if bound is not None
            else f"<b>No model yet.</b> The search ended ({esc(status)}) before any model met the constraints."
        )
    if gap is not None and math.isfinite(gap) and objective is not None and bound is not None:
        how = (
            "a heuristic found this model and a proven lower bound measures it"
            if status == "heuristic"
            else f"the search stopped ({esc(status)}) before closing the gap"
        )
        if bound <= 0 < objective:
            return (
                f"<b>No useful guarantee.</b> The lower bound proved so far ({_num(bound)}) is too weak to say "
                f"how far this model is from the best possible (status {esc(status)}, {figures})."
            )
        # the one gap form (glasswork.display.console.fmt_gap): the best possible is >= the lower bound
        gap_words = esc(fmt_gap(objective, bound, status))
        return f"<b>Gap {gap_words} to the best possible</b> training objective: {how} (objective {_num(objective)})."
    return (
        f"<b>No guarantee.</b> The search ended with status {esc(status)} and proved no bound "
        f"(objective {_num(objective)})."
    )


def _num(v: Any) -> str:
    return "-" if v is None else f"{v:.6g}" if isinstance(v, float) else esc(v)


FRONTIER_COUNTER = "frontier_points"  # events counting it are points of a frontier: separate problems


def bound_trajectory(events: Sequence[dict[str, Any]], details: dict[str, Any] | None = None) -> str | None:
    """The best objective and the lower bound against elapsed seconds, from the run's events.

    The run's final certificate (``details``) ends both lines, so a bound proved at the end (a
    heuristic's certificate) is shown. Events of a frontier (their counters count
    ``frontier_points``) belong to separate problems: they are drawn as points, never joined.
    """
    best: list[tuple[float, float]] = []
    lower: list[tuple[float, float]] = []
    frontier = False
    for e in events:
        t = e.get("elapsed")
        if t is None or not math.isfinite(t) or e.get("kind") == "rashomon":
            continue  # a Rashomon set's bound is on what it did not enumerate, not on the optimum
        counters = e.get("counters")
        frontier = frontier or (isinstance(counters, dict) and FRONTIER_COUNTER in counters)
        for key, out in (("objective", best), ("lower_bound", lower)):
            v = e.get(key)
            if v is not None and math.isfinite(v):
                out.append((t, v))
    end = _finite((details or {}).get("elapsed"))
    if not frontier and details is not None:
        last = max([p[0] for p in best + lower], default=0.0)
        end = max(end if end is not None else last, last)
        for key, out in (("objective", best), ("lower_bound", lower)):
            v = _finite(details.get(key))
            if v is not None and (not out or out[-1] != (end, v)):
                out.append((end, v))
    if not best and not lower:
        return None
    series = [
        (name, [p[0] for p in pts], [p[1] for p in pts])
        for name, pts in (("best objective", best), ("lower bound", lower))
        if pts
    ]
    if frontier:
        series = [("frontier point" if n == "best objective" else "its lower bound", x, y) for n, x, y in series]
        return line_chart(series, xlabel="seconds", ylabel="objective", lines=False)
    return line_chart(series, xlabel="seconds", ylabel="objective", step=True)


def _search_caption(trajectory: str) -> str:
    if ">frontier point</text>" in trajectory:
        return "each frontier point's objective (and its proven lower bound) when it was solved: separate problems"
    return "the best objective found (and the lower bound, when the solver proves one) as the search went on"


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def roc_chart(y: np.ndarray, score: np.ndarray) -> str:
    from sklearn.metrics import roc_auc_score, roc_curve

    fpr, tpr, _ = roc_curve(y, score)
    auc = roc_auc_score(y, score)
    return line_chart(
        [(f"AUC {auc:.3f}", fpr.tolist(), tpr.tolist())],
        xlabel="false positive rate",
        ylabel="true positive rate",
        xlim=(0, 1),
        ylim=(0, 1),
        diagonal=True,
    )


def calibration_chart(y: np.ndarray, score: np.ndarray, bins: int = 10) -> str:
    """Observed positive rate against mean predicted risk, in bins of predicted risk."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges[1:-1], score, side="right"), 0, bins - 1)
    xs, ys = [], []
    for b in range(bins):
        mask = which == b
        if mask.any():
            xs.append(float(score[mask].mean()))
            ys.append(float(y[mask].mean()))
    return line_chart(
        [("observed", xs, ys)],
        xlabel="predicted risk",
        ylabel="observed rate",
        xlim=(0, 1),
        ylim=(0, 1),
        dots=True,
        diagonal=True,
    )


def _curves(details: dict[str, Any], registry: Registry) -> str:
    """ROC and calibration on the test part (else training), from the data loaded again."""
    from glasswork.data import load_again
    from glasswork.export import ModelInputs

    data = (details.get("spec") or {}).get("data")
    problem = load_again(data, details.get("spec_path"), details.get("data_fingerprint"))
    if isinstance(problem, str):  # data moved, unreadable or changed: the card says so, the rest still stands
        return f"<p class=note>{esc(problem[:1].upper() + problem[1:])}, so no ROC or calibration curve.</p>"
    inputs = details.get("inputs")
    model_dict = next(m["model"] for m in details["models"] if m.get("model"))
    answer = registry.rebuild_model(model_dict, None if inputs is None else ModelInputs.model_validate(inputs))
    model = answer.value
    X, y = (problem.X_test, problem.y_test) if problem.has_test else (problem.X, problem.y)
    part = "test" if problem.has_test else "training"
    assert X is not None and y is not None  # has_test says the test part is there
    if model is None or not hasattr(model, "predict_proba") or problem.task != "binary":
        if model is not None and problem.task == "regression":
            pred = np.asarray(model.predict(X), dtype=np.float64)
            pts = list(zip(pred.tolist(), np.asarray(y, dtype=np.float64).tolist()))
            return (
                f"<h2>Predictions ({part} data)</h2><figure>"
                f"{scatter_chart(pts, xlabel='predicted', ylabel='observed')}</figure>"
            )
        return f"<p class=note>No ROC or calibration curve: {esc(_why_no_curves(model, answer, problem.task))}.</p>"
    score = np.asarray(model.predict_proba(X))[:, 1]
    return (
        f"<h2>ROC and calibration ({part} data, {len(y):,} rows)</h2><div class=row>"
        f"<figure>{roc_chart(np.asarray(y), score)}<figcaption>ROC curve</figcaption></figure>"
        f"<figure>{calibration_chart(np.asarray(y), score)}<figcaption>calibration (10 bins)</figcaption>"
        f"</figure></div>"
    )


def _why_no_curves(model: Any, answer: Any, task: str) -> str:
    """The real reason a card has no ROC or calibration curve."""
    if model is None:
        if answer.errors:
            return f"the model could not be rebuilt to evaluate it on the data ({answer.failure()})"
        return "no installed plugin gives load_model for this kind of model, so it cannot be evaluated on the data"
    if task != "binary":
        return f"ROC and calibration curves describe binary classifiers, and this is a {task} model"
    return f"the model ({type(model).__name__}) gives no predicted probabilities (predict_proba)"


STYLE = """body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:900px;color:#222}
h1{font-size:22px;margin:0}h2{font-size:16px;margin:20px 0 6px;border-bottom:1px solid #ddd}
table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;vertical-align:middle}
td.n{text-align:right}.model tr:nth-child(even){background:#f6f6f6}.risk td{text-align:right}
.risk{display:block;overflow-x:auto;max-width:100%;font-size:12px}.risk td,.risk th{padding:2px 4px}
.row{display:flex;gap:16px;flex-wrap:wrap;align-items:flex-start}figure{margin:0}
figcaption,.note,.dim{color:#666;font-size:12px}svg text{font-size:10px;fill:#444}
.key{display:inline-block;width:10px;height:10px;margin:0 3px 0 8px}
pre{background:#f6f6f6;padding:8px;overflow:auto;font-size:12px}"""


MAX_RELIANCE_ROWS = 25  # features in the card's importance table (the largest ranges first)


def rashomon_section(summary: SetSummary | None, *, explorer: bool = False) -> str:
    """The card's Rashomon set: its size, completeness and threshold, then each feature's share of
    the set using it and its importance range (model class reliance) drawn on a shared axis (with
    ``explorer``, the set explorer below draws those, over the members a reader chooses), and
    the same range per raw column of the data (every feature made from it shuffled together)."""
    if summary is None:
        return ""
    from glasswork.display.console import multiplicity_text, rashomon_summary_text

    figures = summary.multiplicity or {}
    lines = [esc(rashomon_summary_text(summary))]
    described = multiplicity_text(figures)
    if described:
        lines.append(esc(described))
    use = figures.get("variable_use") or {}
    reliance = figures.get("reliance") or {}
    names = sorted(use, key=lambda n: (-(reliance.get(n) or [1.0, 1.0])[1], -use[n], n))
    body = ""
    if names and explorer:
        body = (
            "<p class=note>Each feature's share of the members and its reliance range are in the "
            '<a href="#explorer">set explorer</a> below, over the members you choose.</p>'
        )
    elif names:
        body = _reliance_table("feature", names, reliance, use) + (
            "<p class=note>Reliance: a member's error with the feature's values shuffled over its error as "
            "they are (model class reliance, Fisher, Rudin and Dominici 2019); features no member uses have "
            "the range [1, 1].</p>"
        )
    by_column = figures.get("reliance_columns") or {}
    if by_column:
        columns = sorted(by_column, key=lambda c: (-by_column[c][1], c))
        body += _reliance_table("raw column", columns, by_column, None) + (
            "<p class=note>Per raw column: every feature made from the column shuffled together, as shuffling "
            "the column itself would.</p>"
        )
    body += set_curves_section(figures.get("curves"))
    return f"<h2>Rashomon set</h2><p>{'<br>'.join(lines)}</p>{body}{_fairness_range(summary.fairness)}"


def set_curves_section(doc: Any) -> str:
    """The set's figures as epsilon grows (``glasswork.rashomon.curves``), drawn as steps (the set
    is the same between two thresholds where it changes): its size, ambiguity and discrepancy, and
    its distinct prediction vectors, on the training and test rows; what they cover under them."""
    if not isinstance(doc, dict) or not isinstance(doc.get("points"), dict) or not doc["points"].get("threshold"):
        return ""
    from glasswork.rashomon.curves import coverage

    points = doc["points"]
    relative = all(e is not None for e in points.get("epsilon") or [None])
    xs = list(points["epsilon"] if relative else points["threshold"])
    xlabel = "epsilon (relative to the optimum)" if relative else "objective threshold"
    end = _finite(doc.get("threshold"))  # the set stays as it is from its last change up to the run's threshold
    optimum = _finite(doc.get("optimum"))
    if end is not None and relative and optimum:
        end = end / optimum - 1.0
    held = end is not None and end > xs[-1]

    def curve(values: list[Any]) -> tuple[list[Any], list[Any]]:
        return (xs + [end], values + values[-1:]) if held else (xs, values)

    charts = [line_chart([("members", *curve(points["size"]))], xlabel=xlabel, ylabel="set size", step=True, dots=True)]
    parts = list(doc.get("rows") or [])
    agreement = [
        (f"{figure} ({part} rows)", *curve(points[f"{part}_{figure}"]))
        for figure in ("ambiguity", "discrepancy")
        for part in parts
        if f"{part}_{figure}" in points
    ]
    if agreement:
        top = max((v for _, _, ys in agreement for v in ys if v is not None), default=0.0)
        ylim = (0.0, max(0.05, min(1.0, 1.1 * top)))
        charts.append(line_chart(agreement, xlabel=xlabel, ylabel="share of rows", step=True, ylim=ylim))
    patterns = [(f"{part} rows", *curve(points[f"{part}_patterns"])) for part in parts if f"{part}_patterns" in points]
    if patterns:
        charts.append(line_chart(patterns, xlabel=xlabel, ylabel="distinct prediction vectors", step=True))
    notes = "; ".join(str(n) for n in doc.get("notes") or [])
    return (
        "<h3>The set as epsilon grows</h3>"
        + "".join(charts)
        + f"<p class=note>Curves {esc(coverage(doc))}. Ambiguity: the share "
        "of rows on which some member predicts otherwise than the optimal model; discrepancy: the largest "
        "share on which one member does (Marx, Calmon and Ustun 2020); distinct prediction vectors: the "
        f"members' different labellings of the rows.{'' if not notes else ' ' + esc(notes)}</p>"
    )


def _fairness_range(doc: dict[str, Any] | None) -> str:
    """The range of each audited fairness metric over the set's members (``rashomon.figures``):
    what it covers (exact only over a complete set scored whole), the least and largest value on
    the training and test rows with the member of each, and the best member within the spec's
    constraint."""
    if not doc:
        return ""
    from glasswork.rashomon.figures import PARTS, coverage_text, range_lines

    parts = [part for part in PARTS if doc.get(part)]
    head = "".join(f"<th>{part} min</th><th>{part} max</th>" for part in parts)
    rows = []
    for metric in doc.get("metrics") or []:
        cells = []
        for part in parts:
            said = (doc.get(part) or {}).get(metric)
            for end in ("min", "max"):
                if said is None or said.get(end) is None:
                    cells.append("<td class=n>undefined</td>")
                else:
                    member = f"<small>(member {esc(said[end + '_rank'])})</small>"
                    cells.append(f"<td class=n>{_num(said[end])} {member}</td>")
        rows.append(f"<tr><td>{esc(metric)}</td>{''.join(cells)}</tr>")
    after = range_lines({**doc, "metrics": []})[1:]  # the constraint's best member and the notes
    notes = "".join(f"<p class=note>{esc(line)}</p>" for line in after)
    return (
        f"<h3>Fairness over the set</h3><p>{esc(coverage_text(doc))}.</p>"
        f"<table><tr><th>metric</th>{head}</tr>{''.join(rows)}</table>{notes}"
    )


def _reliance_table(heading: str, names: Sequence[str], reliance: dict[str, Any], use: dict[str, float] | None) -> str:
    """Reliance ranges of ``names`` (the largest first, at most ``MAX_RELIANCE_ROWS``) drawn on one
    axis, with the share of the set using each when ``use`` is given."""
    shown = list(names[:MAX_RELIANCE_ROWS])
    top = max([1.0, *((reliance.get(n) or [1.0, 1.0])[1] for n in shown)])
    width = 200

    def x(value: float) -> float:
        return width * min(max(value, 0.0), top) / top

    rows = []
    for name in shown:
        low, high = reliance.get(name) or [None, None]
        bar = ""
        if low is not None and high is not None:
            bar = (
                f'<svg width="{width}" height="12" role="img"><title>{_num(low)} to {_num(high)}</title>'
                f'<line x1="{x(1.0):.1f}" x2="{x(1.0):.1f}" y1="0" y2="12" stroke="#bbb"/>'
                f'<rect x="{x(low):.1f}" y="3" width="{max(x(high) - x(low), 1.5):.1f}" height="6" '
                f'fill="{PALETTE[0]}"/></svg>'
            )
        used = "" if use is None else f"<td class=n>{esc(f'{100 * use[name]:.3g} %')}</td>"
        rows.append(
            f"<tr><td>{esc(name)}</td>{used}<td class=n>{_num(low)}</td>"
            f"<td class=n>{_num(high)}</td><td>{bar}</td></tr>"
        )
    more = (
        f"<p class=note>{len(names) - len(shown):,} more {esc(heading)}s used by some member are not shown.</p>"
        if len(names) > len(shown)
        else ""
    )
    used_head = "" if use is None else "<th>used by</th>"
    return (
        f"<table><tr><th>{esc(heading)}</th>{used_head}<th>reliance min</th><th>reliance max</th>"
        f"<th>range (1 = not relied on; axis 0 to {_num(top)})</th></tr>{''.join(rows)}</table>{more}"
    )


def _without_nulls(value: Any) -> Any:
    """The spec without its unset (null) fields: what a person would write to reproduce it."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None and v != [] and v != {}}
    return value


def build_report(
    details: dict[str, Any],
    events: Sequence[dict[str, Any]],
    registry: Registry | None = None,
    members: Sequence[Any] = (),
) -> str:
    """The HTML card of a stored run (``RunStore.details`` and ``RunStore.events``); with the
    kept ``members`` of its Rashomon set (``RunStore.rashomon_members``), the set explorer too."""
    from glasswork.export import ExportError, export_run
    from ruamel.yaml import YAML

    if registry is None:
        from glasswork.hooks.registry import get_registry

        registry = get_registry()
    model = next((m for m in details.get("models") or [] if m.get("model")), None)
    no_model = details.get("no_model")
    if model is None and not no_model:
        raise ExportError(
            f"run {details.get('run_id', '?')[:12]} has no model to report (state {details.get('state')})"
        )
    if model is None:  # infeasible, or stopped before any model met the constraints: the card says why
        drawing = f"<p><b>No model.</b> {esc(no_model)}.</p>"
    else:
        try:
            drawing = export_run(details, "html", registry=registry)
        except ExportError:  # a plugin without a drawing: its table, else the model's text
            try:
                drawing = f"<pre>{esc(export_run(details, 'markdown', registry=registry))}</pre>"
            except ExportError:
                drawing = f"<pre>{esc(model.get('text') or '')}</pre>"
    metrics = details.get("metrics") or {}
    names = sorted({k.split("_", 1)[1] for k in metrics if k.startswith(("train_", "test_"))})
    rows = "".join(
        f"<tr><td>{esc(n)}</td><td class=n>{_num(metrics.get('train_' + n))}</td>"
        f"<td class=n>{_num(metrics.get('test_' + n))}</td></tr>"
        for n in names
    )
    trajectory = bound_trajectory(events, details)
    buffer = io.StringIO()
    yaml = YAML()
    yaml.default_flow_style = False
    yaml.dump(_without_nulls(details.get("spec") or {}), buffer)
    kind = "no model" if model is None else str(model.get("kind", "model")).replace("_", " ")
    title = f"{details.get('name')}: {kind}"
    explorer = ""
    if members and details.get("rashomon"):
        from glasswork.display import explorer as set_explorer

        explorer = set_explorer.explorer_section(details, members, registry)
    style = STYLE + (set_explorer.style() if explorer else "")
    parts = [
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{esc(title)}</title>"
        f"<style>{style}</style></head><body>",
        f"<h1>{esc(title)}</h1><p class=dim>run {esc(details.get('run_id'))} · solver {esc(details.get('solver'))} "
        f"{esc(details.get('solver_version'))} · {esc(str(details.get('started_at'))[:19])} · "
        f"{details.get('n_train')} training rows, {details.get('n_test')} test rows</p>",
        f"<h2>Certificate</h2><p>{certificate_words(details)}</p>",
        f"<h2>Model</h2>{drawing}",
        f"<h2>Metrics</h2><table><tr><th></th><th>train</th><th>test</th></tr>{rows}</table>" if rows else "",
        "" if model is None else _curves(details, registry),
        rashomon_section(
            SetSummary.from_dict(details["rashomon"]) if details.get("rashomon") else None, explorer=bool(explorer)
        ),
        explorer,
        fairness_section(details.get("fairness")),
        frontier_section(details.get("stats")),
        f"<h2>Search</h2><figure>{trajectory}<figcaption>{_search_caption(trajectory)}</figcaption></figure>"
        if trajectory
        else "<h2>Search</h2><p class=note>No bound was reported during the search.</p>",
        f"<h2>Reproduce</h2><p>spec hash <code>{esc(details.get('spec_hash'))}</code><br>data fingerprint "
        f"<code>{esc(details.get('data_fingerprint'))}</code></p><pre>{esc(buffer.getvalue())}</pre>",
        f"<p class=dim>glasswork {esc(__version__)}</p></body></html>\n",
    ]
    return "".join(parts)


def write_report(store: Any, run_id: str, path: str | Path | None = None, registry: Registry | None = None) -> Path:
    """Write the HTML card of a stored run to ``path`` (default ``<name>-<run id>.html``)."""
    from glasswork.export import default_path, write_file

    details = store.details(run_id)
    out = Path(path) if path is not None else default_path(details, "html")
    members = store.rashomon_members(run_id) if details.get("rashomon") else []
    write_file(out, build_report(details, store.events(run_id), registry, members))
    return out


RATE_WORDS = {
    "selection_rate": "predicted positive, P(ŷ=1)",
    "ppv": "precision, P(y=1 | ŷ=1)",
    "npv": "negative predictive value, P(y=0 | ŷ=0)",
    "fpr": "false positive rate, P(ŷ=1 | y=0)",
    "fnr": "false negative rate, P(ŷ=0 | y=1)",
}


def _rate_bars(protected: float | None, reference: float | None, width: int = 200) -> str:
    """Two bars on a 0 to 1 axis, the protected group's above the reference's; the figures are
    also in the table's text and in the drawing's label, so no reader depends on the colours."""
    label = f"protected {_num(protected)}, reference {_num(reference)}"
    bars = []
    for row, (value, colour) in enumerate(((protected, PALETTE[1]), (reference, PALETTE[0]))):
        if value is not None:
            bars.append(
                f'<rect x="0" y="{1 + 8 * row}" width="{_bar_length(value, width):.1f}" height="6" fill="{colour}"/>'
            )
    return (
        f'<svg width="{width}" height="16" role="img" aria-label="{esc(label)}"><title>{esc(label)}</title>'
        f'<line x1="{width}" x2="{width}" y1="0" y2="16" stroke="#bbb"/>{"".join(bars)}</svg>'
    )


def _bar_length(value: float, width: int) -> float:
    """A rate's bar: a pixel at least when it is above 0, so a small rate is not read as none."""
    length = width * min(max(value, 0.0), 1.0)
    return max(length, 1.0) if value > 0 else 0.0


def fairness_section(audit: dict[str, Any] | None) -> str:
    """The card's fairness audit: per protected group, each metric on the training and test rows,
    then the rates the metrics compare on the training rows, the group's bar above the
    reference's (an undefined figure, an empty group or cell, is written as such, never 0)."""
    if not audit:
        return ""
    if "error" in audit:
        return f"<h2>Fairness</h2><p class=note>No figures: the model failed to predict ({esc(audit['error'])}).</p>"
    parts = [part for part in ("train", "test") if part in audit]
    body = []
    for i, label in enumerate(audit.get("groups") or []):
        per_part = {part: audit[part]["groups"][i] for part in parts}
        rows = "".join(
            f"<tr><td>{esc(metric.replace('_', ' '))}</td>"
            + "".join(f"<td class=n>{_undefined(per_part[p].get(metric))}</td>" for p in parts)
            + "</tr>"
            for metric in audit.get("metrics") or []
            if metric in per_part[parts[0]]
        )
        heads = "".join(f"<th>{p}</th>" for p in parts)
        train = per_part["train"]
        rates = "".join(
            f"<tr><td>{esc(words)}</td><td class=n>{_undefined(train['protected'].get(rate))}</td>"
            f"<td class=n>{_undefined(train['reference'].get(rate))}</td>"
            f"<td>{_rate_bars(train['protected'].get(rate), train['reference'].get(rate))}</td></tr>"
            for rate, words in RATE_WORDS.items()
        )
        sizes = "; ".join(
            f"{p}: {per_part[p]['protected']['rows']:,} protected rows, "
            f"{per_part[p]['reference']['rows']:,} reference rows"
            for p in parts
        )
        body.append(
            f"<h3>{esc(label)} against every other row</h3><p class=dim>{esc(sizes)}</p>"
            f"<table><tr><th>metric (absolute difference)</th>{heads}</tr>{rows}</table>"
            f"<table><tr><th>rate on the training rows</th><th>protected</th><th>reference</th>"
            f'<th><span class=key style="background:{PALETTE[1]}"></span>protected '
            f'<span class=key style="background:{PALETTE[0]}"></span>reference (axis 0 to 1)</th></tr>'
            f"{rates}</table>"
        )
    return (
        "<h2>Fairness</h2>" + "".join(body) + "<p class=note>Each metric is the absolute difference between the "
        "protected group and every other row (docs/fairness.md); undefined: a group or a cell it divides by "
        "has no rows.</p>"
    )


def _undefined(value: Any) -> str:
    return "undefined" if value is None else _num(value)


def frontier_section(stats: Any) -> str:
    """The card's accuracy-fairness frontier (``glasswork.frontier``): each point's best objective
    and proven lower bound against its model's figure, then the points with their certificates;
    empty for a run without one."""
    from glasswork.frontier import end_words, frontier_of, limit_words

    document = frontier_of(stats)
    if document is None:
        return ""
    metric = str(document.get("metric"))
    drawn = [
        p
        for p in document["points"]
        if isinstance(p, dict) and _finite(p.get("unfairness")) is not None and _finite(p.get("objective")) is not None
    ]
    chart = ""
    if drawn:
        front = [p for p in drawn if not p.get("dominated")]
        series = [("best objective (the front)", [p["unfairness"] for p in front], [p["objective"] for p in front])]
        bounded = [p for p in drawn if _finite(p.get("lower_bound")) is not None]
        if bounded:
            series.append(("its lower bound", [p["unfairness"] for p in bounded], [p["lower_bound"] for p in bounded]))
        chart = (
            f"<figure>{line_chart(series, xlabel=metric, ylabel='objective', dots=True)}"
            "<figcaption>each point: the best training objective among the models at most as unfair as the "
            "point's limit, against its model's figure on the training rows</figcaption></figure>"
        )
    rows = "".join(
        f"<tr><td class=n>{_num(p.get('point'))}</td><td class=n>{esc(held)}</td>"
        f"<td class=n>{_num(p.get('unfairness'))}</td><td class=n>{_num(p.get('objective'))}</td>"
        f"<td class=n>{_num(p.get('lower_bound'))}</td>"
        f"<td class=n>{esc(fmt_gap(p.get('objective'), p.get('lower_bound'), p.get('status'), compact=True))}</td>"
        f"<td>{esc(p.get('status'))}{' (dominated)' if p.get('dominated') else ''}</td>"
        f"<td><pre>{esc(p.get('model_text') or '-')}</pre></td></tr>"
        for p, held in zip(document["points"], limit_words(document))
        if isinstance(p, dict)
    )
    table = (
        f"<table class=model><tr><th>#</th><th>held to</th><th>{esc(metric)}</th><th>objective</th>"
        f"<th>lower bound</th><th>gap</th><th>status</th><th>model</th></tr>{rows}</table>"
    )
    return (
        f"<h2>Fairness frontier</h2>{chart}{table}<p class=note>{esc(end_words(document))}. The run's model is "
        "point 1's.</p>"
    )
