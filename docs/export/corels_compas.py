# Exported by glasswork 0.1.0 from run 2dcfd732f7b2401f9d956a3a6149b7a4 (corels-compas, solver corels).
# spec b34c74db3ddb17c1, data 23a14ef8bd9c7f9a
# Trained on every row of its data (no data.where filter).
# Reads the columns the antecedents of data:corels/compas_train.out name: sex, juvenile-crimes, priors
"""A CORELS rule list: the first rule that holds decides."""

import math
import re

READS = ['priors', 'sex', 'juvenile-crimes']  # the raw columns the model reads
NUMBERS = []  # those it reads as numbers
WHITESPACE = ' \r\t\n'
_NUMBER = re.compile('[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)(e[+-]?[0-9]+)?')


def missing(row):
    """The columns of READS that ``row`` has no usable value in: None, pd.NA, a NaN, an empty,
    blank or 'nan' text, no key, or (a column of NUMBERS) no number. The model was trained on
    complete rows, so such a row gets no prediction (None), as the SQL export gives NULL."""
    return [c for c in READS if _absent(_value(row, c)) or (c in NUMBERS and _number(_value(row, c)) is None)]


def _value(row, column):
    try:
        return row[column]
    except (KeyError, IndexError):
        return None


def _absent(value):
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    if isinstance(value, str):
        return value.strip(WHITESPACE).lower() in ("", "nan")
    try:
        return bool(value != value)  # a NaN of any width
    except (TypeError, ValueError):
        return False


def _number(value):
    """A bool as 1 / 0, a finite number, or a text that is true / false or a decimal number."""
    if isinstance(value, str):
        text = value.strip(WHITESPACE).lower()
        if text in ("true", "false"):
            return 1.0 if text == "true" else 0.0
        return float(text) if _NUMBER.fullmatch(text) else None
    if isinstance(value, (bytes, bytearray)) or _absent(value):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _num(row, column):
    return _number(row[column])


def _text(row, column):
    """A category is compared as the text it is written as ('003' is not 3)."""
    value = row[column]
    if isinstance(value, str):
        return value
    raise TypeError(f"column {column!r} holds {value!r} ({type(value).__name__}), not text: the model "
                    f"compares its categories as text; read the column as text")


CLASSES = ['No', 'Yes']
LABELS = ['Yes', 'Yes', 'No']
PROBA = [[0.28607594936708863, 0.7139240506329114], [0.40152477763659467, 0.5984752223634053], [0.6606060606060606, 0.3393939393939394]]


def rule_of(row):
    """The index of the rule that decides ``row`` (len(LABELS) - 1: the default)."""
    if (_text(row, 'sex') == 'Male' and _text(row, 'juvenile-crimes') == '>0'):
        return 0
    if (_text(row, 'priors') == '>3'):
        return 1
    return 2


def predict(row):
    """The predicted label of ``row``, a mapping of raw column names to values."""
    if missing(row):
        return None
    return LABELS[rule_of(row)]


def predict_proba(row):
    """The class probabilities of ``row`` (in CLASSES order): the training class mix of its rule."""
    if missing(row):
        return None
    return list(PROBA[rule_of(row)])
