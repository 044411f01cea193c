"""What a name in a choice of a stored set's members stands for: ``--uses NAME``, ``--avoids
NAME`` and ``uses(NAME)`` in a ``--where`` expression (``glasswork.rashomon.query``), read the same
way by the command line and the terminal UI. A name may be a feature of the run's data, a raw
column of its table (every feature made from it), or a rule's text as a member prints it."""

from __future__ import annotations

import difflib
from typing import Any


def feature_lookup(
    store: Any, run_id: str, details: dict[str, Any], name: str, point: int | None = None
) -> tuple[str, ...] | str:
    """The features a name stands for (``--uses``, ``--avoids``, ``uses(...)`` in ``--where``):
    itself when it is a feature of the run's data; every feature made from it when it is a raw
    column (``sex`` for ``sex:Male`` and ``sex:Male,juvenile-crimes:>0``, from the run's recorded
    inputs), so "avoids sex" means no rule looks at that column; the features a rule reads when it
    is the text of a rule a member prints (``credit_score>645``, a negation of
    ``credit_score<=645``). Anything else: the message saying so, with the closest names."""
    inputs = details.get("inputs") or {}
    entries = [f for f in inputs.get("features") or [] if isinstance(f, dict) and isinstance(f.get("name"), str)]
    known = [f["name"] for f in entries] or store.rashomon_features(run_id)
    if name in known:
        return (name,)
    from_column = tuple(
        f["name"]
        for f in entries
        if f.get("column") == name
        or any(isinstance(c, dict) and c.get("column") == name for c in f.get("all") or f.get("any") or [])
    )
    if from_column:
        return from_column
    from glasswork.display.console import rule_features

    feature_names = [f["name"] for f in entries]
    for member in store.rashomon_members(run_id, point=point):  # a rule as a member prints it
        read = rule_features(member.model, feature_names).get(name)
        if read:
            return read
    columns = sorted(
        {f["column"] for f in entries if isinstance(f.get("column"), str)}
        | {
            c["column"]
            for f in entries
            for c in f.get("all") or f.get("any") or []
            if isinstance(c, dict) and isinstance(c.get("column"), str)
        }
    )
    names = [k for k in [*known, *columns] if isinstance(k, str)]
    # a word a long name starts with ("age" for "age in years") is far from it as a ratio: name those first
    starting = [k for k in columns if k.casefold().startswith(name.casefold())] if name.strip() else []
    close = [*starting, *(c for c in difflib.get_close_matches(name, names, n=3, cutoff=0.6) if c not in starting)][:3]
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return (
        f"run {run_id[:12]} has no feature or column {name!r} (feature names are exact, as "
        f"'glasswork rashomon RUN' lists them){hint}"
    )
