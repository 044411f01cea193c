"""Problem specs, one concept in three modules: ``models`` (the pydantic models every solver's
spec extends, and the common sections), ``document`` (a spec file read within bounds, with every
field's position, ``--set`` overrides and ``SpecError``) and ``load`` (a file validated against
the installed solvers' models, and its JSON Schema).

Nothing is imported here: ``models`` and ``document`` sit below the plugin registry, ``load``
above it, so a module takes each name from the module that defines it.
"""
