"""What people see of a run: ``console`` (the command line's output: numbers, gaps, the live
progress line and the printed result), ``views`` (a model as its plugin draws it, in rich text),
``panels`` (the monitor's charts a solver's counters feed, as plain descriptions with their data)
and ``report`` (the self-contained HTML model card, and the inline SVG charts plugins draw with).

Nothing is imported here; each name comes from the module that defines it. ``panels`` sits below
the plugin registry (which checks the panels a plugin returns), ``views`` above it.
"""
