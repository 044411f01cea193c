"""What a cluster task's reports cost once its listing has gone depth first
(plugins/corels/cluster/enumeration.py: ``KeptStream.fresh`` and ``streamed_bound`` every
``SYNC_SECONDS``).

Lists a synthetic set (300 rows, 20 random features, λ = 0.002, threshold 0.35: about 10^12
lists, so the listing never ends) in the task's slices with a 64-entry queue budget (depth first
at once) and ``--max-models`` kept, for ``--seconds``, timing each report. One JSON line: the
reports' share of the task's time and the time of one.

    python bench/corels_rashomon_task_reports.py --max-models 100000 --seconds 30
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def main() -> None:
    from glasswork.cython_ext import bitset
    from glasswork.cython_ext import corels_rashomon as cr
    from glasswork.plugins.corels.cluster.enumeration import SYNC_SECONDS, streamed_bound
    from glasswork.plugins.corels.rashomon.enumeration import KeptStream, make_enumerator
    from glasswork.plugins.corels.search import engine

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-models", type=int, default=100_000)
    ap.add_argument("--seconds", type=float, default=30.0)
    a = ap.parse_args()
    rng = np.random.default_rng(11)
    X = (rng.random((300, 20)) < 0.4).astype(np.uint8)
    score = X @ rng.normal(size=20) + rng.normal(scale=0.7, size=300)
    y = (score > np.median(score)).astype(np.int64)
    units = engine.make_units(bitset.pack_rows(np.ascontiguousarray(X.T)), y, 2)
    en = make_enumerator(units, 0.002, 0.35, floor=0.0, max_models=a.max_models, queue_budget=64)
    stream = KeptStream(en)
    stop = np.zeros(1, np.uint8)
    started = time.perf_counter()
    last = time.monotonic()
    reports: list[float] = []
    while time.perf_counter() - started < a.seconds:  # the task's loop (enumerate_subtree)
        if en.run(SYNC_SECONDS / 4, stop, -1) != cr.SLICE:
            break
        if time.monotonic() - last < SYNC_SECONDS:
            continue
        last = time.monotonic()
        begin = time.perf_counter()
        stream.fresh(whole=False)
        streamed_bound(en, stream)
        reports.append(time.perf_counter() - begin)
    total = time.perf_counter() - started
    out = {
        "max_models": a.max_models,
        "depth_first_from": int(en.switched_at),
        "heap_full": bool(en.kept_worst < np.inf),
        "emitted": int(en.n_emitted),
        "seconds": round(total, 2),
        "reports": len(reports),
        "seconds_in_reports": round(sum(reports), 3),
        "share": round(sum(reports) / total, 4),
        "median_report_ms": round(1000 * float(np.median(reports)), 3) if reports else None,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
