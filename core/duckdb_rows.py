"""Reading a DuckDB result: the one rule every module that queries DuckDB keeps.

DuckDB 2 keeps a half-read result open and refuses the next statement on that connection, so
no module calls ``fetchone``: a statement's rows are read whole (``fetchall``) or in batches
that run to the end (``fetchmany`` until empty).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def first_row(con: Any, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
    """The first row of a query or None, the result read to its end (never ``fetchone``)."""
    rows = con.execute(sql, params).fetchall()
    return rows[0] if rows else None
