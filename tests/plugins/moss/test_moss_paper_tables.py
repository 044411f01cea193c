"""The comparison and reporting code against the paper's printed Tables 3-6 (spec §5.6, §7.5).

``paper_tables.csv`` holds Tables 3/4 (test R^2, SE) and 5/6 (stability, SE) for 30 data sets x 7
methods, copied programmatically from the spec's markdown. Every figure the spec recomputes from
those tables is checked here at the precision it is printed with. The SE helpers are also tested
on small hand-made inputs.
"""

from __future__ import annotations

import csv
import math
import re
import statistics
from pathlib import Path

import pytest
from paper_protocol import (
    STABILITY_SE_DEFINITION,
    CrossValidation,
    MeanSE,
    average_ranks,
    combined_ranks,
    empirical_stability,
    mean_median,
    method_means,
    pairwise_similarities,
    per_dataset_ranks,
    rank,
    relative_difference,
    relative_differences,
    stability_se,
    standard_error,
    within_one_se,
)

TABLES = Path(__file__).with_name("paper_tables.csv")
SPEC = Path("/work/shared/docs/algorithms/moss.md")  # the source of the CSV, when this machine has it
METHODS = ["MOSS-eps-H", "MOSS-eps-M", "MOSS-eps-L", "FIRE", "GLRM", "SIRUS", "RuleFit"]
H, M, L, FIRE, GLRM, SIRUS, RULEFIT = METHODS
EXCLUDED = {"Ailerons_296", "cpu_small_227", "house_16H_574", "houses_537", "mv_344", "stock_223"}

# Half a unit in the last printed digit.
RANK_TOL = 0.005  # ranks printed with 2 decimals
PCT_TOL = 0.005e-2  # percentages printed with 2 decimals (10.09 %)
PCT1_TOL = 0.05e-2  # percentages printed with 1 decimal (7.1 %, 190.8 %, 69.5 %)
PCT0_TOL = 0.5e-2  # percentages printed as integers (105 %)
MEAN_TOL = 0.00005  # the means table has 4 decimals


def _load() -> dict[str, dict[str, dict[str, float]]]:
    """``column -> dataset -> method -> value``."""
    out: dict[str, dict[str, dict[str, float]]] = {c: {} for c in ("r2", "r2_se", "stability", "stability_se")}
    with TABLES.open(newline="") as f:
        for row in csv.DictReader(f):
            for column, table in out.items():
                table.setdefault(row["dataset"], {})[row["method"]] = float(row[column])
    return out


DATA = _load()
R2, R2_SE, STAB, STAB_SE = DATA["r2"], DATA["r2_se"], DATA["stability"], DATA["stability_se"]


def _close_set() -> list[str]:
    return [d for d in STAB if within_one_se(STAB[d][H], STAB_SE[d][H], STAB[d][SIRUS], STAB_SE[d][SIRUS])]


# --- the transcription ------------------------------------------------------------------------


def test_tables_are_complete():
    assert len(R2) == 30
    for column in DATA.values():
        assert set(column) == set(R2)
        for row in column.values():
            assert list(row) == METHODS
            assert all(0 <= v <= 1 for v in row.values())


@pytest.mark.skipif(not SPEC.exists(), reason="the MOSS spec is not on this machine")
def test_csv_matches_the_spec_text():
    """Every CSV cell, printed as the spec prints it, is found in the right column of the right row."""
    text = SPEC.read_text(encoding="utf-8")
    sections = {
        "r2": text.split("**Table 3 + Table 4")[1].split("**average rank**")[0],
        "stability": text.split("**Table 5 + Table 6")[1].split("**average rank**")[0],
    }
    with TABLES.open(newline="") as f:
        raw = list(csv.DictReader(f))
    for value, se in (("r2", "r2_se"), ("stability", "stability_se")):
        rows = {
            line.split("|")[1].strip(): [c.strip() for c in line.strip().strip("|").split("|")[1:]]
            for line in sections[value].splitlines()
            if re.match(r"\| \w", line) and "dataset" not in line
        }
        assert len(rows) == 30
        for r in raw:
            assert rows[r["dataset"]][METHODS.index(r["method"])] == f"{r[value]} ({r[se]})"


# --- ranks ------------------------------------------------------------------------------------


def test_accuracy_ranks():
    expected = [3.93, 3.37, 2.80, 3.13, 3.07, 5.70, 6.00]
    got = average_ranks(R2)
    assert [got[m].mean for m in METHODS] == pytest.approx(expected, abs=RANK_TOL)


def test_stability_ranks():
    """The spec recomputes GLRM as 5.10 where the paper prints 5.3 (erratum, spec §8 item 10)."""
    expected = [2.33, 3.97, 4.63, 5.97, 5.10, 1.33, 4.67]
    got = average_ranks(STAB)
    assert [got[m].mean for m in METHODS] == pytest.approx(expected, abs=RANK_TOL)


def test_printed_one_decimal_ranks_agree_except_glrm_stability():
    """The paper's 1-decimal ranks are within 0.1 of ours (some truncated, some rounded); GLRM is off by 0.2."""
    printed_acc = [3.9, 3.4, 2.8, 3.1, 3.0, 5.7, 6.0]
    printed_stab = [2.3, 3.9, 4.6, 5.9, 5.3, 1.3, 4.6]
    acc, stab = average_ranks(R2), average_ranks(STAB)
    assert all(abs(acc[m].mean - p) < 0.1 for m, p in zip(METHODS, printed_acc))
    off = [m for m, p in zip(METHODS, printed_stab) if abs(stab[m].mean - p) >= 0.1]
    assert off == [GLRM] and stab[GLRM].mean == pytest.approx(5.3 - 0.2)


def test_combined_ranks():
    """FIRE 4.55 and GLRM 4.08: the paper's table prints them swapped (4.18 / 4.51)."""
    expected = {H: 3.13, M: 3.67, L: 3.72, SIRUS: 3.52, RULEFIT: 5.33, FIRE: 4.55, GLRM: 4.08}
    got = combined_ranks(R2, STAB)
    assert {m: got[m].mean for m in expected} == pytest.approx(expected, abs=RANK_TOL)
    acc, stab = average_ranks(R2), average_ranks(STAB)
    for m in METHODS:  # the mean of per-data-set means is the mean of the two average ranks
        assert got[m].mean == pytest.approx((acc[m].mean + stab[m].mean) / 2)
    assert min(got, key=lambda m: got[m].mean) == H  # the paper's recommended default


def test_rank_sums_and_rank_se_on_the_tables():
    for ranks in per_dataset_ranks(R2).values():
        assert sorted(ranks.values()) == [1, 2, 3, 4, 5, 6, 7]  # the tables have no ties
    se = average_ranks(STAB)[SIRUS].se
    per = [r[SIRUS] for r in per_dataset_ranks(STAB).values()]
    assert se == pytest.approx(statistics.stdev(per) / math.sqrt(30))
    assert 0 < se < 0.5


# --- head-to-head claims ----------------------------------------------------------------------


def test_within_one_se_set_is_24_datasets_with_the_papers_exclusions():
    close = _close_set()
    assert len(close) == 24
    assert set(R2) - set(close) == EXCLUDED


def test_one_sided_se_gives_23_datasets():
    h_alone = [d for d in STAB if within_one_se(STAB[d][H], STAB_SE[d][H], STAB[d][SIRUS], 0.0)]
    sirus_alone = [d for d in STAB if within_one_se(STAB[d][SIRUS], STAB_SE[d][SIRUS], STAB[d][H], 0.0)]
    assert len(h_alone) == 23 and len(sirus_alone) == 23
    assert set(_close_set()) - set(h_alone) == {"tecator_505"}
    assert set(_close_set()) - set(sirus_alone) == {"visualizing_galaxy_690"}


def test_moss_h_vs_sirus_accuracy_over_all_30():
    assert mean_median(relative_differences(R2, H, SIRUS).values()).mean == pytest.approx(0.0955, abs=PCT_TOL)


def test_moss_h_vs_sirus_accuracy_on_the_24_close_datasets():
    """What the tables give on the 24-data-set set: +9.92 % mean, +6.62 % median (paper: "+10 %")."""
    got = mean_median(relative_differences(R2, H, SIRUS, _close_set()).values())
    assert got.mean == pytest.approx(0.0992, abs=PCT_TOL)
    assert got.median == pytest.approx(0.0662, abs=PCT_TOL)
    assert round(got.mean, 2) == 0.10  # the paper's rounded claim holds


@pytest.mark.xfail(
    strict=True,
    reason="spec §5.6 says +10.09 % (median +7.1 %) on the 24 close data sets; "
    "the tables give +9.92 % (median +6.62 %) there. 10.09 / 7.14 is the 23-set of |dS| <= SE_SIRUS",
)
def test_spec_figure_10_09_on_the_24_close_datasets():
    got = mean_median(relative_differences(R2, H, SIRUS, _close_set()).values())
    assert got.mean == pytest.approx(0.1009, abs=PCT_TOL)
    assert got.median == pytest.approx(0.071, abs=PCT1_TOL)


def test_spec_figure_10_09_comes_from_the_sirus_se_alone_set():
    """Where the spec's +10.09 % / +7.1 % do reproduce: excluding visualizing_galaxy as well."""
    chosen = [d for d in STAB if within_one_se(STAB[d][SIRUS], STAB_SE[d][SIRUS], STAB[d][H], 0.0)]
    got = mean_median(relative_differences(R2, H, SIRUS, chosen).values())
    assert got.mean == pytest.approx(0.1009, abs=PCT_TOL)
    assert got.median == pytest.approx(0.071, abs=PCT1_TOL)


def test_moss_h_vs_fire_accuracy():
    fire_over_h = mean_median(relative_differences(R2, FIRE, H).values())
    assert fire_over_h.mean == pytest.approx(0.0216, abs=PCT_TOL)  # the paper's "2 % decrease"
    h_over_fire = relative_differences(R2, H, FIRE)
    got = mean_median(h_over_fire.values())
    assert got.mean == pytest.approx(-0.0041, abs=PCT_TOL)
    assert got.median == pytest.approx(-0.0264, abs=PCT_TOL)
    assert h_over_fire["auto_price_195"] == pytest.approx(0.695, abs=PCT1_TOL)
    assert max(h_over_fire, key=h_over_fire.get) == "auto_price_195"


def test_moss_h_vs_fire_stability():
    got = mean_median(relative_differences(STAB, H, FIRE).values())
    assert got.mean == pytest.approx(1.908, abs=PCT1_TOL)
    assert got.median == pytest.approx(1.05, abs=PCT0_TOL)


def test_unweighted_means():
    r2 = [0.6431, 0.6498, 0.6462, 0.6419, 0.5976, 0.5924, 0.5442]
    stab = [0.5627, 0.4113, 0.3952, 0.2880, 0.3347, 0.6378, 0.3723]
    assert [method_means(R2)[m] for m in METHODS] == pytest.approx(r2, abs=MEAN_TOL)
    assert [method_means(STAB)[m] for m in METHODS] == pytest.approx(stab, abs=MEAN_TOL)


@pytest.mark.skipif(not SPEC.exists(), reason="the MOSS spec is not on this machine")
@pytest.mark.parametrize(
    ("caption", "expected"),
    [
        ("Table 10 (Jaccard)", [2.37, 4.03, 4.57, 6.03, 5.13, 1.30, 4.57]),
        ("Table 11 (Ochiai)", [2.37, 3.93, 4.57, 6.07, 5.27, 1.30, 4.50]),
        ("Table 12 (POG)", [2.33, 3.93, 4.60, 6.13, 5.20, 1.30, 4.50]),
    ],
)
def test_alternative_metric_ranks_from_the_spec(caption: str, expected: list[float]):
    """Spec §6.3: stability ranks recomputed from Tables 10-12 (read straight from the spec)."""
    lines = SPEC.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(caption)) + 4
    table: dict[str, dict[str, float]] = {}
    for line in lines[start:]:
        if not line.startswith("| "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        table[cells[0]] = dict(zip(METHODS, map(float, cells[1:]), strict=True))
    assert len(table) == 30
    got = average_ranks(table)
    assert [got[m].mean for m in METHODS] == pytest.approx(expected, abs=RANK_TOL)


# --- the helpers on hand-made inputs ----------------------------------------------------------


def test_standard_error_by_hand():
    # mean 2.5, sample variance 5/3, SE = sqrt(5/3)/2
    assert standard_error([1, 2, 3, 4]) == pytest.approx(math.sqrt(5 / 3) / 2)
    assert standard_error([0.7, 0.7, 0.7]) == pytest.approx(0, abs=1e-12)
    assert math.isnan(standard_error([0.5]))
    assert math.isnan(standard_error([]))


def test_stability_se_is_the_sd_of_the_pairwise_dsc():
    a, b, c = {1, 2}, {1, 2}, {3, 4}
    # pairs (a,b)=1, (a,c)=0, (b,c)=0: mean 1/3, sample sd sqrt(1/3)
    assert pairwise_similarities([a, b, c]) == [1.0, 0.0, 0.0]
    assert empirical_stability([a, b, c]) == pytest.approx(1 / 3)
    assert stability_se([a, b, c]) == pytest.approx(math.sqrt(1 / 3))
    assert stability_se([a, a, a, a]) == 0  # identical rule sets: no spread
    assert math.isnan(stability_se([a, b]))  # one pair: no spread to estimate


def test_cross_validation_reports_its_ses():
    cv = CrossValidation(r2=[0.5, 0.7, 0.6], rule_sets=[{1, 2}, {1, 2}, {3, 4}])
    assert cv.r2_se == pytest.approx(0.1 / math.sqrt(3))
    assert cv.stability_se == pytest.approx(math.sqrt(1 / 3))
    out = cv.to_dict()
    assert out["test_r2_se"] == pytest.approx(0.1 / math.sqrt(3))
    assert out["empirical_stability_se"] == pytest.approx(math.sqrt(1 / 3))
    assert out["empirical_stability_se_definition"] == STABILITY_SE_DEFINITION
    assert "standard deviation" in STABILITY_SE_DEFINITION and "pairwise DSC" in STABILITY_SE_DEFINITION
    assert {"folds", "test_r2", "mean_test_r2", "empirical_stability", "jaccard", "ochiai", "pog"} <= set(out)
    single = CrossValidation(r2=[0.5], rule_sets=[{1}]).to_dict()
    assert single["test_r2_se"] is None and single["empirical_stability_se"] is None


def test_rank_handles_direction_and_ties():
    assert rank({"a": 0.9, "b": 0.5, "c": 0.7}) == {"a": 1, "b": 3, "c": 2}
    assert rank({"a": 0.9, "b": 0.5, "c": 0.7}, higher_is_better=False) == {"a": 3, "b": 1, "c": 2}
    # b and c tie for 2nd/3rd: both get 2.5, and the ranks still sum to n(n+1)/2
    tied = rank({"a": 0.9, "b": 0.5, "c": 0.5, "d": 0.1})
    assert tied == {"a": 1, "b": 2.5, "c": 2.5, "d": 4}
    assert rank({"a": 1.0, "b": 1.0, "c": 1.0}) == {"a": 2, "b": 2, "c": 2}


def test_average_and_combined_ranks_by_hand():
    acc = {"d1": {"x": 0.9, "y": 0.8}, "d2": {"x": 0.6, "y": 0.7}, "d3": {"x": 0.5, "y": 0.4}}
    stab = {"d1": {"x": 0.1, "y": 0.2}, "d2": {"x": 0.3, "y": 0.2}, "d3": {"x": 0.2, "y": 0.3}}
    avg = average_ranks(acc)
    # x ranks 1, 2, 1 -> mean 4/3, sd sqrt(1/3), SE sqrt(1/3)/sqrt(3) = 1/3
    assert avg["x"] == MeanSE(pytest.approx(4 / 3), pytest.approx(1 / 3))
    assert avg["y"].mean == pytest.approx(5 / 3)
    comb = combined_ranks(acc, stab)
    # x: (1+2)/2, (2+1)/2, (1+2)/2 = 1.5 every time -> SE 0
    assert comb["x"] == MeanSE(1.5, 0.0)
    assert comb["y"] == MeanSE(1.5, 0.0)
    with pytest.raises(ValueError, match="d2"):
        average_ranks({"d1": {"x": 1.0, "y": 2.0}, "d2": {"x": 1.0}})
    with pytest.raises(ValueError):
        combined_ranks(acc, {"d1": stab["d1"]})


def test_within_one_se_uses_the_larger_se():
    assert within_one_se(0.50, 0.10, 0.60, 0.02)  # |d| = 0.1 <= max(0.10, 0.02)
    assert within_one_se(0.50, 0.02, 0.60, 0.10)  # symmetric in the two SEs
    assert not within_one_se(0.50, 0.05, 0.60, 0.02)
    assert not within_one_se(0.50, 0.05, 0.60, 0.0)  # se_b = 0: against se_a alone


def test_relative_differences_by_hand():
    assert relative_difference(1.1, 1.0) == pytest.approx(0.1)
    assert relative_difference(1.0, 1.1) == pytest.approx(-1 / 11)  # not the negative of the above
    table = {"d1": {"a": 0.6, "b": 0.5}, "d2": {"a": 0.3, "b": 0.4}, "d3": {"a": 0.9, "b": 0.3}}
    rel = relative_differences(table, "a", "b")
    assert rel == pytest.approx({"d1": 0.2, "d2": -0.25, "d3": 2.0})
    assert relative_differences(table, "a", "b", ["d2"]) == pytest.approx({"d2": -0.25})
    got = mean_median(rel.values())
    assert got.mean == pytest.approx((0.2 - 0.25 + 2.0) / 3) and got.median == pytest.approx(0.2)
    assert method_means(table) == pytest.approx({"a": 0.6, "b": 0.4})
