"""The CORELS bounds a spec may switch off (``ablation``), each declared once.

The spec's choices, the search's switches (``engine.make_search``) and the Rashomon enumerator's
(``rashomon.make_enumerator``) are all read from ``BOUNDS``: adding a bound is one line here (and
its code in the kernels). A bound that only compares a prefix with the incumbent has no
restatement against a Rashomon threshold (``enumerator`` is None) and does not apply to the set.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BoundSwitch:
    """One bound: its name, and where the kernels take and count it."""

    name: str  # the spec's ablation name, and the keyword of ``corels.Search`` that switches it
    counter: str  # the key of ``Search.counters()`` that counts its work
    enumerator: str | None = None  # the keyword of ``corels_rashomon.Enumerator`` for its
    # restatement against the threshold (None: it does not hold against a threshold)
    set_counter: str | None = None  # the key of ``Enumerator.counters()`` that counts its work


BOUNDS: tuple[BoundSwitch, ...] = (
    BoundSwitch("support", "pruned_support", "support", "pruned_support"),
    BoundSwitch("accurate_support", "pruned_accurate_support", "support", "pruned_support"),
    BoundSwitch("lookahead", "pruned_lookahead", "lookahead", "pruned_lookahead"),
    # the equivalent points raise the bound the lookahead test compares: its prunes are counted there
    BoundSwitch("equivalent_points", "pruned_lookahead", "equivalent_points", "pruned_lookahead"),
    BoundSwitch("length_bound", "pruned_length"),
    BoundSwitch("garbage_collection", "gc_runs"),
    BoundSwitch("similar_support", "pruned_similar_support", "similar_support", "pruned_similar"),  # Theorem 18
    # Theorem 15 within the child (corels_reorder.pxd): in a seeded search and once the prefix map is full; a
    # dominance among orderings, so it has no restatement against a threshold
    BoundSwitch("reorder", "pruned_reorder"),
    # the tail table (corels_tailtable.pxd): built once a search (or an enumeration) has run long enough to pay
    # for it; a lower bound on every tail, so against a threshold too (and in the set's count)
    BoundSwitch("tail_table", "pruned_tail_table", "tail_table", "pruned_tail_table"),
)

BOUND_NAMES: tuple[str, ...] = tuple(b.name for b in BOUNDS)

# what the enumerator keeps of a search ablation: the name -> its own switch
KEPT_BOUNDS: dict[str, str] = {b.name: b.enumerator for b in BOUNDS if b.enumerator is not None}
