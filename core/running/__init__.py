"""One run, from a spec to a recorded result: ``launch`` (the one run path every caller shares),
``runner`` (its search step: the solver on a worker thread, its events pumped to the sinks, the
limits watched), ``metrics`` (the quality figures attached to every result), ``exits`` (what ended
a run, as the user is told it) and ``validation`` (every check a run makes before its search,
without the search).

Nothing is imported here; each name comes from the module that defines it.
"""
