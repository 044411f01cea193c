"""Group fairness, one concept in two modules: ``figures`` (the six metrics of a binary
classifier's predictions for a protected group against the rest, and ``within``, the one test a
fairness constraint's model meets) and ``audit`` (a run's ``fairness:`` section: its groups found
in the audit-only columns, checked before the search, and the figures of the model on the
training and test rows, for any solver).

Nothing is imported here; each name comes from the module that defines it.
"""
