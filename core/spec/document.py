"""A spec file as a document: read within bounds, with every field's line and column kept, edited
by ``--set`` overrides; and what is wrong with it, where (``SpecIssue``, ``SpecError``).

Nothing here knows the models or the solvers: ``glasswork.spec.load`` validates the document against
them and locates each problem through ``Positions``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A spec is data from anyone: bounded before it is parsed (size) and while it is unfolded (nodes,
# depth), so a hostile file (an alias bomb, a device, a huge document) is refused in well under a
# second instead of hanging a sweep or a service that validates uploads. docs/security.md.
MAX_SPEC_BYTES = 64 * 1024
MAX_SPEC_NODES = 100_000
MAX_SPEC_DEPTH = 64

TOP_LEVEL_KEYS = (
    "name",
    "data",
    "solver",
    "objective",
    "constraints",
    "search",
    "limits",
    "store",
    "sweep",
    "rashomon",
    "fairness",
)


# -- errors --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpecIssue:
    """One problem in a spec file, located as precisely as the file allows."""

    file: str
    line: int
    column: int
    path: str
    message: str

    def __str__(self) -> str:
        # line 0: not in a file but on the command line (``file`` names the argument)
        where = f"{self.file}:{self.line}:{self.column}" if self.line > 0 else self.file
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "column": self.column, "path": self.path, "message": self.message}


class SpecError(Exception):
    """A spec that cannot be used; carries every issue found, not just the first."""

    def __init__(self, issues: Sequence[SpecIssue]) -> None:
        self.issues = list(issues)
        super().__init__("\n".join(map(str, self.issues)))


# -- reading files with positions ----------------------------------------------------------------


class Positions:
    """Maps a field path to the (line, column) of its key and of its value, 1-based."""

    def __init__(self, root: Any) -> None:
        self.root = root

    def locate(self, loc: Sequence[int | str], *, key: bool = False) -> tuple[int, int]:
        node = self.root
        pos = _node_start(node) or (1, 1)
        for i, part in enumerate(loc):
            last = i == len(loc) - 1
            lc = getattr(node, "lc", None)
            if isinstance(node, dict) and part in node and lc is not None:
                try:
                    line, col = lc.key(part) if (key and last) else lc.value(part)
                    pos = (line + 1, col + 1)
                except (KeyError, TypeError):
                    pass
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                if lc is not None:
                    try:
                        line, col = lc.item(part)
                        pos = (line + 1, col + 1)
                    except (KeyError, TypeError):
                        pass
                node = node[part]
            else:
                break
        return pos


def _node_start(node: Any) -> tuple[int, int] | None:
    lc = getattr(node, "lc", None)
    if lc is None or lc.line is None:
        return None
    return lc.line + 1, lc.col + 1


class _TooBig(Exception):
    """The document unfolds (through aliases) into more nodes, or deeper, than a spec may."""


def _plain(node: Any, budget: list[int] | None = None, depth: int = 0) -> Any:
    """ruamel's commented containers and scalar subclasses as plain Python values.

    Aliases are unfolded here, so ``budget`` (nodes left) and ``depth`` bound the work: an alias
    bomb or a self-referencing alias raises ``_TooBig`` instead of eating time and memory.
    """
    budget = [MAX_SPEC_NODES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig(f"it unfolds into more than {MAX_SPEC_NODES:,} values (YAML aliases?)")
    if depth > MAX_SPEC_DEPTH:
        raise _TooBig(f"it nests deeper than {MAX_SPEC_DEPTH} levels")
    if isinstance(node, dict):
        return {
            (_plain(k, budget, depth + 1) if not isinstance(k, str) else str(k)): _plain(v, budget, depth + 1)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_plain(v, budget, depth + 1) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


def _flow_depth(text: str) -> int:
    """How deep ``[`` and ``{`` nest, counted over the raw text (quotes not understood, so it can
    only over-count, and a real spec never comes near the limit)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(0, depth - 1)
    return deepest


def _read_bounded(path: Path) -> str:
    """The file's text, refusing folders, devices and files over ``MAX_SPEC_BYTES`` unread."""
    import stat

    file = str(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise SpecError([SpecIssue(file, 1, 1, "", "file not found")]) from None
    except OSError as exc:
        raise SpecError([SpecIssue(file, 1, 1, "", f"cannot read the file: {exc}")]) from None
    if stat.S_ISDIR(info.st_mode):
        raise SpecError(
            [
                SpecIssue(
                    file,
                    1,
                    1,
                    "",
                    "this is a folder, not a spec file; name a .yaml or "
                    ".json file (glasswork validate DIR/*.yaml checks every spec in it)",
                )
            ]
        )
    if not stat.S_ISREG(info.st_mode):
        raise SpecError(
            [
                SpecIssue(
                    file, 1, 1, "", "not a regular file (a device, pipe or socket); a spec is a .yaml or .json file"
                )
            ]
        )
    if info.st_size > MAX_SPEC_BYTES:
        raise SpecError(
            [
                SpecIssue(
                    file,
                    1,
                    1,
                    "",
                    f"the file is {info.st_size:,} bytes; a spec may be at "
                    f"most {MAX_SPEC_BYTES:,} bytes (is this really a spec?)",
                )
            ]
        )
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise SpecError([SpecIssue(file, 1, 1, "", f"cannot read the file: {exc}")]) from None
    if len(data) > MAX_SPEC_BYTES:  # it grew since stat
        raise SpecError([SpecIssue(file, 1, 1, "", f"a spec may be at most {MAX_SPEC_BYTES:,} bytes")])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SpecError(
            [SpecIssue(file, line, 1, "", f"cannot read the file: not UTF-8 text ({exc.reason} at byte {exc.start})")]
        ) from None


def read_spec_document(path: Path) -> tuple[dict[str, Any], Positions]:
    """Parse a YAML or JSON spec file; syntax errors become a ``SpecError`` with a position."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    file = str(path)
    text = _read_bounded(path)
    if _flow_depth(text) > MAX_SPEC_DEPTH:  # the YAML parser takes seconds to fail on these
        raise SpecError([SpecIssue(file, 1, 1, "", f"refused: it nests deeper than {MAX_SPEC_DEPTH} levels")])

    if path.suffix.lower() == ".json":
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise SpecError([SpecIssue(file, exc.lineno, exc.colno, "", f"invalid JSON: {exc.msg}")]) from None
        except RecursionError:
            raise SpecError([SpecIssue(file, 1, 1, "", f"it nests deeper than {MAX_SPEC_DEPTH} levels")]) from None

    yaml = YAML(typ="rt")
    try:
        document = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        what = " ".join(p for p in (exc.context, exc.problem) if p)
        raise SpecError([SpecIssue(file, line, col, "", f"invalid YAML: {what}")]) from None
    except YAMLError as exc:
        raise SpecError([SpecIssue(file, 1, 1, "", f"invalid YAML: {exc}")]) from None
    except RecursionError:
        raise SpecError([SpecIssue(file, 1, 1, "", f"it nests deeper than {MAX_SPEC_DEPTH} levels")]) from None
    except Exception as exc:  # noqa: BLE001 - ruamel fails on some garbage with plain Python errors
        raise SpecError([SpecIssue(file, 1, 1, "", f"invalid YAML: {type(exc).__name__}: {exc}")]) from None

    if not isinstance(document, dict):
        kind = "an empty file" if document is None else f"a {type(document).__name__}"
        raise SpecError(
            [
                SpecIssue(
                    file,
                    1,
                    1,
                    "",
                    f"a spec must be a mapping with the keys {', '.join(TOP_LEVEL_KEYS)}; found {kind}",
                )
            ]
        )
    try:
        plain = _plain(document)
    except (_TooBig, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, _TooBig) else f"it nests deeper than {MAX_SPEC_DEPTH} levels"
        raise SpecError([SpecIssue(file, 1, 1, "", f"refused: {reason}; a spec is small data")]) from None
    return plain, Positions(document)


# -- editing ---------------------------------------------------------------------------------------


def set_path(document: dict[str, Any], path: str, value: Any) -> None:
    """Set ``a.b.c`` in a spec document, creating the sections on the way (``--set`` and sweeps)."""
    keys = path.split(".")
    node = document
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[keys[-1]] = value


def flatten(document: Any, prefix: str = "") -> dict[str, Any]:
    """A nested spec as ``{"objective.regularization": 0.01, ...}`` (for comparing specs)."""
    if isinstance(document, dict):
        out: dict[str, Any] = {}
        for key, inner in document.items():
            out.update(flatten(inner, f"{prefix}{key}."))
        return out
    return {prefix[:-1]: document}


def command_line(item: str) -> str:
    """How an issue names the ``--set`` argument it comes from (quoted, so it reads on one line)."""
    return f"--set {item!r}"


def on_command_line(issues: Sequence[SpecIssue], overrides: Sequence[str]) -> list[SpecIssue]:
    """Issues of a field a ``--set`` gave (the field or one inside it) located at that argument,
    not at the spec file's line that the value replaced; the last ``--set`` of a field wins."""
    out = []
    for found in issues:
        given = None
        for item in overrides:
            path = item.partition("=")[0].strip()
            if path and (found.path == path or found.path.startswith(path + ".")):
                given = item
        out.append(found if given is None else SpecIssue(command_line(given), 0, 0, found.path, found.message))
    return out


def apply_overrides(document: dict[str, Any], overrides: Sequence[str]) -> None:
    """``objective.regularization=0.01`` style edits (``--set``), values parsed as YAML scalars."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    yaml = YAML(typ="safe")
    for item in overrides:
        path, sep, raw = item.partition("=")
        if not sep or not path.strip():
            raise SpecError([SpecIssue(command_line(item), 0, 0, "", "expected PATH=VALUE")])
        try:
            value = yaml.load(raw) if raw.strip() else None
        except YAMLError as exc:
            problem = str(getattr(exc, "problem", None) or exc).splitlines()[0]
            name = path.strip()
            quoted = "'" + raw.replace("'", "''") + "'"
            shell = (name + "=" + quoted).replace("\\", "\\\\").replace('"', '\\"')
            raise SpecError(
                [
                    SpecIssue(
                        command_line(item),
                        0,
                        0,
                        name,
                        f"the value {raw!r} is not a YAML value ({problem}); to give it as text, "
                        f"quote it in YAML, so that the argument reads {name}={quoted} "
                        f'(in a shell: --set "{shell}")',
                    )
                ]
            ) from None
        set_path(document, path.strip(), value)
