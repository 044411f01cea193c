"""What solvers, the run path, the run store and the hooks agree on, below everything that uses
it: ``result`` (the glass-box ``Model``, its ``Certificate`` and ``Status``, the ``Result`` a
solver returns), ``record`` (the run record: ``RunInfo``, ``RunOutcome`` and the records every
producer and consumer of runs exchanges), ``events`` (what a solver emits while it searches, and
the sinks that receive it) and ``solver`` (the ``Solver`` a plugin implements and the
``SolveContext`` the runner hands it).

Nothing is imported here; each name comes from the module that defines it (``glasswork`` itself
re-exports the public ones).
"""
