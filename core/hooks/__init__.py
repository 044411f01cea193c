"""The plugin contract's machinery: ``specs`` (every hook a plugin can implement, and
``hookimpl``), ``registry`` (finds the plugins, loads each on its own, checks what each returns
and reports what failed) and ``extras`` (which optional backends are installed, and the one
message when a feature needs a missing one).

Nothing is imported here; each name comes from the module that defines it.
"""
