"""Does watching a big CORELS search slow it down? The same spec with and without the monitor.

Runs ``specs/corels_compas.yaml`` at a small λ twice, each in a fresh process: once as
``glasswork run --json`` does, once inside the live monitor (the real Textual app, headless,
driven by its test pilot at a real terminal size, redrawing as progress arrives). Printed for
each: status, objective, lower bound, gap, wall and CPU time, prefixes evaluated and the rate, and
for the monitor how many progress updates it drew and which panels it showed.

    python bench/corels_monitor.py [--lam 0.0025] [--time-limit 120] [--threads N]

The machine is shared: read the evaluation rates side by side, not the wall times alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "specs" / "corels_compas.yaml"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def headless(overrides: list[str]) -> dict[str, Any]:
    """``glasswork run --json`` (the reference rate), in a child process of this one."""
    cmd = [str(Path(sys.executable).parent / "glasswork"), "run", str(SPEC), "--json", "--no-store"]
    for item in overrides:
        cmd += ["--set", item]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if out.returncode not in (0, 1):
        raise SystemExit(f"glasswork run failed ({out.returncode}): {out.stderr[-2000:]}")
    doc = json.loads(out.stdout)
    stats = doc.get("stats", {})
    return {
        "mode": "run",
        "status": doc.get("status"),
        "objective": doc.get("objective"),
        "lower_bound": doc.get("lower_bound"),
        "gap": doc.get("gap"),
        "wall": wall,
        "cpu": cpu,
        "evaluations": stats.get("nodes"),
        "search_s": stats.get("elapsed"),
        "updates": None,
        "panels": None,
    }


def monitored(overrides: list[str]) -> dict[str, Any]:
    """The same spec run inside the live monitor, driven by the Textual pilot."""
    from glasswork.tui.app import GlassworkApp
    from glasswork.tui.sources import OwnedRun, load_spec_or_error

    launch = load_spec_or_error(str(SPEC), tuple(overrides), no_store=True)
    if isinstance(launch, tuple):
        raise SystemExit("\n".join(launch))
    app = GlassworkApp(source=OwnedRun(launch))
    seen: dict[str, Any] = {"updates": 0, "panels": set()}

    async def drive() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            screen = app.screen
            last = None
            while not screen.state.finished:
                await pilot.pause(0.25)
                if screen.state.nodes != last:
                    last = screen.state.nodes
                    seen["updates"] += 1
                seen["panels"].update(panel.title for panel in screen.state.panels)
            seen["result"] = screen.state.result or {}
            await pilot.pause(0.2)
            await pilot.press("q")

    t0, c0 = time.perf_counter(), _cpu()
    asyncio.run(drive())
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    result = seen.get("result") or {}
    stats = result.get("stats", {})
    return {
        "mode": "monitor",
        "status": result.get("status"),
        "objective": result.get("objective"),
        "lower_bound": result.get("lower_bound"),
        "gap": result.get("gap"),
        "wall": wall,
        "cpu": cpu,
        "evaluations": stats.get("nodes"),
        "search_s": stats.get("elapsed"),
        "updates": seen["updates"],
        "panels": sorted(seen["panels"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lam", type=float, default=0.0025)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--threads", type=int, default=None, help="search.threads (default: the spec's)")
    parser.add_argument("--child", choices=["run", "monitor"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    overrides = [f"objective.regularization={args.lam}", f"limits.time={args.time_limit}"]
    if args.threads is not None:
        overrides.append(f"search.threads={args.threads}")
    if args.child:
        os.environ.setdefault("GLASSWORK_DATA", str(REPO.parent / "shared" / "datasets"))
        row = headless(overrides) if args.child == "run" else monitored(overrides)
        print("RESULT " + json.dumps(row))
        return
    rows = []
    for mode in ("run", "monitor"):
        cmd = [sys.executable, __file__, "--child", mode, "--lam", str(args.lam), "--time-limit", str(args.time_limit)]
        if args.threads is not None:
            cmd += ["--threads", str(args.threads)]
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        line = next((ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if line is None:
            print(f"{mode}: failed\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
            continue
        rows.append(json.loads(line[7:]))
    print(f"COMPAS, λ = {args.lam}, time limit {args.time_limit:g} s, load {os.getloadavg()[0]:.1f}")
    print(
        f"{'mode':8} {'status':10} {'objective':>10} {'bound':>10} {'gap':>8} {'wall s':>7} "
        f"{'CPU s':>7} {'search s':>8} {'evals':>12} {'evals/s':>10} updates  panels"
    )
    for r in rows:
        ev = r["evaluations"] or 0
        search = r["search_s"] or r["wall"]
        rate = ev / search if search else 0.0
        gap = f"{100 * r['gap']:.3f}%" if isinstance(r["gap"], (int, float)) else "-"
        print(
            f"{r['mode']:8} {str(r['status']):10} {r['objective'] or float('nan'):10.6f} "
            f"{r['lower_bound'] or float('nan'):10.6f} {gap:>8} {r['wall']:7.1f} {r['cpu']:7.1f} "
            f"{search:8.1f} {ev:12,d} {rate:10,.0f} {r['updates'] if r['updates'] is not None else '-':>7}  "
            f"{', '.join(r['panels']) if r['panels'] else '-'}"
        )
    if len(rows) == 2 and rows[0]["evaluations"] and rows[1]["evaluations"]:

        def rate(r: dict[str, Any]) -> float:
            return r["evaluations"] / (r["search_s"] or r["wall"])

        ratio = rate(rows[1]) / rate(rows[0])
        print(f"monitor / run evaluation rate: {ratio:.2f}")


if __name__ == "__main__":
    main()
