"""The three phases on synthetic data: invariants of §6.1 item 4 and the constraints."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork.plugins.fasterrisk.engine import Constraints, Engine, Settings


@pytest.fixture(params=["paper", "reference"])
def preset(request):
    return request.param


def wide_data(seed=0, n=600, p=25):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, p)).astype(float)
    beta = np.zeros(p)
    beta[[1, 4, 9, 13, 20]] = [2.0, -1.5, 1.0, -0.8, 0.6]
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-(X @ beta - 0.5))), 1.0, -1.0)
    return X, y


def test_beam_search_support_size_and_box(preset):
    X, y = wide_data()
    for k in (1, 3, 5):
        eng = Engine(X, y, None, Settings.preset(preset, k=k))
        best, by_size = eng.beam_search()
        assert len(best.support) == k
        w, _ = eng.to_original(best)
        assert np.all(np.abs(w) <= 5 + 1e-9)
        losses = [by_size[t] for t in sorted(by_size)]
        assert all(a >= b - 1e-9 for a, b in zip(losses, losses[1:]))  # more features, lower loss


def test_beam_stops_at_p_when_k_exceeds_it():
    X, y = wide_data()
    X = X[:, [1, 4, 9]]
    best, _ = Engine(X, y, None, Settings.preset("paper", k=6)).beam_search()
    assert len(best.support) == 3


def test_beam_is_no_worse_than_greedy_here():
    X, y = wide_data(seed=1)
    beam, _ = Engine(X, y, None, Settings.preset("paper", k=4)).beam_search()
    greedy, _ = Engine(X, y, None, Settings.preset("paper", k=4, beam_width=1)).beam_search()
    assert beam.loss <= greedy.loss + 1e-6


def test_pool_members_are_within_the_gap_and_distinct(preset):
    X, y = wide_data()
    st = Settings.preset(preset, k=4)
    eng = Engine(X, y, None, st)
    best, _ = eng.beam_search()
    pool = eng.diverse_pool(best)
    assert pool[0].loss == pytest.approx(best.loss)
    assert len({m.support for m in pool}) == len(pool) > 1
    for m in pool:
        assert len(m.support) <= 4
        assert m.loss <= (1 + st.pool_gap) * best.loss + 1e-9
    assert [m.loss for m in pool] == sorted(m.loss for m in pool)
    if st.pool_size is not None:
        assert len(pool) <= st.pool_size


def test_integer_pool_invariants(preset):
    X, y = wide_data()
    eng = Engine(X, y, None, Settings.preset(preset, k=5))
    cards, stats = eng.run()
    assert cards and stats["integer_pool"] == len(cards)
    assert [c.loss for c in cards] == sorted(c.loss for c in cards)
    for c in cards:
        assert len(c.features) <= 5 and c.multiplier > 0
        assert np.all(np.abs(c.points) <= 5) and np.all(c.points != 0)
        assert float(c.intercept).is_integer()
        margin = y * (X[:, c.features] @ c.points + c.intercept) / c.multiplier
        assert c.loss == pytest.approx(float(np.logaddexp(0, -margin).sum()), rel=1e-9)
    # the planted features are found
    assert {1, 4, 9} <= set(cards[0].features.tolist())


def test_sample_weights_equal_duplicated_rows():
    X, y = wide_data(n=200)
    rng = np.random.default_rng(3)
    counts = rng.integers(1, 4, 200)
    a = Engine(X, y, counts.astype(float), Settings.preset("paper", k=3)).run()[0][0]
    b = Engine(np.repeat(X, counts, axis=0), np.repeat(y, counts), None, Settings.preset("paper", k=3)).run()[0][0]
    assert a.loss == pytest.approx(b.loss, rel=1e-9)
    assert a.features.tolist() == b.features.tolist() and a.points.tolist() == b.points.tolist()


def test_groups_include_exclude_and_monotone_bounds():
    X, y = wide_data()
    p = X.shape[1]
    cons = Constraints.box(p)
    cons.group_of[[1, 4, 9]] = 0  # at most one of the planted features
    cons.exclude = [13]
    cons.include = [0]
    cons.lower[20], cons.upper[20] = 0, 5  # monotone
    cons.lower[2], cons.upper[2] = -2, 2
    eng = Engine(X, y, None, Settings.preset("paper", k=4), cons)
    cards, _ = eng.run()
    for c in cards:
        feats = set(c.features.tolist())
        assert len(feats & {1, 4, 9}) <= 1
        assert 13 not in feats
        pts = dict(zip(c.features.tolist(), c.points.tolist()))
        assert pts.get(20, 0) >= 0 and abs(pts.get(2, 0)) <= 2
        assert 0 in feats  # the forced feature is on every card, never rounded to 0 points
    best, _ = eng.beam_search()
    assert 1 in best.support  # coordinate 1 is feature 0


def test_stop_flag_returns_a_card_quickly():
    X, y = wide_data()
    flag = np.ones(1, dtype=np.uint8)
    eng = Engine(X, y, None, Settings.preset("paper", k=5), stop_flag=flag)
    cards, stats = eng.run()
    assert len(cards) == 1 and stats["continuous_pool"] == 1


def test_progress_reports_every_phase():
    X, y = wide_data()
    seen = []
    Engine(X, y, None, Settings.preset("paper", k=3), progress=lambda **kw: seen.append(kw)).run()
    phases = {kw["phase"] for kw in seen}
    assert phases == {"beam", "pool", "multipliers"}
    beam = [kw for kw in seen if kw["phase"] == "beam"]
    assert sorted({kw["support_size"] for kw in beam}) == [1, 2, 3]
    assert set(beam[-1]["best_loss_by_size"]) == {0, 1, 2, 3}
    assert any(kw.get("parents_done") == kw.get("parents") for kw in beam)
    assert any("pool_size" in kw for kw in seen if kw["phase"] == "pool")
    assert any("rounded" in kw for kw in seen if kw["phase"] == "multipliers")


def test_labels_must_be_binary():
    X, y = wide_data(n=50)
    with pytest.raises(ValueError):
        Engine(X, y * 2, None, Settings())


def test_threads_do_not_change_the_result():
    X, y = wide_data(p=80)
    one = Engine(X, y, None, Settings.preset("paper", k=4, threads=1)).run()[0]
    two = Engine(X, y, None, Settings.preset("paper", k=4, threads=2)).run()[0]
    assert [(c.features.tolist(), c.points.tolist(), c.loss) for c in one] == [
        (c.features.tolist(), c.points.tolist(), c.loss) for c in two
    ]
