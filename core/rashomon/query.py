"""Choosing members of a Rashomon set by their figures: ``glasswork rashomon RUN --where EXPR
--sort NAME``. The expression is a tiny language read by a hand-written parser, never Python's
``eval``: the text is data, and nothing in it can run.

Grammar (keywords and names are case-sensitive; whitespace is free)::

    expr    := or
    or      := and ("or" and)*
    and     := unary ("and" unary)*
    unary   := "not" unary | "(" expr ")" | "uses" "(" feature ")" | compare
    compare := operand OP operand          OP: < <= > >= == = !=
    operand := NUMBER | FIGURE
    feature := 'quoted' | "quoted" | bare text up to the closing parenthesis

A ``FIGURE`` is one of a member's figures (``figure_names``): ``rank``, ``objective``, ``size``,
its metrics (``train_accuracy``, ``test_auc``, ...) and its fairness audit (``train_METRIC``,
``test_METRIC``, and ``METRIC`` alone for the training rows, the rows a constraint holds).
A quoted feature takes ``\\`` before a quote or a backslash; ``uses(NAME)`` is true when the member
uses that feature, or any feature made from that raw column (what ``resolve`` says it stands for).

Logic is three-valued, as SQL's: a comparison with a figure that is not available (a member kept
as a summary) or undefined (an empty cell of a group) is unknown, ``not`` unknown is unknown,
and a member is listed only when the whole expression is true. Sorting puts such members last.
Every error names its column in the expression (``QueryError.position``, from 0).
"""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

MAX_LENGTH = 4000  # characters of an expression (a limit on the work, not on what can be said)
MAX_DEPTH = 100  # nested parentheses and nots

COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    ">": operator.gt,
    "=": operator.eq,
}
KEYWORDS = ("and", "or", "not", "uses")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class QueryError(ValueError):
    """An expression that cannot be read or used: what is wrong and where (``position``, the
    index of the character, from 0)."""

    def __init__(self, message: str, text: str, position: int) -> None:
        super().__init__(message)
        self.message = message
        self.text = text
        self.position = max(0, min(position, len(text)))

    def __str__(self) -> str:
        return f"{self.message} (at column {self.position + 1})"

    def pointed(self) -> str:
        """Two lines: the expression (control characters escaped, so the caret lines up with what
        is shown) and a caret under the column of the error."""
        from glasswork.quoting import terminal_text

        before = terminal_text(self.text[: self.position])
        return f"{terminal_text(self.text)}\n{' ' * len(before)}^"


class Member(Protocol):
    """What the language reads of a member (``glasswork.store.RashomonMemberRow``)."""

    rank: int
    objective: float | None
    features: tuple[str, ...]
    size: int | None
    metrics: Mapping[str, Any] | None
    fairness: Mapping[str, Mapping[str, Any]] | None


def member_figures(member: Member) -> dict[str, float | None]:
    """Every figure of ``member`` by the name the language gives it (module docstring)."""
    return figures_of(
        {
            "rank": member.rank,
            "objective": member.objective,
            "size": member.size,
            "metrics": member.metrics,
            "fairness": member.fairness,
        }
    )


def figures_of(doc: Mapping[str, Any]) -> dict[str, float | None]:
    """``member_figures`` of a member's dict form (``rank`` with ``RashomonMember.to_dict()``)."""
    out: dict[str, float | None] = {name: _number(doc.get(name)) for name in ("rank", "objective", "size")}
    for name, value in (doc.get("metrics") or {}).items():
        out[name] = _number(value)
    for part in ("test", "train"):  # a bare metric is the training rows' figure: set last, it wins
        for metric, value in ((doc.get("fairness") or {}).get(part) or {}).items():
            out[f"{part}_{metric}"] = _number(value)
            out[metric] = _number(value)
    return out


def figure_names(members: Iterable[Member]) -> list[str]:
    """The figures some member has, the fixed ones first (what ``--where`` and ``--sort`` take)."""
    names = {"rank": None, "objective": None, "size": None}
    for member in members:
        names.update(dict.fromkeys(member_figures(member)))
    return list(names)


def figure_names_of(docs: Iterable[Mapping[str, Any]]) -> list[str]:
    """``figure_names`` of members in their dict form."""
    names = {"rank": None, "objective": None, "size": None}
    for doc in docs:
        names.update(dict.fromkeys(figures_of(doc)))
    return list(names)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


# -- the tree --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Name:
    """A figure compared, where it stands in the expression (for the message of an error)."""

    name: str
    position: int


class Uses(Name):
    """``uses(NAME)``: a feature or raw column, not a figure."""


@dataclass(frozen=True)
class Compare:
    left: Name | float
    op: str
    right: Name | float


@dataclass(frozen=True)
class Logic:
    """``left and right``, ``left or right``, or ``not left`` (``op``; ``right`` is then ``None``)."""

    op: str
    left: Node
    right: Node | None = None


Node = Compare | Uses | Logic


# -- reading ---------------------------------------------------------------------------------------


class _Parser:
    """Recursive descent over the text, one token looked at a time."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    def fail(self, message: str, position: int | None = None) -> QueryError:
        return QueryError(message, self.text, self.pos if position is None else position)

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def word(self) -> tuple[str, int] | None:
        """The name or keyword at the cursor (not consumed), with its position."""
        self.skip()
        found = _NAME.match(self.text, self.pos)
        return None if found is None else (found.group(), self.pos)

    def take(self, literal: str) -> bool:
        self.skip()
        if self.text.startswith(literal, self.pos):
            self.pos += len(literal)
            return True
        return False

    def keyword(self, name: str) -> bool:
        said = self.word()
        if said is not None and said[0] == name:
            self.pos += len(name)
            return True
        return False

    def parse(self) -> Node:
        if len(self.text) > MAX_LENGTH:
            raise self.fail(f"the expression is longer than {MAX_LENGTH:,} characters", MAX_LENGTH)
        self.skip()
        if self.pos == len(self.text):
            raise self.fail("the expression is empty: give a condition such as 'test_auc >= 0.7'")
        node = self.either()
        self.skip()
        if self.pos < len(self.text):
            raise self.fail(f"unexpected {self.shown()}: expected 'and', 'or' or the end")
        return node

    def shown(self) -> str:
        """What stands at the cursor, as a message quotes it (control characters escaped)."""
        if self.pos >= len(self.text):
            return "end of the expression"
        said = self.word()
        token = said[0] if said is not None else self.text[self.pos]
        return repr(token)

    def either(self) -> Node:
        node = self.both()
        while self.keyword("or"):
            node = Logic("or", node, self.both())
        return node

    def both(self) -> Node:
        node = self.unary()
        while self.keyword("and"):
            node = Logic("and", node, self.unary())
        return node

    def unary(self) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"more than {MAX_DEPTH} nested parentheses or 'not's")
        try:
            if self.keyword("not"):
                return Logic("not", self.unary())
            self.skip()
            start = self.pos
            if self.take("("):
                node = self.either()
                if not self.take(")"):
                    raise self.fail(f"unexpected {self.shown()}: expected ')' to close the '(' at column {start + 1}")
                return node
            said = self.word()
            if said is not None and said[0] == "uses":
                self.pos += len("uses")
                return self.uses(start)
            return self.compare()
        finally:
            self.depth -= 1

    def uses(self, start: int) -> Uses:
        if not self.take("("):
            raise self.fail(f"unexpected {self.shown()}: 'uses' takes a feature or column in parentheses, uses(sex)")
        self.skip()
        position = self.pos
        if self.pos < len(self.text) and self.text[self.pos] in "'\"":
            name = self.quoted()
            if not self.take(")"):
                raise self.fail(f"unexpected {self.shown()}: expected ')' to close uses( at column {start + 1}")
        else:
            end = self.text.find(")", self.pos)
            if end < 0:
                raise self.fail(f"uses( at column {start + 1} is not closed by ')'", len(self.text))
            name = self.text[self.pos : end].strip()
            self.pos = end + 1
        if not name:
            raise self.fail("uses() names no feature: give one, uses(sex) or uses('age<=30')", position)
        return Uses(name, position)

    def quoted(self) -> str:
        quote, start = self.text[self.pos], self.pos
        self.pos += 1
        out = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\\" and self.pos + 1 < len(self.text) and self.text[self.pos + 1] in ("\\", quote):
                out.append(self.text[self.pos + 1])
                self.pos += 2
            elif char == quote:
                self.pos += 1
                return "".join(out)
            else:
                out.append(char)
                self.pos += 1
        raise self.fail(f"the quote {quote} at column {start + 1} is not closed", start)

    def compare(self) -> Compare:
        left = self.operand()
        self.skip()
        op = next((o for o in COMPARISONS if self.text.startswith(o, self.pos)), None)
        if op is None:
            raise self.fail(f"unexpected {self.shown()}: expected a comparison (<, <=, >, >=, ==, !=)")
        self.pos += len(op)
        right = self.operand()
        if not isinstance(left, Name) and not isinstance(right, Name):
            raise self.fail("a comparison of two numbers says nothing about a member: compare a figure")
        return Compare(left, op, right)

    def operand(self) -> Name | float:
        self.skip()
        sign = -1.0 if self.take("-") else 1.0
        self.skip()
        number = _NUMBER.match(self.text, self.pos)
        if number is not None:
            self.pos = number.end()
            return sign * float(number.group())
        said = self.word()
        if sign < 0 or said is None or said[0] in KEYWORDS:
            raise self.fail(f"unexpected {self.shown()}: expected a number or a figure such as test_auc")
        self.pos += len(said[0])
        return Name(*said)


def parse(text: str) -> Node:
    """The tree of an expression; ``QueryError`` with its position when it is not one."""
    return _Parser(text).parse()


# -- using -----------------------------------------------------------------------------------------


def _nodes(node: Node) -> Iterable[Node]:
    yield node
    if isinstance(node, Logic):
        for inner in (node.left, node.right):
            if inner is not None:
                yield from _nodes(inner)


def closest_figures(name: str, known: Sequence[str], n: int = 3) -> list[str]:
    """The figures of ``known`` a mistyped ``name`` most likely meant, best first: by ``difflib``'s
    likeness to the whole name or to its ending after a ``_`` (``auc`` means ``test_auc`` or
    ``train_auc``, ``parity`` ``statistical_parity``), so a figure named without its part is found."""
    wanted = name.strip().lower()
    if not wanted:
        return []

    def likeness(candidate: str) -> float:
        parts = candidate.lower().split("_")
        endings = ["_".join(parts[i:]) for i in range(len(parts))]
        return max(difflib.SequenceMatcher(None, wanted, ending).ratio() for ending in endings)

    scored = [(likeness(c), -k, c) for k, c in enumerate(known)]
    return [c for score, _, c in sorted(scored, reverse=True) if score >= 0.7][:n]


def unknown_name(text: str, name: str, position: int, known: Sequence[str]) -> QueryError:
    """No member has figure ``name``: the closest figures first (``closest_figures``), then every one."""
    close = closest_figures(name, known)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return QueryError(f"no member has a figure {name!r}{hint} (figures: {', '.join(known)})", text, position)


@dataclass(frozen=True)
class Query:
    """A checked expression: its tree, and the features each ``uses(...)`` stands for."""

    text: str
    tree: Node
    features: dict[str, tuple[str, ...]]

    def figures(self) -> list[str]:
        """The figures the expression compares, in order (what a listing shows as columns)."""
        seen: dict[str, None] = {}
        for node in _nodes(self.tree):
            if isinstance(node, Compare):
                for side in (node.left, node.right):
                    if isinstance(side, Name):
                        seen[side.name] = None
        return list(seen)

    def matches(self, member: Member) -> bool:
        """Whether the expression is true of ``member`` (unknown is not true)."""
        return self._value(self.tree, member_figures(member), set(member.features)) is True

    def _value(self, node: Node, figures: Mapping[str, float | None], used: set[str]) -> bool | None:
        if isinstance(node, Compare):
            left, right = (figures.get(s.name) if isinstance(s, Name) else s for s in (node.left, node.right))
            return None if left is None or right is None else COMPARISONS[node.op](left, right)
        if isinstance(node, Uses):
            return bool(used & set(self.features[node.name]))
        left = self._value(node.left, figures, used)
        if node.op == "not":
            return None if left is None else not left
        assert node.right is not None
        if node.op == "and":
            if left is False:
                return False
            right = self._value(node.right, figures, used)
            return False if right is False else None if None in (left, right) else True
        if left is True:
            return True
        right = self._value(node.right, figures, used)
        return True if right is True else None if None in (left, right) else False


def compile_query(text: str, known: Sequence[str], resolve: Callable[[str], tuple[str, ...] | str]) -> Query:
    """Read and check ``text``: every figure one of ``known``, every ``uses`` name what
    ``resolve`` turns into features (or a message saying why not). ``QueryError`` otherwise."""
    tree = parse(text)
    features: dict[str, tuple[str, ...]] = {}
    for node in _nodes(tree):
        if isinstance(node, Compare):
            for side in (node.left, node.right):
                if isinstance(side, Name) and side.name not in known:
                    raise unknown_name(text, side.name, side.position, known)
        elif isinstance(node, Uses) and node.name not in features:
            found = resolve(node.name)
            if isinstance(found, str):
                raise QueryError(found, text, node.position)
            features[node.name] = found
    return Query(text, tree, features)


def sort_key(spec: str, known: Sequence[str], descending: bool = False) -> tuple[str, bool]:
    """``--sort NAME`` (``-NAME`` or ``descending``: largest first) checked against ``known``:
    the figure's name and whether the order is descending."""
    name = spec.strip()
    if name.startswith("-"):
        name, descending = name[1:].strip(), True
    if name not in known:
        raise unknown_name(spec, name, spec.find(name) if name else 0, known)
    return name, descending


def sorted_members(members: Sequence[Member], name: str, descending: bool) -> list[Member]:
    """``members`` by figure ``name`` (ties and members without it by rank; those last)."""

    def key(member: Member) -> tuple[bool, float, int]:
        value = member_figures(member).get(name)
        return (value is None, 0.0 if value is None else (-value if descending else value), member.rank)

    return sorted(members, key=key)


def shown_figures(
    known: Sequence[str], chosen: Sequence[str] = (), fairness: Mapping[str, Any] | None = None
) -> list[str]:
    """The figures a listing shows as columns: accuracy and AUC (R² for regression) on the test
    rows (the training rows without a test split), the constrained fairness metric (else the first
    audited one) on the training rows, then those ``chosen`` (by ``--where`` and ``--sort``)."""
    out = []
    for base in ("accuracy", "auc", "r2"):
        name = f"test_{base}" if f"test_{base}" in known else f"train_{base}"
        if name in known:
            out.append(name)
    if fairness:
        metric = (fairness.get("constraint") or {}).get("metric") or next(iter(fairness.get("metrics") or []), None)
        if isinstance(metric, str) and metric in known:
            out.append(metric)
    return [*out, *(n for n in dict.fromkeys(chosen) if n not in out and n not in ("rank", "objective"))]
