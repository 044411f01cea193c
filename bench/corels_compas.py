"""Certify CORELS on the COMPAS fold of the reference tool at lambda = 0.015, 0.01 and 0.005.

Each lambda runs in a fresh process so its peak memory is its own. Printed per lambda: wall time
(reading the .out/.label/.minor files + preparing + certifying, i.e. what the C++ tool's wall time
covers apart from process start), the search's CPU time (a fairer figure on a loaded machine),
the whole process's wall time including interpreter start and
imports, peak resident memory of the process, the resident memory before the search started (the
interpreter, numpy, pydantic and the data), the search containers' own bytes, prefixes evaluated
and the time to the optimum.

    python bench/corels_compas.py [--lambdas 0.015,0.01,0.005] [--policy lower_bound] [--map prefix]

Reference C++ CORELS on the same machine class (PEER-FIGURES.md, lower bound policy, prefix map):
0.015: 0.68 s, 5.4 MB; 0.01: 18.9 s, 49 MB; 0.005: 256 s, 606 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("GLASSWORK_DATA", REPO.parent / "shared" / "datasets")) / "corels"
PEER = {0.015: (0.68, 5.4), 0.01: (18.9, 49.0), 0.005: (256.0, 606.0)}


def child(lam: float, policy: str, smap: str) -> None:
    """One certification, measured from inside the process; prints one JSON line."""
    import resource

    t0 = time.perf_counter()
    from glasswork.data.corels_format import read_corels
    from glasswork.plugins.corels import engine

    t_import = time.perf_counter() - t0
    base = str(DATA / "compas_train")
    t1 = time.perf_counter()
    data = read_corels(base + ".out", base + ".label", base + ".minor")
    t_read = time.perf_counter() - t1
    t2 = time.perf_counter()
    units = engine.prepare(data.antecedents.bits, data.y, 2)
    search = engine.make_search(units, lam, policy=policy, symmetry_map=smap)
    t_prep = time.perf_counter() - t2
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t3 = time.perf_counter()
    c3 = time.process_time()
    code = engine.run_to_end(search, slice_seconds=0.005)
    t_search = time.perf_counter() - t3
    cpu_search = time.process_time() - c3
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    c = search.counters()
    print(json.dumps({
        "lambda": lam, "certified": code == 0, "objective": search.objective,
        "rules": [data.antecedents.names[i] for i in search.best_prefix],
        "import_s": t_import, "read_s": t_read, "prepare_s": t_prep, "search_s": t_search,
        "wall_s": t_read + t_prep + t_search, "search_cpu_s": cpu_search, "time_to_optimum_s": search.time_to_best,
        "peak_rss": peak, "rss_before_search": rss_before, "search_bytes": search.memory_bytes(),
        "evaluated": c["evaluated"], "inserted": c["inserted"], "max_queue": c["max_queue"],
        "max_trie": c["max_trie"], "map": c["map"], "max_depth": c["max_depth_evaluated"],
        "units": units.n_units, "antecedents": len(data.antecedents.names),
    }))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lambdas", default="0.015,0.01,0.005")
    ap.add_argument("--policy", default="lower_bound")
    ap.add_argument("--map", default="prefix")
    ap.add_argument("--child", type=float, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child, args.policy, args.map)
        return
    if not (DATA / "compas_train.out").exists():
        sys.exit(f"COMPAS files not found under {DATA}; set GLASSWORK_DATA")
    print(f"CORELS on {DATA / 'compas_train'} (policy {args.policy}, map {args.map})")
    header = (f"{'lambda':>7} {'cert':>5} {'objective':>10} {'wall s':>8} {'cpu s':>7} {'proc s':>7} "
              f"{'peak MB':>8} {'base MB':>8} {'search MB':>9} {'evaluated':>12} "
              f"{'t_opt s':>8} {'C++ s':>7} {'C++ MB':>7}")
    print(header)
    rows = []
    for lam in [float(x) for x in args.lambdas.split(",")]:
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, __file__, "--child", str(lam), "--policy", args.policy,
                              "--map", args.map], capture_output=True, text=True, check=True)
        proc = time.perf_counter() - t0
        r = json.loads(out.stdout.strip().splitlines()[-1])
        r["process_s"] = proc
        rows.append(r)
        peer_s, peer_mb = PEER.get(lam, (float("nan"), float("nan")))
        print(f"{lam:>7} {str(r['certified']):>5} {r['objective']:>10.5f} {r['wall_s']:>8.3f} "
              f"{r['search_cpu_s']:>7.2f} {proc:>7.2f} {r['peak_rss'] / 2**20:>8.1f} {r['rss_before_search'] / 2**20:>8.1f} "
              f"{r['search_bytes'] / 2**20:>9.1f} {r['evaluated']:>12,} "
              f"{r['time_to_optimum_s']:>8.3f} {peer_s:>7} {peer_mb:>7}")
    print()
    for r in rows:
        print(f"lambda={r['lambda']}: rules {r['rules']}; read {r['read_s']:.3f} s, prepare "
              f"{r['prepare_s']:.3f} s, search {r['search_s']:.3f} s; {r['units']} units for "
              f"{r['antecedents']} antecedents; inserted {r['inserted']:,}, max queue "
              f"{r['max_queue']:,}, max trie {r['max_trie']:,}, map {r['map']:,}, deepest "
              f"prefix evaluated {r['max_depth']}")


if __name__ == "__main__":
    main()
