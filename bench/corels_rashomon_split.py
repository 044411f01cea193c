"""What splitting the CORELS Rashomon enumeration costs (plugins/corels/cluster/enumeration.py).

Enumerates the set of ``compas_train`` (pre-mined, λ = 0.01) at ``--epsilon`` in this one
process, whole and split as the Dask driver splits it (first rules dealt round-robin into
``--subtrees``; ``--pieces`` splits the best first rule further, by its second), each subtree
with its own enumerator, one after another: the evaluations against the whole enumeration
(the split's duplicates), and the largest subtree's share (the balance). One JSON line per split.
The swapped two-rule prefixes of equal error are left out in one subtree and counted by their
mirror in the other, as the driver does (``--no-mirror``: expanded in both, as before).

    python bench/corels_rashomon_split.py --epsilon 0.01 --subtrees 1 2 4 --pieces 0 2
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("GLASSWORK_DATA", HERE.parent.parent / "shared" / "datasets")) / "corels"


def main() -> None:
    from glasswork import Problem
    from glasswork.data.corels_format import read_corels
    from glasswork.plugins.corels.cluster.enumeration import enumerate_split_here, mirror_pairs, split_roots
    from glasswork.plugins.corels.inputs import antecedents_for
    from glasswork.plugins.corels.search import engine
    from glasswork.plugins.corels.spec import CorelsConstraints

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lam", type=float, default=0.01)
    parser.add_argument("--epsilon", type=float, default=0.01)
    parser.add_argument("--subtrees", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--pieces", type=int, nargs="+", default=[0])
    parser.add_argument("--no-mirror", action="store_true", help="expand swapped two-rule prefixes in both subtrees")
    args = parser.parse_args()

    base = str(DATA / "compas_train")
    data = read_corels(base + ".out", base + ".label", base + ".minor")
    problem = Problem(
        name="compas",
        X=np.ascontiguousarray(data.antecedents.matrix()),
        y=data.y,
        feature_names=list(data.antecedents.names),
        task="binary",
        classes=np.array(["no", "yes"]),
        extras={"premined": True, "antecedents": data.antecedents},
    )
    _, bits, _ = antecedents_for(problem, CorelsConstraints(), args.lam)
    units = engine.make_units(bits, problem.y, 2)
    search = engine.make_search(units, args.lam)
    engine.run_to_end(search)
    optimum = float(search.objective)
    threshold = (1 + args.epsilon) * optimum
    options = {"policy": "lower_bound", "max_models": 1000}
    whole = None
    for n in args.subtrees:
        for pieces in args.pieces if n > 1 else [0]:
            trees = split_roots(units, args.lam, threshold, 255, n, pieces)
            pairs = 0 if args.no_mirror else mirror_pairs(units, trees)
            t0 = time.perf_counter()
            parts = enumerate_split_here(units, args.lam, threshold, optimum, options, trees)
            evaluations = [e for _, e, _ in parts]
            if whole is None and n == 1:
                whole = sum(evaluations)
            print(
                json.dumps(
                    {
                        "epsilon": args.epsilon,
                        "subtrees": len(trees),
                        "first_rules_dealt_into": n,
                        "best_root_pieces": pieces,
                        "mirrored_pairs": pairs,
                        "count": sum(c for c, _, _ in parts),
                        "evaluations": sum(evaluations),
                        "ratio": None if whole is None else round(sum(evaluations) / whole, 4),
                        "per_subtree": evaluations,
                        "largest_share": round(max(evaluations) / sum(evaluations), 3),
                        "seconds": [round(s, 2) for _, _, s in parts],
                        "wall": round(time.perf_counter() - t0, 1),
                        "load": os.getloadavg()[0],
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
