"""Data made safe for the text it goes into: generated Python and SQL, comments, Markdown, HTML,
the terminal and shell command lines.

Names, labels, category values, paths and rule texts come from specs and data files, so they
are data, never code: every exporter and every printer goes through these helpers (they are
the only place that quotes). Python gets literals from ``repr`` of plain values
(``python_literal``); SQL gets quoted identifiers (``sql_name``) and literals (``sql_literal``);
a comment gets one printable line (``printable``: control characters, line breaks and bidi
marks written as ``\\x..`` / ``\\u..`` escapes), so no value can end a comment and start code.
No SQL engine accepts NUL in a query, so a name or value holding one cannot be written as SQL:
``sql_name`` and ``sql_literal`` refuse it with an ``ExportError`` (the Python and json exports
carry it as ``'\\x00'``).
"""

from __future__ import annotations

import html
import json
import math
import re
import shlex
from collections.abc import Sequence
from typing import Any

import numpy as np


class ExportError(ValueError):
    """A model that cannot be exported as asked; the message says why and what to do."""


def _escape(char: str) -> str:
    if char in "\n\r\t":
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(value: Any, *, newlines: bool = False) -> str:
    """``value`` as text with every character that is not printable (control characters, ESC,
    line and paragraph separators, bidi and zero-width marks, NUL) written as an escape, so it
    is one line (``newlines=True`` keeps ``\\n`` and tabs) that shows what it holds and does nothing."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or (newlines and c in "\n\t") else _escape(c) for c in text)


# -- Python ------------------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (``repr`` of ``np.str_('a')`` is not ``'a'``)."""
    return value.item() if isinstance(value, np.generic) else value


def python_literal(value: Any) -> str:
    """A Python literal of ``value`` (text, number, bool, None, and lists, tuples and dicts of them):
    ``repr`` of plain values, which escapes quotes, backslashes, newlines and NUL; a number that
    is not finite has no literal and is refused."""
    value = plain(value)
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ExportError(f"{value!r} has no Python literal")
        return repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(python_literal(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items()) + "}"
    raise ExportError(f"a {type(value).__name__} has no Python literal")


def python_comment(text: Any) -> str:
    """``# text`` on one printable line."""
    return f"# {printable(text)}"


# -- SQL ---------------------------------------------------------------------------------------------


def _no_nul(text: str, what: str) -> str:
    if "\x00" in text:
        raise ExportError(
            f"the {what} {printable(text)!r} holds a NUL character, which no SQL engine accepts in a "
            f"query; rename it (or export as python or json)"
        )
    return text


def sql_name(name: Any) -> str:
    """An ANSI quoted identifier (``"`` doubled); a name holding NUL is refused."""
    return '"' + _no_nul(str(name), "column or table name").replace('"', '""') + '"'


def sql_literal(value: Any) -> str:
    """An ANSI literal (``'`` doubled); a float is written so DuckDB, SQLite and PostgreSQL read back
    the same double; a text holding NUL, or a number that is not finite, is refused."""
    value = plain(value)
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ExportError(f"{value!r} has no SQL literal")
        text = repr(value)
        return text if "e" in text else f"{text}e0"  # exponent form: DOUBLE, never DECIMAL
    return "'" + _no_nul(str(value), "value").replace("'", "''") + "'"


def sql_comment(text: Any) -> str:
    """``-- text`` on one printable line."""
    return f"-- {printable(text)}"


# -- Markdown, HTML, the terminal ----------------------------------------------------------------------

_MARKDOWN_ACTIVE = re.compile(r"([\\`*_\[\]|~])")  # active inside a table cell (never at a line's start)


def markdown_text(value: Any) -> str:
    """``value`` as literal Markdown text: one printable line, HTML escaped (``<script>`` shows as
    text) and every Markdown-active character backslash-escaped (no emphasis, link, code or cell
    break comes from data)."""
    return _MARKDOWN_ACTIVE.sub(r"\\\1", html.escape(printable(value), quote=False))


def html_text(value: Any) -> str:
    """``value`` as HTML text (``<``, ``>``, ``&`` and quotes escaped; control characters as escapes)."""
    return html.escape(printable(value, newlines=True), quote=True)


def script_json(value: Any) -> str:
    """``value`` as JSON to embed in an HTML ``<script type="application/json">`` block: ``<``,
    ``>``, ``&`` and every character outside ASCII written as ``\\uXXXX`` escapes, so no text in the
    data (``</script><script>``, ``<!--``) can close the block or open markup; non-finite numbers
    refused (``ValueError``: JSON has none)."""
    text = json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def terminal_text(value: Any, *, newlines: bool = False) -> str:
    """``value`` for the terminal: no control character (ESC, carriage return, bidi mark) reaches it.
    Print it as a ``rich.text.Text`` (or with ``markup=False``) so ``[red]`` in data prints literally."""
    return printable(value, newlines=newlines)


def shell_command(argv: Sequence[Any]) -> str:
    """``argv`` as one POSIX shell command line, every word quoted (``shlex.quote``): a path with
    spaces, quotes, ``$(...)`` or ``;`` reaches the program as the one argument it was. For tools
    that take a command as a string and run it through ``sh`` (``textual-serve``)."""
    words = [str(word) for word in argv]
    if any("\x00" in word for word in words):
        raise ValueError("a command's argument cannot hold a NUL character")
    return shlex.join(words)


__all__ = [
    "ExportError",
    "html_text",
    "markdown_text",
    "plain",
    "printable",
    "python_comment",
    "python_literal",
    "script_json",
    "shell_command",
    "sql_comment",
    "sql_literal",
    "sql_name",
    "terminal_text",
]
