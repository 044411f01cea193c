"""The ``--where`` / ``--sort`` language over a set's members: what it reads, where its errors
point, three-valued logic over figures that are not available, and hostile text staying data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from glasswork.rashomon.query import (
    QueryError,
    closest_figures,
    compile_query,
    figure_names,
    member_figures,
    parse,
    shown_figures,
    sort_key,
    sorted_members,
)


@dataclass
class Row:
    rank: int
    objective: float | None
    features: tuple[str, ...] = ()
    size: int | None = 2
    metrics: dict[str, Any] | None = field(default_factory=dict)
    fairness: dict[str, dict[str, Any]] | None = None


HOSTILE = ["x'); DROP TABLE runs; --", 'say "hi"', "\x1b[31mred\x1b]0;t\x07", "__import__('os').system('true')"]
ROWS = [
    Row(1, 0.10, ("sex:Male", "age<=30"), 2, {"test_auc": 0.72, "train_accuracy": 0.8}, {"train": {"sp": 0.2}}),
    Row(2, 0.11, ("age<=30",), 1, {"test_auc": 0.69, "train_accuracy": 0.7}, {"train": {"sp": 0.04}}),
    Row(3, 0.12, (HOSTILE[0], HOSTILE[2]), 2, {"test_auc": 0.75, "train_accuracy": 0.6}, {"train": {"sp": None}}),
    Row(4, 0.13, ("income",), None, None, None),  # kept as a summary: no figures
]
KNOWN = figure_names(ROWS)


def resolve(name: str) -> tuple[str, ...] | str:
    if name == "sex":  # a raw column: every feature made from it
        return ("sex:Male", "sex:Female")
    known = {f for r in ROWS for f in r.features}
    return (name,) if name in known else f"no feature or column {name!r}"


def chosen(text: str) -> list[int]:
    query = compile_query(text, KNOWN, resolve)
    return [r.rank for r in ROWS if query.matches(r)]


def test_figures_by_name() -> None:
    figures = member_figures(ROWS[0])
    assert figures["rank"] == 1 and figures["objective"] == 0.10 and figures["size"] == 2
    assert figures["test_auc"] == 0.72 and figures["train_sp"] == 0.2 and figures["sp"] == 0.2
    assert KNOWN[:3] == ["rank", "objective", "size"] and "test_auc" in KNOWN and "sp" in KNOWN
    assert member_figures(ROWS[3]) == {"rank": 4.0, "objective": 0.13, "size": None}


@pytest.mark.parametrize(
    ("text", "ranks"),
    [
        ("test_auc >= 0.7", [1, 3]),
        ("test_auc >= 0.7 and not uses(sex)", [3]),
        ("not uses(sex)", [2, 3, 4]),
        ("uses(sex) or sp < 0.05", [1, 2]),
        ("(test_auc > 0.7 or objective <= 0.11) and size == 2", [1, 3]),
        ("test_auc > 0.7 or objective <= 0.11 and size == 1", [1, 2, 3]),  # and binds tighter than or
        ("not (test_auc < 0.7)", [1, 3]),
        ("sp <= 0.05", [2]),
        ("not sp <= 0.05", [1]),  # unknown (member 3's figure undefined, member 4's absent) is never chosen
        ("0.7 < test_auc", [1, 3]),
        ("train_accuracy > test_auc", [1, 2]),
        ("objective != 0.1", [2, 3, 4]),
        ("objective = 0.1", [1]),
        ("rank<=2 and(size>=1)", [1, 2]),  # whitespace is free where it is unambiguous
        ("test_auc >= 7e-1", [1, 3]),
        ("objective > -1 and not not uses('age<=30')", [1, 2]),
        (f"uses('{HOSTILE[0].replace(chr(39), chr(92) + chr(39))}')", [3]),
        (f"uses({HOSTILE[2]})", [3]),
        ("uses(sex) and objective > 1 or uses(income)", [4]),
        ("uses(income) or sp < 0", [4]),  # true or unknown is true
        ("uses(income) and sp < 1", []),  # true and unknown is unknown
    ],
)
def test_valid_expressions_choose_members(text: str, ranks: list[int]) -> None:
    assert chosen(text) == ranks


@pytest.mark.parametrize(
    ("text", "column", "words"),
    [
        ("", 1, "empty"),
        ("   ", 4, "empty"),
        ("test_auc >", 11, "expected a number or a figure"),
        ("test_auc 0.7", 10, "expected a comparison"),
        ("test_auc >= 0.7 and", 20, "expected a number or a figure"),
        ("(test_auc >= 0.7", 17, "expected ')' to close the '(' at column 1"),
        ("test_auc >= 0.7)", 16, "expected 'and', 'or' or the end"),
        ("tset_auc >= 0.7", 1, "did you mean 'test_auc'"),
        ("test_auc >= 0.7 and colour == 1", 21, "no member has a figure 'colour'"),
        ("uses(sex", 9, "not closed"),
        ("uses()", 6, "names no feature"),
        ("uses sex", 6, "in parentheses"),
        ("uses('sex)", 6, "quote ' at column 6 is not closed"),
        ("uses(nope)", 6, "no feature or column 'nope'"),
        ("1 < 2", 6, "two numbers"),
        ("test_auc >= 0.7 or", 19, "expected a number"),
        ("test_auc.real > 1", 9, "expected a comparison"),
        ("test_auc[0] > 1", 9, "expected a comparison"),
        ("len(x) > 1", 4, "expected a comparison"),
        ("objective > 'a'", 13, "expected a number or a figure"),
        ("and > 1", 1, "expected a number or a figure"),
    ],
)
def test_errors_point_at_their_column(text: str, column: int, words: str) -> None:
    with pytest.raises(QueryError) as caught:
        compile_query(text, KNOWN, resolve)
    assert words in str(caught.value)
    assert caught.value.position + 1 == column, str(caught.value)
    assert str(caught.value).endswith(f"(at column {column})")


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('touch /tmp/glasswork-pwned')",
        "test_auc > 0 or exec('1')",
        "objective > 0; DROP TABLE runs; --",
        "objective > 0 \x1b[31m",
        "lambda: 1",
        "objective > 0 and __class__ > 0",
        "(" * 500 + "objective > 0" + ")" * 500,
        "not " * 500 + "objective > 0",
        "objective > 0 and " * 400 + "objective > 0",
    ],
)
def test_hostile_text_is_data(text: str, tmp_path) -> None:
    """Nothing in an expression runs: every hostile string is a QueryError with a position (or,
    for a long but valid one, an answer), never an exception of another kind."""
    try:
        chosen(text)
    except QueryError as exc:
        assert 0 <= exc.position <= len(text)
    assert not (tmp_path / "glasswork-pwned").exists()


def test_feature_names_with_quotes_and_escapes_are_matched_exactly() -> None:
    quoted = HOSTILE[1].replace('"', '\\"')
    assert compile_query(f'uses("{quoted}")', KNOWN, lambda n: (n,)).features == {HOSTILE[1]: (HOSTILE[1],)}
    assert parse("uses('a\\\\b')").name == "a\\b"  # type: ignore[union-attr]
    assert parse("uses( spaced name )").name == "spaced name"  # type: ignore[union-attr]


def test_sorting_by_a_figure() -> None:
    assert sort_key("test_auc", KNOWN) == ("test_auc", False)
    assert sort_key("-test_auc", KNOWN) == ("test_auc", True)
    assert sort_key("test_auc", KNOWN, descending=True) == ("test_auc", True)
    ascending = [r.rank for r in sorted_members(ROWS, "test_auc", False)]
    descending = [r.rank for r in sorted_members(ROWS, "test_auc", True)]
    assert ascending == [2, 1, 3, 4] and descending == [3, 1, 2, 4]  # a member without the figure: last
    assert [r.rank for r in sorted_members(ROWS, "size", False)] == [2, 1, 3, 4]  # ties by rank
    with pytest.raises(QueryError, match="did you mean 'test_auc'"):
        sort_key("-test_acu", KNOWN)


def test_the_listing_shows_the_figures_asked_for() -> None:
    known = ["rank", "objective", "size", "train_accuracy", "test_accuracy", "test_auc", "sp", "train_sp"]
    assert shown_figures(known) == ["test_accuracy", "test_auc"]
    assert shown_figures(known, ["objective", "size", "test_auc"], {"metrics": ["sp"]}) == [
        "test_accuracy",
        "test_auc",
        "sp",
        "size",
    ]
    assert shown_figures(["rank", "train_accuracy"]) == ["train_accuracy"]  # no test rows


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("auc", ["test_auc"]),  # a figure named without its part: every part's
        ("AUC", ["test_auc"]),
        ("accuracy", ["train_accuracy"]),
        ("tset_auc", ["test_auc"]),
        ("objectiv", ["objective"]),
        ("colour", []),
        ("", []),
    ],
)
def test_an_unknown_figure_is_told_the_closest_first(name: str, meant: list[str]) -> None:
    """``auc`` gets ``test_auc`` (its ending), suggested before the list of every figure, in the
    query language's one error that ``--where``, ``--sort`` and the terminal UI all show."""
    assert closest_figures(name, KNOWN) == meant
    with pytest.raises(QueryError) as caught:
        compile_query(f"{name or 'x'} >= 0.85", KNOWN, resolve)
    message = str(caught.value)
    if meant:
        hint = f"did you mean {' or '.join(map(repr, meant))}?"
        assert hint in message and message.index(hint) < message.index("(figures: ")
    else:
        assert "did you mean" not in message
