"""The long torture run (issue 17): kill -9 at random points during runs and sweeps, concurrent
runs on one store, a held store, a damaged file, a full disk, misbehaving plugins; after every
case the store is recovered, checked and compared with the runs' own event files.

    python bench/torture.py [--kills 50] [--sweep-kills 6] [--concurrent 64] [--concurrent-kills 8]
                            [--concurrent-sweeps 2] [--readers 2] [--only-concurrent] [--seed 0] [--json]

Prints the figures docs/reliability.md reports: kills survived, cases tried, runs and events
checked, events and results lost (must be 0), problems found. Exit 1 if anything was lost.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "robustness")]

import harness  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=50, help="runs killed with SIGKILL")
    parser.add_argument("--sweep-kills", type=int, default=6, help="sweeps killed with SIGKILL")
    parser.add_argument("--concurrent", type=int, default=64, help="runs at once on one store")
    parser.add_argument("--concurrent-kills", type=int, default=8, help="of those, killed with SIGKILL")
    parser.add_argument("--concurrent-sweeps", type=int, default=2, help="sweeps (-j 2) on the store meanwhile")
    parser.add_argument("--readers", type=int, default=2, help="processes reading the store meanwhile")
    parser.add_argument("--only-concurrent", action="store_true", help="only the concurrent case")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="glasswork-torture-") as work:
        started = time.monotonic()
        load = os.getloadavg()
        only = args.only_concurrent
        tally = harness.torture(
            Path(work),
            run_kills=0 if only else args.kills,
            sweep_kills=0 if only else args.sweep_kills,
            concurrent=args.concurrent,
            seed=args.seed,
            extras=not only,
            concurrent_kills=args.concurrent_kills,
            concurrent_sweeps=args.concurrent_sweeps,
            readers=args.readers,
        )
        load = [round(max(a, b), 1) for a, b in zip(load, os.getloadavg())]
    tally.seconds = round(time.monotonic() - started, 1)
    if args.json:
        print(json.dumps({**tally.to_dict(), "load_average": load}, indent=2))
    else:
        print(f"cases tried      {tally.cases}")
        for case, count in tally.by_case.items():
            print(f"  {count:4d}  {case}")
        print(f"kills survived   {tally.kills}")
        print(f"runs checked     {tally.runs_checked}")
        print(f"events checked   {tally.events_checked}")
        print(f"events lost      {tally.events_lost}")
        print(f"results lost     {tally.results_lost}")
        print(f"refused          {tally.refused}")
        print(f"reads            {tally.reads}")
        print(f"load average     {load} (1, 5, 15 min; the larger of before and after)")
        print(f"problems         {len(tally.problems)}")
        for problem in tally.problems:
            print(f"  - {problem}")
        print(f"wall time        {tally.seconds} s")
    sys.exit(1 if tally.problems or tally.events_lost or tally.results_lost or tally.refused else 0)


if __name__ == "__main__":
    main()
