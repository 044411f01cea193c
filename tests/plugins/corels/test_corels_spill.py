"""The external-memory queue (``search.spill``): spilled at a tiny budget, a search certifies the
optimum of brute force and of the in-RAM search, a stopped one still bounds the optimum with its
buckets on disk, and a spill that cannot write stops the run with a message, never a certificate.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from corels_reference import COMPAS, SHARED, brute_force, random_instance
from glasswork.cython_ext import bitset
from glasswork.cython_ext import corels as ccorels
from glasswork.plugins.corels.search import engine
from glasswork.plugins.corels.search.engine import spill_budget
from glasswork.plugins.corels.spec import CorelsSearch
from grids import covering_grid
from test_corels_threads import _medium, _units


def _run_in_slices(search, step: int = 40) -> int:
    """To the end in node-limited slices, so a threaded search also meets the spill check (it is
    made between slices) many times."""
    stop = np.zeros(1, np.uint8)
    budget = 0
    while True:
        budget += step
        code = search.run(10.0, stop, budget)
        if code not in (ccorels.NODE_LIMIT, ccorels.SLICE):  # a slice ends when a bucket comes first
            return int(code)


@pytest.mark.parametrize(
    "policy, smap, threads",
    covering_grid([engine.POLICIES, engine.SYMMETRY_MAPS, (1, 2)], edges=[("lower_bound", "prefix", 2)]),
)
def test_spilled_search_certifies_the_brute_force_optimum(tmp_path, policy: str, smap: str, threads: int) -> None:
    rng = np.random.default_rng(2027)
    spilled = 0
    for _ in range(8):
        X, y = random_instance(rng, max_m=6)
        lam = float(rng.choice([0.0, 0.005, 0.02]))
        want, _ = brute_force(X, y, lam)
        s = engine.make_search(_units(X, y), lam, policy=policy, symmetry_map=smap, threads=threads)
        s.set_spill(str(tmp_path), 1, min_entries=2)
        assert _run_in_slices(s, step=5) == ccorels.DONE
        assert s.objective == pytest.approx(want, abs=1e-12)
        assert s.lower_bound() == pytest.approx(s.objective, abs=1e-12)
        assert s.queue_size == 0 and s.spilled_size == 0 and s.trie_size == 0
        spilled += s.counters()["spilled"]
    assert spilled > 0
    assert os.listdir(tmp_path) == []  # bucket files are unlinked as they are opened


@pytest.mark.parametrize(
    "policy, smap, threads",
    covering_grid([engine.POLICIES, engine.SYMMETRY_MAPS, (1, 2)], edges=[("lower_bound", "prefix", 2)]),
)
def test_spilled_search_matches_the_in_ram_search(tmp_path, policy: str, smap: str, threads: int) -> None:
    """Thousands of expansions, hundreds of spills and reloads, the map frozen or not."""
    X, y = _medium(3)
    units = _units(X, y)
    ram = engine.make_search(units, 0.003, policy=policy, symmetry_map=smap)
    assert engine.run_to_end(ram) == ccorels.DONE
    for map_budget in (0, 1):
        s = engine.make_search(units, 0.003, policy=policy, symmetry_map=smap, threads=threads)
        s.set_spill(str(tmp_path), 1, min_entries=8, map_budget=map_budget)
        assert _run_in_slices(s) == ccorels.DONE
        c = s.counters()
        assert c["spills"] > 0 and c["reloads"] > 0
        assert s.objective == pytest.approx(ram.objective, abs=1e-12)
        assert s.lower_bound() == pytest.approx(s.objective, abs=1e-12)
        assert s.evaluate(s.best_prefix)["objective"] == pytest.approx(s.objective, abs=1e-12)
        assert s.trie_size == 0


# every policy and every map by default (without a map, objective is the cheap order: lower_bound
# and bfs take minutes there), every pair under -m slow
@pytest.mark.parametrize(
    "policy, smap",
    covering_grid(
        [["lower_bound", "objective", "bfs"], engine.SYMMETRY_MAPS],
        edges=[("objective", "none"), ("lower_bound", "prefix"), ("bfs", "captured")],
        strength=1,
    ),
)
def test_spill_keeps_the_search_order(tmp_path, policy: str, smap: str) -> None:
    """A prefix back from disk is popped exactly when it would have been, and the symmetry map
    treats it as the node it had in RAM (it deletes it when a better member of its class came
    while it was on disk, and names the rebuilt node after): the same evaluations as in RAM."""
    X, y = _medium(4)
    units = _units(X, y)
    ram = engine.make_search(units, 0.003, policy=policy, symmetry_map=smap)
    engine.run_to_end(ram)
    s = engine.make_search(units, 0.003, policy=policy, symmetry_map=smap)
    s.set_spill(str(tmp_path), 1, min_entries=64)
    assert _run_in_slices(s) == ccorels.DONE
    assert s.counters()["spills"] > 0 and s.counters()["reloads"] > 0
    assert s.n_evaluated == ram.n_evaluated and s.objective == ram.objective
    assert s.counters()["map_replaced"] == ram.counters()["map_replaced"]
    assert s.trie_size == 0


@pytest.mark.parametrize("policy", ["bfs", "dfs", "objective", "lower_bound"])
def test_stopped_search_bound_counts_the_spilled_buckets(tmp_path, policy: str) -> None:
    """Stopped at many node limits while prefixes sit on disk, the bound never passes the optimum;
    under a policy whose key is not the bound, the disk holds the smallest bound at times, and the
    bound is then below what the RAM queue alone gives."""
    X, y = _medium(5)
    units = _units(X, y)
    ram = engine.make_search(units, 0.003)
    engine.run_to_end(ram)
    optimum = ram.objective
    s = engine.make_search(units, 0.003, policy=policy)
    s.set_spill(str(tmp_path), 1, min_entries=32)
    stop = np.zeros(1, np.uint8)
    budget, with_disk, disk_lower = 0, 0, 0
    while True:
        budget += 97
        code = s.run(1.0, stop, budget)
        assert s.lower_bound() <= optimum + 1e-12
        if s.spilled_size > 0:
            with_disk += 1
            ram_only = s.scan_queue()[0]
            assert s.lower_bound() <= ram_only
            disk_lower += s.lower_bound() < min(ram_only, s.objective) - 1e-12
        if code not in (ccorels.NODE_LIMIT, ccorels.SLICE):
            break
    assert code == ccorels.DONE and s.objective == pytest.approx(optimum, abs=1e-12)
    assert with_disk > 0
    if policy != "lower_bound":
        assert disk_lower > 0


@pytest.mark.parametrize("smap", ["prefix", "captured"])
def test_capped_map_stays_within_its_budget(tmp_path, smap: str) -> None:
    """The map under a budget never passes it (a doubling of its slots or a new arena page that
    would is refused, the child queued unchecked), and the search certifies the same optimum."""
    X, y = _medium(4, 600, 18)
    units = _units(X, y)
    ram = engine.make_search(units, 0.003, symmetry_map=smap)
    engine.run_to_end(ram)
    budget = 150_000
    s = engine.make_search(units, 0.003, symmetry_map=smap)
    s.set_spill(str(tmp_path), 1, min_entries=64, map_budget=budget)
    stop = np.zeros(1, np.uint8)
    evaluations = 0
    while True:
        evaluations += 200
        code = s.run(10.0, stop, evaluations)
        m = s.memory_breakdown()
        assert m["map_slots"] + m["map_records"] <= budget
        if code != ccorels.NODE_LIMIT:
            break
    assert code == ccorels.DONE and s.objective == ram.objective
    assert s.map_size < ram.map_size  # the budget did cap it


def test_progress_figures_count_the_prefixes_on_disk(tmp_path) -> None:
    """The length histogram counts every queued prefix, on disk or not, and Theorem 7's remaining
    space stays an upper bound: a spill moves prefixes, it never makes the figures smaller."""
    X, y = _medium(4)
    units = _units(X, y)
    s = engine.make_search(units, 0.003, symmetry_map="none")
    s.set_spill(str(tmp_path), 1, min_entries=10**9)  # spills only when asked
    stop = np.zeros(1, np.uint8)
    assert s.run(10.0, stop, 3000) == ccorels.NODE_LIMIT
    lengths, pairs = s.queue_summary()
    dropped = s.counters()["popped_pruned"]
    s.spill(s.queue_size // 3)
    assert s.spilled_size > 0 and s.counters()["popped_pruned"] == dropped
    lengths_after, pairs_after = s.queue_summary()
    assert lengths_after == lengths
    for length in lengths:  # each length keeps its count; its f only grows (the bucket's least error)
        f_before = sorted(f for (L, f), n in pairs.items() for _ in range(n) if L == length)
        f_after = sorted(f for (L, f), n in pairs_after.items() for _ in range(n) if L == length)
        assert len(f_after) == len(f_before) and all(a >= b for a, b in zip(f_after, f_before))
    M = X.shape[1]
    assert engine.log10_remaining(pairs_after, M) >= engine.log10_remaining(pairs, M) - 1e-9
    audit = s.scan_queue()
    assert (audit[1], audit[2]) == (lengths_after, pairs_after)
    assert _run_in_slices(s) == ccorels.DONE and s.queue_summary() == ({}, {})


def test_unwritable_spill_directory_stops_and_loses_nothing(tmp_path) -> None:
    X, y = _medium(6)
    units = _units(X, y)
    ram = engine.make_search(units, 0.003)
    engine.run_to_end(ram)
    s = engine.make_search(units, 0.003)
    missing = tmp_path / "no such dir"
    s.set_spill(str(missing), 1, min_entries=64)
    stop = np.zeros(1, np.uint8)
    code = ccorels.SLICE
    while code == ccorels.SLICE:
        code = s.run(10.0, stop, -1)
    assert code == ccorels.SPILL_ERROR
    assert "No such file or directory" in s.spill_error and str(missing) in s.spill_error
    assert not s.done and s.queue_size > 0
    assert s.lower_bound() <= ram.objective + 1e-12
    # the queue is whole: with a directory that works, the search goes on to the same optimum
    s.set_spill(str(tmp_path), 1, min_entries=64)
    assert _run_in_slices(s) == ccorels.DONE
    assert s.objective == pytest.approx(ram.objective, abs=1e-12)
    with pytest.raises(OSError, match="No such file"):
        t = engine.make_search(units, 0.003)
        t.set_spill(str(missing), 1)
        t.run(10.0, stop, 200)
        t.spill(1)


def test_spill_setting_and_budget() -> None:
    assert CorelsSearch().spill == "auto"
    assert CorelsSearch.model_validate({"spill": "2GB"}).spill == 2 * 10**9
    assert CorelsSearch.model_validate({"spill": "off"}).spill == "off"
    with pytest.raises(ValueError):
        CorelsSearch.model_validate({"spill": "sometimes"})
    assert spill_budget("off", 10**9, 0) == 0
    assert spill_budget(2 * 10**9, None, 10**8) == 2 * 10**9
    assert spill_budget("auto", 10 * 10**9, 10**9) == 5 * 10**9


def _compas_spec(tmp_path: Path, lam: float, spill: str) -> Path:
    if not COMPAS.with_suffix(".out").exists():
        pytest.skip(f"COMPAS CORELS files not found under {SHARED}")
    spec = tmp_path / "spill.yaml"
    spec.write_text(
        textwrap.dedent(
            f"""\
            name: corels-spill
            data:
              source: {COMPAS.with_suffix(".out")}
            solver: corels
            objective: {{regularization: {lam}}}
            search: {{threads: 1, spill: {spill}}}
            limits: {{time: 300}}
            """
        )
    )
    return spec


def _glasswork(args: list[str], env_extra: dict[str, str], preexec=None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **env_extra}
    return subprocess.run(
        [sys.executable, "-m", "glasswork", *args],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=preexec,
        timeout=600,
    )


@pytest.mark.slow
def test_cli_run_spilled_to_disk_certifies_the_compas_optimum(tmp_path) -> None:
    """The whole fold of COMPAS's .out file at lambda 0.005 (optimum 0.3461414 with spill: off),
    spilled once the search holds 1 MB: the map then stops taking classes almost at once, so the
    search evaluates more, but it certifies the same optimum. (At lambda 0.01 the search, with
    Omega on units, no longer holds 1 MB.)"""
    spec = _compas_spec(tmp_path, 0.005, "1MB")
    spill_root = tmp_path / "tmp"
    spill_root.mkdir()
    out = _glasswork(["run", str(spec), "--no-store", "--json", "-q"], {"TMPDIR": str(spill_root)})
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["status"] == "optimal" and doc["objective"] == pytest.approx(0.3461414, abs=1e-7)
    assert doc["stats"]["spills"] > 0 and doc["stats"]["reloads"] > 0
    assert list(spill_root.iterdir()) == []  # the spill directory is gone after the run


@pytest.mark.slow
def test_cli_full_disk_fails_the_run_with_a_message(tmp_path) -> None:
    """Files may not grow past 64 KiB (RLIMIT_FSIZE; Python ignores SIGXFSZ, so a write fails with
    EFBIG as on a full disk): exit 1, a message naming the spill directory, no certificate."""
    import resource

    spec = _compas_spec(tmp_path, 0.005, "1MB")
    spill_root = tmp_path / "tmp"
    spill_root.mkdir()

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, 1 << 16))

    out = _glasswork(["run", str(spec), "--no-store", "-q"], {"TMPDIR": str(spill_root)}, preexec=small_files)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "spill files failed" in out.stderr and str(spill_root) in out.stderr
    assert "optimal" not in out.stdout
    assert list(spill_root.iterdir()) == []


@pytest.mark.slow
def test_ctrl_c_with_prefixes_on_disk_leaves_no_file(tmp_path) -> None:
    """Interrupted while buckets are on disk (the progress says so): exit 130, a stopped status,
    and nothing left under $TMPDIR."""
    import signal
    import time

    spec = _compas_spec(tmp_path, 0.0025, "1MB")
    spill_root = tmp_path / "tmp"
    spill_root.mkdir()
    events = tmp_path / "events.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "glasswork", "run", str(spec), "--no-store", "-q", "--events", str(events)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(spill_root)},
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not (events.exists() and '"spilled"' in events.read_text()):
            time.sleep(0.2)
        assert '"spilled"' in events.read_text(), "no progress report with prefixes on disk"
        assert any(spill_root.iterdir())  # the spill directory exists while the search runs
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert list(spill_root.iterdir()) == []


@pytest.mark.parametrize("threads", [1, 2])
def test_take_and_seed_with_the_queue_on_disk_equal_brute_force(tmp_path, threads: int) -> None:
    """A driver's split while part of the queue is on disk: ``take`` brings the buckets back in
    the queue's order (every open prefix, bounds in order under the lower-bound policy), and the
    seeded subtrees, spilling themselves at a 1-byte budget, find the brute-force optimum."""
    rng = np.random.default_rng(91)
    spilled = 0
    for i in range(10):
        X, y = random_instance(rng, max_m=7)
        lam = (0.0, 0.005, 0.01)[i % 3]
        want, _ = brute_force(X, y, lam)
        units = _units(X, y)
        root = engine.make_search(units, lam, threads=threads)
        root.set_spill(str(tmp_path), 1, min_entries=2)
        stop = np.zeros(1, np.uint8)
        budget = 0
        while root.spilled_size == 0 and root.queue_size > 0:
            budget += 3
            if root.run(10.0, stop, budget) not in (ccorels.NODE_LIMIT, ccorels.SLICE):
                break
        spilled += root.spilled_size > 0
        taken = root.take(10**6)
        assert root.queue_size == 0 and root.spilled_size == 0
        bounds = [b for _, b in taken]
        assert bounds == sorted(bounds)
        best = root.objective
        for part in (taken[0::2], taken[1::2]):
            if not part:
                continue
            sub = engine.make_search(units, lam, threads=threads)
            sub.set_spill(str(tmp_path), 1, min_entries=2)
            sub.offer_incumbent(root.best_prefix)
            sub.seed([p for p, _ in part])
            assert _run_in_slices(sub, step=5) == ccorels.DONE
            assert sub.spilled_size == 0 and sub.trie_size == 0
            best = min(best, sub.objective)
        assert best == pytest.approx(want, abs=1e-12)
    assert spilled > 0


@pytest.mark.parametrize(
    "policy, threads",
    covering_grid([engine.POLICIES, (1, 2)], edges=[("lower_bound", 2), ("dfs", 1)], strength=1),
)
def test_full_prefix_map_leaves_the_orderings_to_the_reordering_check(tmp_path, policy: str, threads: int) -> None:
    """A prefix map whose budget is spent takes no new antecedent set, so the orderings of the
    sets it does not hold no longer meet there: the search then checks them itself (the
    reordering check, corels_reorder.pxd). The optimum is brute force's on random instances with
    ties, duplicated antecedents, inexact class weights and three classes, and the check prunes."""
    rng = np.random.default_rng(2031)
    pruned = 0
    for i in range(24):
        C = 3 if i % 4 == 3 else 2
        X, y = random_instance(rng, n_classes=C, max_m=7)
        weights = None if i % 3 else rng.uniform(0.3, 3.0, size=C)
        lam = float(rng.choice([0.0, 0.005, 0.02, 0.05]))
        want, _ = brute_force(X, y, lam, C, weights)
        units = engine.make_units(bitset.pack_columns(X), y, C, class_weights=weights)
        s = engine.make_search(units, lam, policy=policy, threads=threads)
        s.set_spill(str(tmp_path), 0, map_budget=1)  # no spill, a map that takes nothing
        assert engine.run_to_end(s) == ccorels.DONE
        assert s.objective == pytest.approx(want, abs=1e-12)
        assert s.evaluate(s.best_prefix)["objective"] == pytest.approx(want, abs=1e-12)
        pruned += s.counters()["pruned_reorder"]
    assert pruned > 0


def test_reordering_check_runs_only_once_the_map_is_full(tmp_path) -> None:
    """In RAM the map meets every ordering and the check stays off (it costs more than it saves
    there); once the map refuses a set, the check does the map's work on orderings: fewer
    evaluations than a search without a map, where before it did as many."""
    X, y = _medium(4)
    units = _units(X, y)
    ram = engine.make_search(units, 0.003)
    assert engine.run_to_end(ram) == ccorels.DONE
    assert ram.counters()["pruned_reorder"] == 0
    no_map = engine.make_search(units, 0.003, symmetry_map="none")
    assert engine.run_to_end(no_map) == ccorels.DONE
    full = engine.make_search(units, 0.003)
    full.set_spill(str(tmp_path), 0, map_budget=1)
    assert engine.run_to_end(full) == ccorels.DONE
    assert full.objective == ram.objective == no_map.objective
    assert full.counters()["pruned_reorder"] > 0
    assert full.n_evaluated < 0.8 * no_map.n_evaluated
