# Exported by glasswork 0.1.0 from run b52db1fe5b414d4b90d3e1e048e7e8f4 (corels-compas, solver corels).
# spec 55c9b7c7ad657171, data 23a14ef8bd9c7f9a
# Reads the columns the antecedents of data:corels/compas_train.out name: sex, juvenile-crimes, priors
"""A CORELS rule list: the first rule that holds decides."""

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
    return LABELS[rule_of(row)]


def predict_proba(row):
    """The class probabilities of ``row`` (in CLASSES order): the training class mix of its rule."""
    return list(PROBA[rule_of(row)])
