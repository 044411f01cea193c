# Exported by glasswork 0.1.0 from run fdde22550b5b41b9b8e1de1f5d7ac142 (corels-compas, solver corels).
# spec 55c9b7c7ad657171, data 23a14ef8bd9c7f9a
# Trained on every row of its data (no data.where filter).
# Reads the columns the antecedents of data:corels/compas_train.out name: sex, juvenile-crimes, priors
"""A CORELS rule list: the first rule that holds decides."""

READS = ['priors', 'sex', 'juvenile-crimes']  # the raw columns the model reads


def missing(row):
    """The columns of READS that ``row`` has no value in: None, NaN, an empty text or no key.
    The model was trained on complete rows, so such a row gets no prediction (None), as the
    SQL export gives NULL."""
    return [c for c in READS if _absent(_value(row, c))]


def _value(row, column):
    try:
        return row[column]
    except (KeyError, IndexError):
        return None


def _absent(value):
    return value is None or (isinstance(value, float) and value != value) or (
        isinstance(value, str) and not value.strip())


CLASSES = ['No', 'Yes']
LABELS = ['Yes', 'Yes', 'No']
PROBA = [[0.28607594936708863, 0.7139240506329114], [0.40152477763659467, 0.5984752223634053], [0.6606060606060606, 0.3393939393939394]]


def rule_of(row):
    """The index of the rule that decides ``row`` (len(LABELS) - 1: the default)."""
    if (row['sex'] == 'Male' and row['juvenile-crimes'] == '>0'):
        return 0
    if (row['priors'] == '>3'):
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
