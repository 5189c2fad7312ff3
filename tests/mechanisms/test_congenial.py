"""Congenial (conditional) mechanisms: samplers target M | S* (Gong & Meng 2020)."""

import itertools
import warnings

import numpy as np
import pytest
from scipy import optimize, stats

from invariantdp import InvariantDPError, Invariants, Release, datasets
from invariantdp.exceptions import ConvergenceWarning, SimulationWarning
from invariantdp.invariants import one_way_margins
from invariantdp.mechanisms import (
    LinearInequalities,
    conditional_release,
    l1_postprocess,
    l1_privacy_level,
    l2_postprocess,
)

TOTAL2 = Invariants(np.ones((1, 2)))


def sex_by_age_invariants():
    """Total, female total and voting-age (18+) total of the 2 x 23 table."""
    C = np.zeros((3, 46))
    C[0] = 1
    C[1, :23] = 1
    C[2, 4:23] = 1
    C[2, 27:] = 1
    return Invariants(C, shape=(2, 23), names=("total", "female", "voting age"))


def quiet(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return conditional_release(**kw)


# --- Example 4.1: closed form --------------------------------------------------


@pytest.mark.parametrize("sampler", ["exact", "gibbs", "mis"])
def test_example_4_1_two_bin_laplace_is_laplace_one_over_epsilon(sampler, rng):
    eps = 0.8
    kw = dict(draws=2000, chains=2, tune=100)
    if sampler == "gibbs":  # chains are vectorised: many short chains are cheap
        kw.update(draws=250, chains=16, tune=50, thin=2)
    elif sampler == "mis":
        kw.update(thin=25)
    res = quiet(
        x=[30.0, 70.0],
        mechanism="laplace",
        invariants=TOTAL2,
        epsilon=eps,
        sensitivity=2.0,  # u_i ~ Lap(2 / eps)
        sampler=sampler,
        rng=rng,
        **kw,
    )
    d = res.draws.reshape(-1, 2)
    np.testing.assert_allclose(d.sum(axis=1), 100.0, atol=1e-9)
    u = d[:, 0] - 30.0
    # Eq. 4.6: m1 - s1 ~ Lap(1/eps); thinned chains are close to independent
    assert stats.kstest(u, stats.laplace(scale=1 / eps).cdf).pvalue > 1e-3
    assert abs(np.var(u) - 2 / eps**2) < 0.2 * 2 / eps**2


# --- exact enumeration of a small integer fibre ------------------------------------


def _fibre_pmf(x, C, logp, bounds=(0, 12), candidates=None):
    x = np.asarray(x)
    a = C @ x.ravel()
    if candidates is None:
        pts = np.array(list(itertools.product(range(*bounds), repeat=x.size)))
    else:
        pts = candidates
    pts = pts[np.all(pts @ C.T == a, axis=1)]
    lw = logp(pts - x.ravel())
    w = np.exp(lw - lw.max())
    return pts, w / w.sum()


def _compositions(n, k):
    """All vectors of k non-negative integers summing to n."""
    return np.array(
        [
            np.diff((-1,) + c + (n + k - 1,)) - 1
            for c in itertools.combinations(range(n + k - 1), k - 1)
        ]
    )


def _tv(draws, pts, p):
    index = {tuple(r): i for i, r in enumerate(pts.astype(int))}
    counts = np.zeros(len(pts))
    for r in draws.astype(int):
        counts[index[tuple(r)]] += 1
    return 0.5 * np.abs(counts / counts.sum() - p).sum()


def _tv_bound(p, n_eff):
    """Three times the expected TV of n_eff i.i.d. draws (approximately)."""
    return 3 * 0.5 * np.sum(np.sqrt(p * (1 - p) / n_eff) * np.sqrt(2 / np.pi))


@pytest.mark.parametrize(
    "mechanism, kw, logp",
    [
        ("discrete_laplace", {"epsilon": 0.7}, lambda u: -0.7 * np.abs(u).sum(1)),
        ("discrete_gaussian", {"rho": 0.125}, lambda u: -0.125 * (u * u).sum(1)),  # sigma = 2
    ],
)
@pytest.mark.parametrize("sampler", ["exact", "gibbs", "mis"])
def test_samplers_match_enumerated_fibre(mechanism, kw, logp, sampler, rng):
    x = np.array([[2, 1, 3], [1, 2, 0]])
    inv = one_way_margins((2, 3))  # 5 margins of rank 4: a 2-D integer fibre
    C = np.asarray(inv.matrix.toarray() if hasattr(inv.matrix, "toarray") else inv.matrix)
    # the fibre lies in the product of the compositions of the row totals
    rows = [_compositions(int(t), 3) for t in x.sum(axis=1)]
    pts, p = _fibre_pmf(
        x, C, logp, candidates=np.array([np.r_[u, v] for u in rows[0] for v in rows[1]])
    )
    chains, draws = {"exact": (2, 5000), "gibbs": (16, 320), "mis": (2, 10000)}[sampler]
    res = quiet(
        x=x,
        mechanism=mechanism,
        invariants=inv,
        inequalities="nonnegative",
        sampler=sampler,
        draws=draws,
        chains=chains,
        tune=100,
        rng=rng,
        **kw,
    )
    draws = res.draws.reshape(-1, 6)
    assert np.all(draws >= 0)
    np.testing.assert_array_equal(draws @ C.T, np.tile(C @ x.ravel(), (len(draws), 1)))
    # exact draws are i.i.d.: the bound uses their number, not an estimate
    n_eff = len(draws) if sampler == "exact" else max(min(res.diagnostics.ess_min, len(draws)), 50)
    assert _tv(draws, pts, p) < _tv_bound(p, n_eff)


@pytest.mark.parametrize(
    "mechanism, kw, logp",
    [
        ("discrete_laplace", {"epsilon": 0.6}, lambda u: -0.6 * np.abs(u).sum(1)),
        ("discrete_gaussian", {"rho": 0.08}, lambda u: -0.08 * (u * u).sum(1)),  # sigma = 2.5
    ],
)
def test_exact_sampler_matches_enumeration_with_subtotal_and_upper_bound(mechanism, kw, logp, rng):
    # 2 x 4 table, invariants: the two row totals and the sub-total of columns 0-1 (the
    # "under 18" total of Section 3); non-negativity and an upper bound s_0 <= 3
    x = np.array([[2, 1, 3, 1], [1, 2, 0, 2]])
    C = np.array([[1, 1, 1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1], [1, 1, 0, 0, 1, 1, 0, 0]])
    inv = Invariants(C, shape=(2, 4))
    B = np.vstack([np.eye(8), -np.eye(8)[:1]])
    b = np.r_[np.zeros(8), -3.0]
    a = C @ x.ravel()
    rows = [_compositions(int(t), 4) for t in a[:2]]
    pts = np.array([np.r_[u, v] for u in rows[0] for v in rows[1]])
    pts = pts[np.all(pts @ C.T == a, axis=1) & (pts[:, 0] <= 3)]
    lw = logp(pts - x.ravel())
    p = np.exp(lw - lw.max())
    p /= p.sum()
    res = conditional_release(
        x, mechanism, inv, (B, b), sampler="auto", draws=6000, chains=2, rng=rng, **kw
    )
    assert res.method == "exact"
    draws = res.draws.reshape(-1, 8)
    assert draws.min() >= 0 and draws[:, 0].max() <= 3
    assert _tv(draws, pts, p) < _tv_bound(p, len(draws))
    assert res.diagnostics.acceptance_rate == 1.0
    assert res.diagnostics.ess_min > 0.7 * len(draws)  # ArviZ ESS of i.i.d. draws


def test_exact_sampler_cells_outside_the_invariants(rng):
    # cell 3 is in no invariant: independent double geometric noise truncated at 0
    x = np.array([2, 1, 3, 1])
    inv = Invariants(np.array([[1.0, 1, 1, 0]]))
    res = conditional_release(
        x, "discrete_laplace", inv, "nonnegative", epsilon=0.7, draws=8000, chains=1, rng=rng
    )
    assert res.method == "exact"
    head = _compositions(6, 3)
    pts = np.array([np.r_[h, k] for h in head for k in range(60)])
    lw = -0.7 * np.abs(pts - x).sum(1)
    p = np.exp(lw - lw.max())
    p /= p.sum()
    draws = res.draws[0]
    assert draws[:, 3].max() < 60
    assert _tv(draws, pts, p) < _tv_bound(p, len(draws))


def test_coupled_inequality_rows_match_enumeration(rng):
    # a row of B with two cells: s_0 + s_1 >= 5 on top of non-negativity
    x = np.array([3, 3, 2, 1])
    inv = Invariants(np.ones((1, 4)))
    B = np.vstack([np.eye(4), [1, 1, 0, 0]])
    b = np.array([0, 0, 0, 0, 5.0])
    res = quiet(
        x=x,
        mechanism="discrete_laplace",
        invariants=inv,
        inequalities=(B, b),
        epsilon=0.9,
        draws=400,
        chains=16,
        tune=100,
        rng=rng,
    )
    assert res.method == "gibbs"  # a coupled inequality row: no exact sampler
    pts, p = _fibre_pmf(x, np.ones((1, 4)), lambda u: -0.9 * np.abs(u).sum(1), (0, 10))
    keep = pts[:, 0] + pts[:, 1] >= 5
    pts, p = pts[keep], p[keep] / p[keep].sum()
    draws = res.draws.reshape(-1, 4)
    assert np.all(draws[:, 0] + draws[:, 1] >= 5)
    assert _tv(draws, pts, p) < _tv_bound(p, max(res.diagnostics.ess_min, 50))


def test_continuous_gibbs_and_mis_agree_with_inequalities(rng):
    x = np.array([2.0, 5.0, 1.0, 4.0])
    inv = Invariants(np.array([[1.0, 1, 1, 1], [1, -1, 0, 0]]))
    common = dict(x=x, invariants=inv, inequalities="nonnegative", rng=rng)
    for mech, kw in [("laplace", {"epsilon": 0.5}), ("gaussian", {"mu": 0.5})]:
        g = quiet(mechanism=mech, sampler="gibbs", chains=16, draws=500, tune=50, **common, **kw)
        m = quiet(mechanism=mech, sampler="mis", chains=2, draws=20000, **common, **kw)
        dg, dm = g.draws.reshape(-1, 4), m.draws.reshape(-1, 4)
        assert dg.min() >= -1e-9 and dm.min() >= -1e-9
        se = dg.std(0) * (1 / np.sqrt(g.diagnostics.ess_min) + 1 / np.sqrt(m.diagnostics.ess_min))
        assert np.all(np.abs(dg.mean(0) - dm.mean(0)) < 4 * se + 1e-9)


def test_gaussian_equalities_exact_is_projection(rng):
    x = np.array([10.0, 20.0, 30.0, 40.0])
    inv = Invariants(np.array([[1.0, 1, 0, 0], [0, 0, 1, 1]]))
    res = conditional_release(x, "gaussian", inv, mu=0.5, draws=20000, chains=1, rng=rng)
    assert res.method == "exact"
    d = res.draws[0]
    P = np.eye(4) - inv.matrix.T @ np.linalg.pinv(inv.matrix.T)
    np.testing.assert_allclose(np.cov(d.T), 4.0 * P, atol=0.15)
    assert res.guarantee.definition == "GDP"


# --- the 2 x 23 table ----------------------------------------------------------------


def test_sex_by_age_release_respects_invariants(rng):
    x = datasets.congenial_sex_by_age().to_numpy()
    inv = sex_by_age_invariants()
    res = quiet(
        x=x,
        mechanism="discrete_laplace",
        invariants=inv,
        inequalities="nonnegative",
        epsilon=0.5,
        draws=300,
        rng=rng,
    )
    assert res.method == "exact"  # sampler="auto": 0/1 invariants, non-negative counts
    v = res.value
    assert v.shape == (2, 23) and v.dtype.kind == "i" and v.min() >= 0
    np.testing.assert_array_equal(inv.apply(v), [256, 130, 213])
    assert res.diagnostics.rhat_max < 1.05
    assert res.diagnostics.acceptance_rate == 1
    assert "Sampler diagnostics" in res.summary()
    r2 = Release.from_json(res.to_json())
    assert r2 == res and type(r2) is Release  # the Release part round-trips
    assert res.guarantee.params["epsilon"] == 1.0  # Theorem 2.1, gamma = 1


def test_sex_by_age_exact_and_gibbs_agree(rng):
    x = datasets.congenial_sex_by_age().to_numpy()
    common = dict(
        x=x,
        mechanism="discrete_laplace",
        invariants=sex_by_age_invariants(),
        inequalities="nonnegative",
        epsilon=0.5,
        rng=rng,
    )
    ex = quiet(sampler="exact", draws=10000, chains=2, **common)
    gb = quiet(sampler="gibbs", draws=150, chains=64, tune=50, **common)
    de, dg = ex.draws.reshape(-1, 46), gb.draws.reshape(-1, 46)
    assert gb.diagnostics.rhat_max < 1.05
    se = np.sqrt(de.var(0) / len(de) + dg.var(0) / gb.diagnostics.ess)
    z = np.abs(de.mean(0) - dg.mean(0)) / se
    assert np.max(z) < 4.5  # 46 cells: |z| > 4.5 has probability ~ 3e-4 under agreement


def test_mis_paper_tuning_acceptance_is_low_and_warns(rng):
    x = datasets.congenial_sex_by_age().to_numpy()
    index = np.setdiff1d(np.arange(46), [0, 22, 45])  # the paper's I = {2..22, 24..45}
    with pytest.warns(ConvergenceWarning, match="R-hat"):
        res = conditional_release(
            x,
            "discrete_laplace",
            sex_by_age_invariants(),
            "nonnegative",
            epsilon=0.5,
            sampler="mis",
            proposal_index=index,
            proposal_epsilon=0.6,
            draws=3000,
            tune=0,
            rng=rng,
        )
    # Appendix C: about 1.7 % acceptance at epsilon-tilde = 0.6
    assert 0.005 < res.diagnostics.acceptance_rate < 0.04


# --- bad input -------------------------------------------------------------------------


def test_bad_input_names_the_argument():
    inv = Invariants(np.ones((1, 2)), [10.0])
    with pytest.raises(ValueError, match="`x` does not satisfy the invariants"):
        conditional_release([3, 4], "discrete_laplace", inv, epsilon=1.0)
    with pytest.raises(ValueError, match="`x` must have the shape"):
        conditional_release([3, 4, 5], "discrete_laplace", TOTAL2, epsilon=1.0)
    with pytest.raises(ValueError, match="`inequalities` are infeasible"):
        conditional_release([3, 4], "laplace", TOTAL2, ([[1.0, 1.0]], [20.0]), epsilon=1.0, draws=2)
    with pytest.raises(ValueError, match="`x` violates `inequalities`"):
        conditional_release([-3.0, 4.0], "laplace", TOTAL2, "nonnegative", epsilon=1.0)
    with pytest.raises(ValueError, match="`inequalities.lower` must have shape"):
        conditional_release([3, 4], "laplace", TOTAL2, ([[1.0, 0.0]], [0.0, 1.0]), epsilon=1.0)
    with pytest.raises(ValueError, match="`mechanism`"):
        conditional_release([3, 4], "cauchy", TOTAL2, epsilon=1.0)
    with pytest.raises(ValueError, match=r"`epsilon` \(-1.0\) must be > 0"):
        conditional_release([3, 4], "laplace", TOTAL2, epsilon=-1.0)
    with pytest.raises(ValueError, match="`proposal_index` must have"):
        conditional_release(
            [1, 2, 3],
            "laplace",
            Invariants(np.ones((1, 3))),
            epsilon=1.0,
            sampler="mis",
            proposal_index=np.array([0]),
        )
    with pytest.raises(ValueError, match="`sampler`"):
        conditional_release([3, 4], "laplace", TOTAL2, epsilon=1.0, sampler="hmc")
    with pytest.raises(ValueError, match=r"`sampler` \('exact'\) needs"):
        conditional_release(
            [1, 2, 3],
            "laplace",
            Invariants(np.ones((1, 3))),
            "nonnegative",
            epsilon=1.0,
            sampler="exact",
        )
    with pytest.raises(ValueError, match=r"`sampler` \('exact'\) needs .*0/1"):
        conditional_release(
            [1, 2, 3],
            "discrete_laplace",
            Invariants(np.array([[1.0, 2.0, 0.0]])),
            "nonnegative",
            epsilon=1.0,
            sampler="exact",
        )


# --- Section 4: post-processing, Table 2 ------------------------------------------------


def test_table_2_expectations_and_variances(rng):
    eps, s1, s2, n = 1.0, 30.0, 70.0, 200_000
    inv = Invariants(np.ones((1, 2)), [100.0])
    m = np.array([s1, s2]) + rng.laplace(scale=2 / eps, size=(n, 2))
    l2 = l2_postprocess(m, inv)
    cong = conditional_release(
        [s1, s2], "laplace", TOTAL2, epsilon=eps, sensitivity=2.0, draws=n, chains=1, rng=rng
    ).draws[0]
    tol = 4 * np.sqrt(8 / eps**2 / n)
    # expectations: all three unbiased (Table 2 prints (s-bar, s-bar) for f_L2; the
    # orthogonal projection is in fact unbiased)
    for out in (cong, l2, l1_postprocess(m, inv, beta=0.8)):
        np.testing.assert_allclose(out.mean(0), [s1, s2], atol=tol)
        np.testing.assert_allclose(out.sum(1), 100.0)
    assert abs(cong[:, 0].var() / (2 / eps**2) - 1) < 0.03
    assert abs(l2[:, 0].var() / (4 / eps**2) - 1) < 0.03
    for beta in (0.5, 0.8, 1.0):
        v = l1_postprocess(m, inv, beta=beta)[:, 0].var()
        assert abs(v / ((beta**2 + (1 - beta) ** 2) * 8 / eps**2) - 1) < 0.03

    # (4.7): the L2 error is a 50-50 mixture of Lap(1/eps) and SgnGamma(2, 1/eps)
    def mix_cdf(t):
        return 0.5 * stats.laplace(scale=1 / eps).cdf(t) + 0.5 * (
            0.5 + 0.5 * np.sign(t) * stats.gamma(2, scale=1 / eps).cdf(np.abs(t))
        )

    assert stats.kstest(l2[:20000, 0] - s1, mix_cdf).pvalue > 1e-3


def test_l1_privacy_level_and_lp_solution():
    assert l1_privacy_level(1.0, 0.5) == 1.0
    assert l1_privacy_level(2.0, 0.75) == pytest.approx(4 / 3)
    assert l1_privacy_level(1.0, 0.0) == 0.5
    with pytest.raises(ValueError, match="`beta`"):
        l1_privacy_level(1.0, 1.5)
    inv = Invariants(np.ones((1, 2)), [100.0])
    out = l1_postprocess([42.0, 61.0], inv)
    assert out.sum() == pytest.approx(100.0)
    assert np.abs(out - [42.0, 61.0]).sum() == pytest.approx(3.0)  # the L1 minimum


def test_nonnegative_l2_projection_is_the_constrained_minimiser(rng):
    x = datasets.congenial_sex_by_age().to_numpy().ravel().astype(float)
    inv = sex_by_age_invariants().of(x.reshape(2, 23))
    m = x + rng.laplace(scale=2.0, size=(5, 46))
    out = l2_postprocess(m, inv, "nonnegative")
    C = inv.matrix
    for row, mrow in zip(out, m, strict=True):
        assert row.min() >= -1e-9
        np.testing.assert_allclose(C @ row, inv.values, atol=1e-7)
        ref = optimize.minimize(
            lambda s, mrow=mrow: 0.5 * np.sum((s - mrow) ** 2),
            np.maximum(mrow, 0),
            jac=lambda s, mrow=mrow: s - mrow,
            constraints=[{"type": "eq", "fun": lambda s: C @ s - inv.values}],
            bounds=[(0, None)] * 46,
            method="SLSQP",
            options={"ftol": 1e-12, "maxiter": 500},
        )
        assert np.sum((row - mrow) ** 2) <= np.sum((ref.x - mrow) ** 2) + 1e-6


def test_inequalities_object():
    ineq = LinearInequalities.nonnegative(3)
    assert ineq.matrix.shape == (3, 3)
    with pytest.raises(ValueError, match="`inequalities.matrix` must be 2-D"):
        LinearInequalities(np.ones(3), np.zeros(3))


# --- simulation only; one ConvergenceWarning (issue 10, item 2) ----------------------


def test_secure_is_refused_with_the_secure_alternatives():
    with pytest.raises(
        InvariantDPError,
        match=r"`secure=True`: conditional_release has no exact sampler.*"
        r"discrete_laplace_mechanism\(x, \.\.\., secure=True\).*discrete_gaussian_mechanism",
    ):
        conditional_release([30, 70], "discrete_laplace", TOTAL2, epsilon=1.0, secure=True)
    with pytest.raises(TypeError, match="`secure` must be None, True or False"):
        conditional_release([30, 70], "laplace", TOTAL2, epsilon=1.0, secure="no")


@pytest.mark.parametrize(
    "mechanism, kw",
    [
        ("laplace", {"epsilon": 1.0}),
        ("discrete_laplace", {"epsilon": 1.0}),
        ("gaussian", {"mu": 1.0}),
    ],
)
def test_conditional_releases_are_marked_as_simulations(mechanism, kw):
    res = quiet(x=[30, 70], mechanism=mechanism, invariants=TOTAL2, draws=5, rng=2, **kw)
    rel = res
    assert isinstance(rel, Release)
    assert rel.simulation and rel.metadata["randomness"] == "simulation"
    assert rel.metadata["method"] == res.method
    assert Release.from_json(rel.to_json()).simulation


def test_convergence_warning_is_the_package_class():
    # one class package-wide, at home in invariantdp.exceptions; the old paths warn
    import invariantdp.exceptions
    import invariantdp.mechanisms as M

    assert ConvergenceWarning is invariantdp.exceptions.ConvergenceWarning
    assert issubclass(ConvergenceWarning, UserWarning)
    with pytest.warns(DeprecationWarning, match=r"invariantdp\.exceptions\.ConvergenceWarning"):
        assert M.ConvergenceWarning is ConvergenceWarning


# --- one package, PyMC's names for MCMC settings, exact integer moves (issue 11) ----------

GIBBS3 = dict(
    x=[3, 4, 5],
    mechanism="discrete_laplace",
    invariants=Invariants(np.ones((1, 3))),
    inequalities="nonnegative",
    epsilon=0.5,
    sampler="gibbs",
    warn=False,
)


def test_old_mcmc_names_warn_at_the_caller_and_give_the_same_draws():
    new = conditional_release(**GIBBS3, draws=20, chains=3, tune=5, rng=1)
    with pytest.warns(DeprecationWarning) as rec:
        old = conditional_release(**GIBBS3, n_draws=20, n_chains=3, n_tune=5, rng=1)
    assert sorted(str(w.message) for w in rec) == [
        f"the argument `{old}` of conditional_release() is deprecated and will be removed in "
        f"invariantdp 0.3.0; use `{new}`."
        for old, new in (("n_chains", "chains"), ("n_draws", "draws"), ("n_tune", "tune"))
    ]
    assert {w.filename for w in rec} == {__file__}
    assert new.draws.shape == (3, 20, 3)
    np.testing.assert_array_equal(old.draws, new.draws)
    with pytest.raises(TypeError, match=r"both `n_draws` \(deprecated\) and `draws`"):
        conditional_release(**GIBBS3, draws=5, n_draws=5)


def test_diagnostics_carry_the_new_names_and_keep_the_old_ones():
    d = conditional_release(**GIBBS3, draws=30, chains=2, tune=7, thin=2, rng=0).diagnostics
    assert (d.sampler, d.chains, d.draws, d.tune, d.thin) == ("gibbs", 2, 30, 7, 2)
    for old, new in (("n_chains", 2), ("n_draws", 30), ("n_tune", 7)):
        with pytest.warns(DeprecationWarning, match=f"`{old}` of SamplerDiagnostics"):
            assert getattr(d, old) == new
    assert "2 x 30" in d.summary()


def test_convergence_warning_points_at_the_caller():
    with pytest.warns(ConvergenceWarning, match="increase draws/tune") as rec:
        with pytest.warns(SimulationWarning, match="conditional_release drew its noise"):
            conditional_release(**{**GIBBS3, "warn": True, "sampler": "mis"}, draws=10, chains=2)
    # both point at this line, past the renamed_keywords wrapper
    assert {w.filename for w in rec} == {__file__}


def test_integer_moves_are_exact_for_large_invariant_coefficients():
    # the class-level circuits have denominators above 10**6: read back from floats with
    # limit_denominator(10**6) they were moves off the kernel and the chain left the
    # invariants (by thousands); they are now computed in exact rational arithmetic
    C = np.array([[1.0, 1_000_003.0, 0.0], [0.0, 0.0, 1.0]])
    x = np.array([5, 7, 3])
    res = conditional_release(
        x, "discrete_gaussian", Invariants(C), rho=1e-16, sampler="gibbs", draws=50, chains=2,
        warn=False, rng=0,
    )  # fmt: skip
    d = res.draws.reshape(-1, 3)
    np.testing.assert_array_equal(d @ C.T, np.tile(C @ x, (len(d), 1)))
    assert np.ptp(d[:, 0]) > 0 and np.ptp(d[:, 1]) > 0  # the chain moved


def test_public_import_paths_keep_working():
    # the congenial names are at home in invariantdp.mechanisms; the old module path
    # (0.1.0) still gives them, each read with a DeprecationWarning, the same objects
    import invariantdp.mechanisms as M
    import invariantdp.mechanisms.congenial as congenial

    names = (
        "ConditionalRelease", "LinearInequalities", "SamplerDiagnostics",
        "conditional_release", "l1_postprocess", "l1_privacy_level", "l2_postprocess",
    )  # fmt: skip
    assert set(names) <= set(M.__all__)
    for name in names:
        with pytest.warns(DeprecationWarning, match=r"module invariantdp\.mechanisms\.congenial"):
            assert getattr(M, name) is getattr(congenial, name)
    assert M.conditional_release.__module__ == "invariantdp.mechanisms._congenial._conditional"


def test_conditional_release_is_a_release_and_saves_as_one(tmp_path):
    res = quiet(x=[30, 70], mechanism="laplace", invariants=TOTAL2, epsilon=1.0, draws=5, rng=2)
    assert isinstance(res, Release) and res.mechanism == "conditional_laplace"
    assert res.draws.shape == (4, 5, 2) and res.method == "exact"
    loaded = Release.load(res.save(tmp_path / "r.json"))
    assert type(loaded) is Release and loaded == res
    np.testing.assert_array_equal(loaded.value, res.value)
    assert "ConditionalRelease(method='exact'" in repr(res)


def test_conditional_release_attribute_release_is_deprecated():
    res = quiet(x=[30, 70], mechanism="laplace", invariants=TOTAL2, epsilon=1.0, draws=5, rng=2)
    with pytest.warns(DeprecationWarning, match=r"`ConditionalRelease.release` is deprecated"):
        part = res.release
    assert type(part) is Release and part == res


@pytest.mark.parametrize("mechanism", ["poisson", ["laplace"]])
def test_unknown_mechanism_is_refused_by_name(mechanism):
    with pytest.raises(
        InvariantDPError, match=r"`mechanism` \(.*\) must be one of .*'discrete_laplace'"
    ):
        conditional_release([30, 70], mechanism, TOTAL2, epsilon=1.0)


def test_double_geometric_is_the_deprecated_name_of_the_discrete_laplace():
    # Gong & Meng's double geometric mechanism: one name per mechanism (the registry's)
    new = quiet(x=[30, 70], mechanism="discrete_laplace", invariants=TOTAL2, epsilon=1.0, rng=4)
    with pytest.warns(DeprecationWarning, match="'double_geometric' .* use 'discrete_laplace'"):
        old = quiet(x=[30, 70], mechanism="double_geometric", invariants=TOTAL2, epsilon=1.0, rng=4)
    assert old == new and old.mechanism == "conditional_discrete_laplace"
    assert np.array_equal(old.draws, new.draws)


@pytest.mark.parametrize(
    "mechanism, missing",
    [("discrete_laplace", "epsilon"), ("gaussian", "mu"), ("discrete_gaussian", "rho")],
)
def test_the_privacy_parameter_of_the_mechanism_is_required(mechanism, missing):
    with pytest.raises(
        InvariantDPError, match=rf"`{missing}` \(.*\) is required for the {mechanism}"
    ):
        conditional_release([30, 70], mechanism, TOTAL2)


def test_sampler_diagnostics_are_computed_once():
    res = quiet(x=[30, 70], mechanism="laplace", invariants=TOTAL2, epsilon=1.0, draws=5, rng=2)
    d = res.diagnostics
    first = (d.ess_min, d.rhat_max, d.ess_per_second, d.ok)
    assert {"ess_min", "rhat_max", "ess_per_second", "ok"} <= set(vars(d))  # cached
    assert (d.ess_min, d.rhat_max, d.ess_per_second, d.ok) == first


def test_conditional_release_shows_a_progress_bar_only_when_asked(capsys):
    from invariantdp.invariants import totals

    inv = totals([0, 0, 0])
    x = np.array([5.0, 6.0, 7.0])
    kw = dict(epsilon=1.0, rng=0, warn=False, draws=20, tune=5, sampler="gibbs")
    conditional_release(x, "laplace", inv, progress=True, **kw)
    assert "conditional_release" in capsys.readouterr().err
    conditional_release(x, "laplace", inv, progress=False, **kw)
    assert capsys.readouterr().err == ""
    with pytest.raises(TypeError, match="`progress` must be True, False or None"):
        conditional_release(x, "laplace", inv, epsilon=1.0, rng=0, progress="yes")
