"""What a raw value holds: the one missing-value rule and the one way text is read as a number.

The data layer (reading a table for training) and every export format and reader (the Python
module, the SQL, ``load_model``) judge a cell by these, so a cell that is missing in training is
missing in every export, and the other way round.
"""

from __future__ import annotations

import math
import re
from typing import Any

# What a text is stripped of before it is judged blank, ``nan`` or a number: space, CR, tab, LF
# (the set every SQL engine can test for; the SQL export writes them raw in one literal, in this
# order, so no CR LF pair a line-ending conversion could fold).
WHITESPACE = " \r\t\n"
NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)(e[+-]?[0-9]+)?")  # a decimal number, lowercased


def is_missing(value: Any) -> bool:
    """One raw value has no value: None, ``pd.NA`` / ``pd.NaT``, a float NaN of any width, or a
    text that is empty, blank or ``nan`` (any case) once stripped of ``WHITESPACE``."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    if isinstance(value, str):
        return value.strip(WHITESPACE).lower() in ("", "nan")
    if isinstance(value, bytes):
        return value.strip(WHITESPACE.encode()).lower() in (b"", b"nan")
    try:
        return bool(value != value)  # a NaN of any width (float, numpy float16/32/64, Decimal)
    except (TypeError, ValueError):
        return False


def number_of(value: Any) -> float | None:
    """A raw value as the number a model reads, or ``None`` when it holds none: a bool is 1 / 0,
    a finite number is itself; a text stripped of whitespace is ``true`` / ``false`` (any case)
    or a decimal number (``NUMBER``); anything else (missing, other text, infinity) is no number."""
    if is_missing(value) or isinstance(value, (bytes, bytearray)):
        return None
    if isinstance(value, str):
        text = value.strip(WHITESPACE).lower()
        if text in ("true", "false"):
            return 1.0 if text == "true" else 0.0
        return float(text) if NUMBER.fullmatch(text) else None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None
