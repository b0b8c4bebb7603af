"""Formulas (1)-(5) of paper section VIII against hand-computed values, and the studies.

The hand computations use small integers: the formulas are linear in the delays,
so the unit does not matter, and integers keep float arithmetic exact.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from nice_attendre.models.delay import (
    DelayConfigError,
    DelayModelError,
    DelayParams,
    Mechanism,
    PathDelays,
    ac_links,
    attendre_delay,
    check_claims,
    forwarding_delay,
    grid_study,
    link_delays,
    load_config,
    lognormal,
    monte_carlo_study,
    openflow_b_delay,
    openflow_delay,
    parse_duration,
    parse_durations,
    redundant_packet_ins,
    rtt_grid,
    setup_delay,
    summarize,
    transmission_row,
)

US = 1e-6


def path(n: int, **switch: list[float]) -> PathDelays:
    """A one-case path whose links are L_k = 1 + t^k + 1 + 2 with t^k = k + 2, so L = 6, 7, 8, 9, ..."""
    return PathDelays(
        tau=switch["tau"],
        p_sp=switch.get("p_sp", [5] * n),
        p_sc=switch.get("p_sc", [100] * n),
        p_c=switch.get("p_c", [30] * n),
        q_o=[1] * (n + 1),
        t=[k + 2 for k in range(n + 1)],
        g=[1] * (n + 1),
        q_i=[2] * (n + 1),
    )


# ------------------------------------------------------------------------ (1), (2)


def test_link_delays_formula_1_sums_the_four_components_per_link() -> None:
    p = PathDelays(tau=[0, 0], p_sp=0, p_sc=0, p_c=0, q_o=[1, 10, 100], t=[2, 20, 200], g=[3, 30, 300], q_i=[4, 40, 400])
    # L_k = q_o^k + t^k + g^k + q_i^{k+1}; q_i column k is node k + 1's input queue.
    assert link_delays(p).tolist() == [[1 + 2 + 3 + 4, 10 + 20 + 30 + 40, 100 + 200 + 300 + 400]]


def test_setup_delay_formula_2_uses_switch_1_only() -> None:
    p = path(2, tau=[40, 1000], p_sp=[5, 1000], p_c=[30, 1000])
    # S = L_0 + p_sp^1 + tau^1/2 + p_c^1 = 6 + 5 + 20 + 30
    assert setup_delay(p).tolist() == [61]


# --------------------------------------------------------------------------- N = 1


def test_n1_all_three_mechanisms_agree_with_hand_value() -> None:
    p = path(1, tau=[40])
    s = 6 + 5 + 40 / 2 + 30  # L_0 + p_sp + tau/2 + p_c = 61
    expected = s + 100 + 40 / 2 + 5 + 7  # + p_sc + tau/2 + p_sp + L_1 = 193
    assert expected == 193
    assert openflow_delay(p).tolist() == [expected]
    # (4) with N = 1: L_0 + L_1 + p_sp + p_sp + tau + p_c + p_sc, no barrier to wait for
    assert openflow_b_delay(p).tolist() == [(6 + 7) + 5 + 5 + 40 + 30 + 100]
    assert attendre_delay(p).tolist() == [expected]
    assert redundant_packet_ins(p).tolist() == [[False]]


def test_n1_agreement_holds_for_arbitrary_delays() -> None:
    rng = np.random.default_rng(7)
    c = 200
    p = PathDelays(
        tau=rng.uniform(0, 1, (c, 1)),
        p_sp=rng.uniform(0, 1, (c, 1)),
        p_sc=rng.uniform(0, 1, (c, 1)),
        p_c=rng.uniform(0, 1, (c, 1)),
        q_o=rng.uniform(0, 1, (c, 2)),
        t=rng.uniform(0, 1, (c, 2)),
        g=rng.uniform(0, 1, (c, 2)),
        q_i=rng.uniform(0, 1, (c, 2)),
    )
    np.testing.assert_allclose(openflow_b_delay(p), openflow_delay(p), rtol=1e-12)
    np.testing.assert_allclose(attendre_delay(p), openflow_delay(p), rtol=1e-12)


# --------------------------------------------------------------------------- N = 2


def test_n2_two_cases_at_once_with_and_without_redundant_packet_in() -> None:
    # Case 0: tau^2 = 80; case 1: tau^2 = 40. Links L = 6, 7, 8. S = 61, T^1 = 193 in both.
    p = PathDelays(
        tau=[[40, 80], [40, 40]], p_sp=5, p_sc=100, p_c=30, q_o=1, t=[2, 3, 4], g=1, q_i=2
    )
    s, t1 = 61, 193
    # (3): indicator (T^1 - S = 132) < tau^2/2 + p_sc^2: 132 < 140 true; 132 < 120 false.
    redo = 80 + 30 + 100 + 5  # tau^2 + p_c^2 + p_sc^2 + p_sp^2
    assert openflow_delay(p).tolist() == [t1 + 5 + 8 + redo, t1 + 5 + 8]  # 421, 206
    assert redundant_packet_ins(p).tolist() == [[False, True], [False, False]]
    # (4): sum L + sum p_sp + p_sp^1 + tau^1 + p_c^1 + p_sc^1 + max_j (tau^j + p_sc^j)
    head = (6 + 7 + 8) + (5 + 5) + 5 + 40 + 30 + 100
    assert openflow_b_delay(p).tolist() == [head + 80 + 100, head + 40 + 100]  # 386, 346
    # (5): p_sp^2 + L_2 + S + max(T^1 - S, tau^2/2 + p_sc^2)
    assert attendre_delay(p).tolist() == [5 + 8 + s + max(132, 140), 5 + 8 + s + max(132, 120)]  # 214, 206


def test_n2_indicator_is_strict_at_equality() -> None:
    # T^1 - S = 132 and tau^2/2 + p_sc^2 = 32 + 100 = 132: not strictly less, no packet-in.
    p = path(2, tau=[40, 64])
    assert redundant_packet_ins(p).tolist() == [[False, False]]
    assert openflow_delay(p).tolist() == [193 + 5 + 8]


# --------------------------------------------------------------------------- N = 3


def test_n3_per_switch_parameters_hand_values() -> None:
    p = path(3, tau=[40, 80, 60], p_sp=[5, 6, 7], p_sc=[100, 90, 150], p_c=[30, 10, 20])
    # L = 6, 7, 8, 9; S = 6 + 5 + 20 + 30 = 61; T^1 = 61 + 100 + 20 + 5 + 7 = 193
    s, t1 = 61, 193
    # switch 2: 193 - 61 = 132 < 80/2 + 90 = 130? no  -> T^2 = 193 + 6 + 8 = 207
    # switch 3: 207 - 61 = 146 < 60/2 + 150 = 180? yes -> T^3 = 207 + 7 + 9 + (60 + 20 + 150 + 7)
    t2 = t1 + 6 + 8
    assert openflow_delay(p).tolist() == [t2 + 7 + 9 + (60 + 20 + 150 + 7)]  # 460
    assert redundant_packet_ins(p).tolist() == [[False, False, True]]
    # (4): 30 + 18 + 5 + 40 + 30 + 100 + max(80 + 90, 60 + 150)
    assert openflow_b_delay(p).tolist() == [(6 + 7 + 8 + 9) + (5 + 6 + 7) + 5 + 40 + 30 + 100 + 210]  # 433
    # (5): T^2 = 6 + 8 + 61 + max(132, 130) = 207; T^3 = 7 + 9 + 61 + max(146, 180) = 257
    a2 = 6 + 8 + s + max(t1 - s, 130)
    assert attendre_delay(p).tolist() == [7 + 9 + s + max(a2 - s, 180)]
    for mechanism, fn in [
        (Mechanism.OPENFLOW, openflow_delay),
        (Mechanism.OPENFLOW_B, openflow_b_delay),
        (Mechanism.ATTENDRE, attendre_delay),
    ]:
        assert forwarding_delay(p, mechanism).tolist() == fn(p).tolist()


# ------------------------------------------------------------------- path contracts


def test_path_rejects_wrong_widths_and_negative_delays() -> None:
    with pytest.raises(DelayModelError, match="q_o has shape"):
        PathDelays(tau=[1, 2], p_sp=0, p_sc=0, p_c=0, q_o=[1, 2], t=0, g=0, q_i=0)
    with pytest.raises(DelayModelError, match="p_sc must hold finite, non-negative"):
        PathDelays(tau=[1, 2], p_sp=0, p_sc=[1, -1], p_c=0, q_o=0, t=0, g=0, q_i=0)
    with pytest.raises(DelayModelError, match="number of cases"):
        PathDelays(tau=[[1, 2]] * 3, p_sp=[[0, 0]] * 2, p_sc=0, p_c=0, q_o=0, t=0, g=0, q_i=0)


def test_ac_is_carried_on_links_out_of_switches_1_to_n_minus_1() -> None:
    assert ac_links(1).tolist() == [False, False]
    assert ac_links(3).tolist() == [False, True, True, False]
    params = DelayParams()
    plain, ac = params.t, params.t_ac
    assert transmission_row(params, Mechanism.ATTENDRE).tolist() == [plain] + [ac] * 5 + [plain]
    assert transmission_row(params, Mechanism.OPENFLOW_B).tolist() == [plain] * 7
    assert transmission_row(params, Mechanism.OPENFLOW).tolist() == [plain] * 7


def test_rtt_grid_is_every_assignment_switch_1_slowest() -> None:
    assert rtt_grid((1.0, 2.0), 2).tolist() == [[1, 1], [1, 2], [2, 1], [2, 2]]
    assert rtt_grid((1.0,) * 6, 6).shape == (6**6, 6)
    with pytest.raises(DelayConfigError, match="RTT combinations"):
        rtt_grid((1.0, 2.0), 30)


# ---------------------------------------------------------------------- parameters


def test_default_params_are_the_papers() -> None:
    p = DelayParams()
    assert p.n_switches == 6
    assert p.t == pytest.approx(0.576 * US) and p.t_ac == pytest.approx(3.04 * US)
    assert p.g == pytest.approx(0.167 * US)
    assert p.q_i == pytest.approx(3.4 * US) and p.q_o == pytest.approx(3.4 * US)
    assert p.p_sp == pytest.approx(5 * US) and p.p_sc == pytest.approx(1e-3)
    assert p.p_c == pytest.approx((100 * US, 400 * US, 700 * US, 1000 * US))
    assert p.tau == pytest.approx((50 * US, 90 * US, 130 * US, 170 * US, 210 * US, 250 * US))


def test_durations_parse_with_units() -> None:
    assert parse_duration("5us", "k") == pytest.approx(5e-6)
    assert parse_duration("1 ms", "k") == pytest.approx(1e-3)
    assert parse_duration("167ns", "k") == pytest.approx(167e-9)
    assert parse_duration(0.002, "k") == 0.002
    assert parse_durations("0.1ms:1ms:4", "k") == pytest.approx((1e-4, 4e-4, 7e-4, 1e-3))
    assert parse_durations("50us, 250us", "k") == pytest.approx((50e-6, 250e-6))
    assert parse_durations(["1ms", 0.5], "k") == pytest.approx((1e-3, 0.5))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"p_cc": "1ms"}, "unknown key 'p_cc'; did you mean 'p_c'?"),
        ({"p_sc": "-1ms"}, "p_sc: delay must not be negative"),
        ({"p_sc": True}, "p_sc: expected a duration"),
        ({"g": "fast"}, "g: cannot read 'fast' as a duration"),
        ({"n_switches": 2.5}, "n_switches: expected a positive integer"),
        ({"n_switches": 0}, "n_switches: expected a positive integer"),
        ({"tau": []}, "tau: expected at least one duration"),
        ({"sigma_switch": -0.1}, "sigma_switch: expected a non-negative number"),
    ],
)
def test_bad_overrides_raise_config_error_naming_the_key(overrides: dict, message: str) -> None:
    with pytest.raises(DelayConfigError, match=message.replace("?", r"\?").replace("(", r"\(")) as info:
        DelayParams().with_overrides(overrides)
    assert info.value.key == next(iter(overrides))
    assert isinstance(info.value, ValueError)


def test_load_config_json_and_toml(tmp_path) -> None:
    j = tmp_path / "p.json"
    j.write_text(json.dumps({"n_switches": 3, "p_c": ["1ms"]}))
    t = tmp_path / "p.toml"
    t.write_text('tau = "50us:250us:3"\np_sc = 0.002\n')
    params = DelayParams().with_overrides(load_config(j)).with_overrides(load_config(t))
    assert params.n_switches == 3 and params.p_c == (1e-3,) and params.p_sc == 0.002
    assert params.tau == pytest.approx((50e-6, 150e-6, 250e-6))
    bad = tmp_path / "p.yaml"
    bad.write_text("x: 1")
    with pytest.raises(DelayConfigError, match="must end in .json or .toml"):
        load_config(bad)
    broken = tmp_path / "b.json"
    broken.write_text("{")
    with pytest.raises(DelayConfigError, match="not valid JSON"):
        load_config(broken)


# ---------------------------------------------------------------- the grid (VIII.D)


@pytest.fixture(scope="module")
def paper_grid():
    return grid_study(DelayParams())


def test_grid_has_46656_rtt_combinations_per_controller_delay(paper_grid) -> None:
    assert paper_grid.openflow.shape == (4, 6**6)
    assert paper_grid.tau.shape == (4, 6**6, 6)
    assert paper_grid.redundant.shape == (4, 6**6, 6)


def test_grid_extremes_match_hand_computation(paper_grid) -> None:
    l_plain = (3.4 + 0.576 + 0.167 + 3.4) * US  # 7.543 us
    l_ac = (3.4 + 3.04 + 0.167 + 3.4) * US  # 10.007 us
    p_sp, p_sc, p_c = 5 * US, 1e-3, 100 * US
    # Attendre, every tau = 250 us: the max in (5) always keeps T^{n-1} - S, so
    # T_a = L_0 + L_1..L_5 (AC) + L_6 + 7 p_sp + tau + p_c + p_sc = 1450.121 us.
    worst_a = 2 * l_plain + 5 * l_ac + 7 * p_sp + 250 * US + p_c + p_sc
    # OpenFlow-B, every tau = 50 us: 7 L + 6 p_sp + p_sp + tau + p_c + p_sc + (tau + p_sc) = 2287.801 us.
    best_b = 7 * l_plain + 7 * p_sp + 50 * US + p_c + p_sc + (50 * US + p_sc)
    assert paper_grid.attendre[0].max() == pytest.approx(worst_a, abs=1e-12)
    assert paper_grid.openflow_b[0].min() == pytest.approx(best_b, abs=1e-12)
    assert worst_a == pytest.approx(1450.121 * US) and best_b == pytest.approx(2287.801 * US)


def test_papers_three_claims_hold_on_defaults(paper_grid) -> None:
    claims = check_claims(paper_grid)
    assert claims.all_hold
    gap = claims.barrier_gap
    assert gap.min_gap == pytest.approx(1037.68 * US) and gap.max_gap == pytest.approx(1237.68 * US)
    assert np.all(claims.worst_beats_best.worst_attendre < claims.worst_beats_best.best_openflow_b)
    # pinned: 26952 of 46656 OpenFlow cases are slower than the worst Attendre case,
    # at every controller delay -- exactly the cases with a redundant packet-in.
    assert claims.worst_beats_share.share.tolist() == [26952 / 46656] * 4
    assert paper_grid.redundant.any(axis=2).sum(axis=1).tolist() == [26952] * 4
    assert not claims.worst_beats_share.share.min() >= 0.60  # strictly, 57.8% is a bit under 60%


def test_claims_fail_when_they_should(paper_grid) -> None:
    strict = check_claims(paper_grid, share_threshold=0.6, gap_target=2e-3, gap_tolerance=0.5e-3)
    assert not strict.worst_beats_share.holds and not strict.barrier_gap.holds
    # With a 10 us command processing delay the barrier wait is far from 1 ms.
    fast_commands = grid_study(DelayParams(n_switches=3, p_sc=10e-6))
    assert not check_claims(fast_commands).barrier_gap.holds


def test_summary_order_statistics(paper_grid) -> None:
    rows = summarize(paper_grid)
    assert [(r.mechanism, r.p_c) for r in rows[:3]] == [(m, pytest.approx(1e-4)) for m in Mechanism]
    attendre = rows[2]
    values = np.sort(paper_grid.attendre[0])
    assert attendre.minimum == values[0] and attendre.maximum == values[-1]
    # linear interpolation: rank 0.8 * (M - 1)
    rank = 0.8 * (values.size - 1)
    lo = int(np.floor(rank))
    assert attendre.p80 == pytest.approx(values[lo] + (rank - lo) * (values[lo + 1] - values[lo]))


# ------------------------------------------------------------------- Monte Carlo


def test_monte_carlo_same_seed_same_study_other_seed_differs() -> None:
    params = DelayParams(n_switches=4)
    a, b = monte_carlo_study(params, 500, seed=3), monte_carlo_study(params, 500, seed=3)
    c = monte_carlo_study(params, 500, seed=4)
    for mechanism in Mechanism:
        assert np.array_equal(a.delays(mechanism), b.delays(mechanism))
        assert not np.array_equal(a.delays(mechanism), c.delays(mechanism))
    assert np.array_equal(a.tau, b.tau) and a.seed == 3


def test_monte_carlo_with_zero_sigma_reproduces_grid_cases() -> None:
    params = DelayParams(n_switches=3, sigma_switch=0.0, sigma_controller=0.0)
    mc, grid = monte_carlo_study(params, 300, seed=1), grid_study(params)
    rtt = np.asarray(params.tau)
    index = np.searchsorted(rtt, mc.tau) @ (len(rtt) ** np.arange(2, -1, -1))  # base-6, switch 1 first
    for mechanism in Mechanism:
        np.testing.assert_allclose(
            mc.delays(mechanism), np.take_along_axis(grid.delays(mechanism), index, axis=1), rtol=1e-12
        )


def test_lognormal_draws_are_centred_on_the_median() -> None:
    draws = lognormal(np.random.default_rng(0), 2.0, 0.5, (200_001,))
    assert np.median(draws) == pytest.approx(2.0, rel=0.01)
    assert np.all(draws > 0)
    assert np.all(lognormal(np.random.default_rng(0), 2.0, 0.0, (5,)) == 2.0)
