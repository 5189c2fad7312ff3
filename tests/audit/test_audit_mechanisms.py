"""Empirical privacy audits of every mechanism, and of deliberately broken variants.

Each correct mechanism must pass the audit of its own claim; each broken
variant (noise scale halved, projection onto the wrong subspace, swap rate
misreported) must be caught.  Seeds are fixed, so the verdicts are
deterministic.

The floating-point mechanisms (``laplace``, ``gaussian``, ``tulap``, ``knorm``,
``semi_dp_*``, ``projected_*``, ``extended_*`` and the continuous conditional
release, all with ``secure=False``) are simulations: their low-order bits
leak (the ``"lattice"`` statistic fails them, see ``test_audit_leaks.py``), so
here their noise *scale* is audited with the threshold statistic alone
(``statistics=SCALE``).  Mechanisms with exact integer outputs get the full
default audit, lattice and exact-value tests included.

Scalar and block-structured mechanisms are audited with a *batched*
sampler: the mechanism applied once to ``n`` copies of the query (independent
noise per copy; for the subspace mechanisms one invariant total
per block of cells, so the projection is block-diagonal and the blocks are
independent releases of the small mechanism).
"""

import numpy as np
import pandas as pd
import pytest

from invariantdp import Invariants
from invariantdp.audit import (
    audit_mechanism,
    likelihood_ratio_statistic,
    neighbour_from_space,
    projection_statistic,
)
from invariantdp.distributions import KNormNoise, SubspaceNoise
from invariantdp.invariants import totals
from invariantdp.mechanisms import (
    conditional_release,
    discrete_gaussian_mechanism,
    discrete_laplace_mechanism,
    extended_gaussian,
    extended_laplace,
    gaussian_mechanism,
    knorm,
    laplace_mechanism,
    permutation_swap,
    projected_gaussian,
    projected_laplace,
    semi_dp_gaussian,
    semi_dp_knorm,
    tulap_mechanism,
)
from invariantdp.privacy import eps_delta, swapping_epsilon, zcdp_tradeoff
from invariantdp.privacy import gaussian_tradeoff as gdp
from invariantdp.sensitivity import contingency_sensitivity_space

N = 20_000  # releases per input for the batched audits
SCALE = ("threshold",)  # the noise scale of a floating-point simulation


def _passes(res):
    assert res.passed, res.summary()
    return res


def _caught(res):
    assert not res.passed, res.summary()
    assert res.significant_violation > 0
    return res


# ---------------------------------------------------------------------------
# scalar additive mechanisms (batched: n copies of one count)
# ---------------------------------------------------------------------------


def _copies(mech, **kw):
    return lambda t, n, rng: mech(np.full(n, t), rng=rng, **kw).value


ALL = ("threshold", "lattice", "value")  # the default statistics

SCALAR = {
    "laplace": (laplace_mechanism, {"epsilon": 1.0}, {"epsilon": 2.0}, eps_delta(1.0), SCALE),
    "gaussian": (gaussian_mechanism, {"mu": 1.0}, {"mu": 2.0}, gdp(1.0), SCALE),
    "tulap": (
        tulap_mechanism,
        {"epsilon": 1.0, "delta": 0.01},
        {"epsilon": 2.0},
        eps_delta(1.0, 0.01),
        SCALE,
    ),
    "discrete_laplace": (
        discrete_laplace_mechanism,
        {"epsilon": 1.0},
        {"epsilon": 2.0},
        eps_delta(1.0),
        ALL,
    ),
    # the discrete Gaussian is rho-zCDP, not G_{1/sigma}-DP: audit the implied curve
    "discrete_gaussian": (
        discrete_gaussian_mechanism,
        {"rho": 0.125},
        {"rho": 0.5},
        zcdp_tradeoff(0.125),
        ALL,
    ),
}


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_scalar_mechanism_passes_and_halved_noise_is_caught(name):
    mech, good, broken, claim, statistics = SCALAR[name]
    res = _passes(
        audit_mechanism(
            _copies(mech, **good),
            3,
            4,
            claimed=claim,
            statistics=statistics,
            n_samples=N,
            rng=1,
            batched=True,
        )
    )
    # one component per statistic when there are several
    assert tuple(c.statistic for c in res.components) == (statistics if len(statistics) > 1 else ())
    # the broken variant draws noise of half the scale but keeps the claim
    res = _caught(
        audit_mechanism(
            _copies(mech, **broken),
            3,
            4,
            claimed=claim,
            statistics=statistics,
            n_samples=N,
            rng=2,
            batched=True,
        )
    )
    # a wrong scale is a threshold-statistic finding, not a low-order-bit one
    assert res.statistic == "threshold"


def test_gaussian_calibrated_from_epsilon_delta_passes_its_own_claim():
    rel = gaussian_mechanism([0.0], epsilon=1.0, delta=1e-5, rng=0)  # the simulation audited
    claim = rel.guarantee.tradeoff()
    _passes(
        audit_mechanism(
            _copies(gaussian_mechanism, epsilon=1.0, delta=1e-5),
            0,
            1,
            claimed=claim,
            statistics=SCALE,
            n_samples=N,
            rng=3,
            batched=True,
        )
    )


def test_release_claim_is_used_by_default():
    """Unbatched: the claim comes from each Release's guarantee (zCDP included)."""
    res = audit_mechanism(
        lambda t, rng: discrete_gaussian_mechanism([t], rho=0.125, rng=rng),
        3,
        4,
        n_samples=500,
        rng=4,
    )
    _passes(res)
    assert "zcdp" in res.claim


# ---------------------------------------------------------------------------
# K-norm and semi-DP mechanisms (one release per call)
# ---------------------------------------------------------------------------

S3 = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [1.0, 0.0, -1.0]])


@pytest.mark.parametrize("eps_used, passes", [(1.0, True), (2.0, False)])
def test_knorm(eps_used, passes):
    x = np.array([5.0, 5.0, 5.0])
    x_prime = x + S3[0]  # ||v||_K = 1: neighbours at the K-norm sensitivity
    lr = likelihood_ratio_statistic(KNormNoise("polytope", 3, 1.0, S3).logpdf, x, x_prime)
    res = audit_mechanism(
        lambda t, rng: knorm(t, S3, epsilon=eps_used, rng=rng),
        x,
        x_prime,
        claimed=eps_delta(1.0),
        statistic=lr,
        statistics=SCALE,
        n_samples=5000,
        rng=5,
    )
    (_passes if passes else _caught)(res)


TABLE = np.array([[10, 4, 6], [3, 8, 9]])
SPACE = contingency_sensitivity_space(2, 3)


@pytest.mark.parametrize("mu_used, passes", [(1.0, True), (2.0, False)])
def test_semi_dp_gaussian(mu_used, passes):
    x_prime = neighbour_from_space(TABLE, SPACE, p=2)
    res = audit_mechanism(
        lambda t, rng: semi_dp_gaussian(t, mu=mu_used, rng=rng),
        TABLE,
        x_prime,
        claimed=gdp(1.0),  # the claim of the correct mechanism (mu = 1, a(t) = 3)
        statistics=SCALE,
        n_samples=5000,
        rng=6,
    )
    (_passes if passes else _caught)(res)


@pytest.mark.parametrize("eps_used, passes", [(1.0, True), (2.0, False)])
def test_semi_dp_knorm(eps_used, passes):
    x_prime = neighbour_from_space(TABLE, SPACE, p=np.inf)
    lr = likelihood_ratio_statistic(KNormNoise("polytope", 6, 1.0, SPACE).logpdf, TABLE, x_prime)
    res = audit_mechanism(
        lambda t, rng: semi_dp_knorm(t, epsilon=eps_used, rng=rng),
        TABLE,
        x_prime,
        claimed=eps_delta(1.0),
        statistic=lr,
        statistics=SCALE,
        n_samples=5000,
        rng=7,
    )
    (_passes if passes else _caught)(res)


def test_semi_dp_default_claim_and_statistic():
    """Without `claimed`/`statistic`: the release's GDP claim and the projection on x' - x."""
    x_prime = neighbour_from_space(TABLE, SPACE, p=2)
    res = audit_mechanism(
        lambda t, rng: semi_dp_gaussian(t, mu=0.5, rng=rng),
        TABLE,
        x_prime,
        statistics=SCALE,
        n_samples=4000,
        rng=8,
    )
    _passes(res)
    assert "mu=0.5" in res.claim


# ---------------------------------------------------------------------------
# projected / extended mechanisms under a total (batched over blocks)
# ---------------------------------------------------------------------------

BLOCK = np.array([40.0, 25.0, 35.0])
V = np.array([1.0, 0.0, -1.0])  # a record moves from cell 3 to cell 1: the total is kept
PAIRS = (np.eye(3)[:, None, :] - np.eye(3)[None, :, :]).reshape(9, 3)
PAIRS = PAIRS[np.abs(PAIRS).sum(axis=1) > 0]  # all e_i - e_j: bounded-DP differences


def _blocks(mech, block_labels=None, **kw):
    """``mech`` on n blocks of 3 cells, each block with its own invariant total."""

    def run(t, n, rng):
        labels = np.repeat(np.arange(n), 3) if block_labels is None else block_labels(n)
        out = mech(np.tile(t, n), totals(labels), rng=rng, **kw)
        return np.asarray(out.value).reshape(n, 3)

    return run


def _wrong_projection(base):
    """Broken: the noise is projected on the null space of the wrong invariants.

    It fixes the total of cells 1-2 and cell 3 (labels 0, 0, 1 per block)
    instead of the total of the block, so the neighbour direction (1, 0, -1)
    keeps a noise-free component.
    """

    def mech(x, invariants, *, rng, **kw):
        n = x.size // 3
        wrong = totals(np.repeat(np.arange(n), 3) * 2 + np.tile([0, 0, 1], n))
        gen = np.random.default_rng(rng)
        scale = kw["scale"]
        e = gen.normal(0, scale, x.size) if base == "gaussian" else gen.laplace(0, scale, x.size)
        return type("R", (), {"value": x + wrong.project(e)})()

    return mech


@pytest.mark.parametrize(
    "mech, kw, claim",
    [
        (projected_gaussian, {"mu": 1.0, "sensitivity": np.sqrt(2.0)}, gdp(1.0)),
        (extended_gaussian, {"mu": 1.0, "sensitivity": np.sqrt(2.0)}, gdp(1.0)),
        (projected_laplace, {"epsilon": 1.0, "sensitivity": 2.0}, eps_delta(1.0)),
    ],
    ids=["projected_gaussian", "extended_gaussian", "projected_laplace"],
)
def test_subspace_mechanisms_pass(mech, kw, claim):
    _passes(
        audit_mechanism(
            _blocks(mech, **kw),
            BLOCK,
            BLOCK + V,
            claimed=claim,
            statistics=SCALE,
            n_samples=N,
            rng=9,
            batched=True,
        )
    )


def test_projected_gaussian_halved_noise_is_caught():
    run = _blocks(projected_gaussian, mu=2.0, sensitivity=np.sqrt(2.0))
    _caught(
        audit_mechanism(
            run,
            BLOCK,
            BLOCK + V,
            claimed=gdp(1.0),
            statistics=SCALE,
            n_samples=N,
            rng=10,
            batched=True,
        )
    )


@pytest.mark.parametrize(
    "base, scale, claim",
    [("gaussian", np.sqrt(2.0), gdp(1.0)), ("laplace", 2.0, eps_delta(1.0))],
)
def test_projection_onto_the_wrong_subspace_is_caught(base, scale, claim):
    def run(t, n, rng):
        mech = _wrong_projection(base)
        return mech(np.tile(t, n), None, rng=rng, scale=scale).value.reshape(n, 3)

    res = _caught(
        audit_mechanism(
            run,
            BLOCK,
            BLOCK + V,
            claimed=claim,
            statistic=projection_statistic(V),
            statistics=SCALE,
            n_samples=N,
            rng=11,
            batched=True,
        )
    )
    # the noise-free component makes the violation large, not a sampling artefact
    assert res.max_violation > 0.1


@pytest.mark.parametrize("eps_used, passes", [(1.0, True), (2.0, False)])
def test_extended_laplace(eps_used, passes):
    inv = totals([0, 0, 0])
    # the worst bounded-DP neighbour in the null-space coordinates of Q_N
    W = inv.null_space_coordinates(PAIRS).reshape(len(PAIRS), -1)
    v = PAIRS[int(np.argmax(np.abs(W).sum(axis=1)))]
    scale = float(np.abs(W).sum(axis=1).max())  # Delta_1(Q_N^T A) / epsilon at epsilon = 1
    # per block: the sensitivity of Q_N^T A over all bounded-DP differences
    assert (
        scale
        == extended_laplace(BLOCK, inv, epsilon=1.0, sensitivity=PAIRS, rng=0).metadata[
            "sensitivity"
        ]
    )
    run = _blocks(extended_laplace, epsilon=eps_used, sensitivity=scale)
    lr = likelihood_ratio_statistic(
        SubspaceNoise("laplace", "extended", scale, inv).logpdf, BLOCK, BLOCK + v
    )
    res = audit_mechanism(
        run,
        BLOCK,
        BLOCK + v,
        claimed=eps_delta(1.0),
        statistic=lr,
        statistics=SCALE,
        n_samples=N,
        rng=12,
        batched=True,
    )
    (_passes if passes else _caught)(res)


# ---------------------------------------------------------------------------
# conditional (congenial) release: exact i.i.d. draws from one call
# ---------------------------------------------------------------------------

TOTAL2 = Invariants(np.ones((1, 2)))


def _conditional(mechanism, epsilon):
    def run(t, n, rng):
        res = conditional_release(
            np.asarray(t),
            mechanism,
            TOTAL2,
            epsilon=epsilon,
            sensitivity=2.0,
            sampler="exact",
            draws=n,
            chains=1,
            warn=False,
            rng=rng,
        )
        return res.draws.reshape(n, 2)

    return run


@pytest.mark.parametrize("mechanism", ["discrete_laplace", "laplace"])
def test_conditional_release(mechanism):
    """Two cells with a fixed total: s1 - x1 is Lap(1/epsilon), exactly epsilon-DP.

    Conditioning multiplies the per-cell rate epsilon/2 by two on the line
    s1 + s2 = total, so the recorded guarantee 2 epsilon (Gong & Meng,
    Theorem 2.1 with gamma = 1) holds with room, and so does the tight
    epsilon (gamma = 0 for this fibre).  With the noise scale halved the
    tight claim is violated.
    """
    x, x_prime = np.array([30, 70]), np.array([31, 69])
    rel = conditional_release(x, mechanism, TOTAL2, epsilon=1.0, sensitivity=2.0, draws=2, rng=0)
    assert rel.guarantee.params["epsilon"] == 2.0
    # double-geometric draws are integers: the full audit; Laplace draws are floats
    statistics = ALL if mechanism == "discrete_laplace" else SCALE
    for claim in (rel.guarantee.tradeoff(), eps_delta(1.0)):
        _passes(
            audit_mechanism(
                _conditional(mechanism, 1.0),
                x,
                x_prime,
                claimed=claim,
                statistics=statistics,
                n_samples=N // 4,
                rng=13,
                batched=True,
            )
        )
    _caught(
        audit_mechanism(
            _conditional(mechanism, 2.0),
            x,
            x_prime,
            claimed=eps_delta(1.0),
            statistics=statistics,
            n_samples=N // 4,
            rng=14,
            batched=True,
        )
    )


# ---------------------------------------------------------------------------
# swapping: tiny strata, many copies per call
# ---------------------------------------------------------------------------

STRATA = 4000  # independent copies of the 3-record stratum per call


def _swap_frame(k):
    """``STRATA`` strata, each with records (k[0], l=1), (k[1], l=2), (k[2], l=3)."""
    return pd.DataFrame(
        {
            "stratum": np.repeat(np.arange(STRATA), 3),
            "k": np.tile(k, STRATA),
            "l": np.tile([1, 2, 3], STRATA),
        }
    )


X_SWAP = ["A", "B", "B"]
X_SWAP_PRIME = ["B", "A", "B"]  # same n_jk and n_jl margins, d_HamS = 2


def _swap_sampler(rate, epsilons):
    def run(k, n, rng):
        gen = np.random.default_rng(rng)
        out = []
        for _ in range(n // STRATA):
            swapped, release = permutation_swap(
                _swap_frame(k), swap="k", match="stratum", swap_rate=rate, rng=gen
            )
            epsilons.append(release.guarantee.params["epsilon"])
            # the statistic: does the record with l = 1 hold "A" after swapping?
            out.append((swapped["k"].to_numpy()[0::3] == "A").astype(float))
        return np.concatenate(out)

    return run


def test_swapping_epsilon_of_theorem_5_6_is_audited():
    """b = 3; neighbours at d_HamS = 2, so the claim is 2 epsilon (Theorem 5.6)."""
    eps = []
    run = _swap_sampler(0.5, eps)
    claim_eps = float(swapping_epsilon(3, 0.5))
    res = audit_mechanism(
        run,
        X_SWAP,
        X_SWAP_PRIME,
        claimed=eps_delta(2 * claim_eps),
        n_samples=N,
        rng=15,
        batched=True,
    )
    _passes(res)
    assert set(eps) == {claim_eps}  # the releases report the epsilon audited


def test_misreported_swap_rate_is_caught():
    """Swapping at 5% while reporting the epsilon of a 50% swap rate."""
    claim_eps = float(swapping_epsilon(3, 0.5))
    res = audit_mechanism(
        _swap_sampler(0.05, []),
        X_SWAP,
        X_SWAP_PRIME,
        claimed=eps_delta(2 * claim_eps),
        n_samples=N,
        rng=16,
        batched=True,
    )
    _caught(res)
    # ... while the epsilon of the rate actually used is not violated
    true_eps = float(swapping_epsilon(3, 0.05))
    _passes(
        audit_mechanism(
            _swap_sampler(0.05, []),
            X_SWAP,
            X_SWAP_PRIME,
            claimed=eps_delta(2 * true_eps),
            n_samples=N,
            rng=16,
            batched=True,
        )
    )


# ---------------------------------------------------------------------------
# helpers and bigger runs
# ---------------------------------------------------------------------------


def test_neighbour_from_space_is_invariant_conforming():
    x_prime = neighbour_from_space(TABLE, SPACE, p=2)
    assert np.array_equal(x_prime.sum(axis=0), TABLE.sum(axis=0))
    assert np.array_equal(x_prime.sum(axis=1), TABLE.sum(axis=1))
    assert np.all(x_prime >= 0)
    assert np.linalg.norm((x_prime - TABLE).ravel()) == 2.0


def test_zcdp_tradeoff_is_below_the_gaussian_curve():
    """The Gaussian mechanism with mu = sqrt(2 rho) is rho-zCDP: the implied curve is lower."""
    alpha = np.linspace(0.0, 1.0, 2001)
    for rho in (0.05, 0.5, 3.0):
        assert np.all(zcdp_tradeoff(rho)(alpha) <= gdp(np.sqrt(2 * rho))(alpha) + 1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCALAR))
def test_scalar_mechanisms_large_audit(name):
    mech, good, _, claim, statistics = SCALAR[name]
    _passes(
        audit_mechanism(
            _copies(mech, **good),
            3,
            4,
            claimed=claim,
            statistics=statistics,
            n_samples=200_000,
            rng=21,
            batched=True,
        )
    )


@pytest.mark.slow
def test_semi_dp_knorm_large_audit_3x3():
    table = np.array([[9, 4, 6], [3, 8, 9], [5, 5, 5]])
    space = contingency_sensitivity_space(3, 3)
    x_prime = neighbour_from_space(table, space, p=np.inf)
    lr = likelihood_ratio_statistic(KNormNoise("polytope", 9, 1.0, space).logpdf, table, x_prime)
    _passes(
        audit_mechanism(
            lambda t, rng: semi_dp_knorm(t, epsilon=1.0, rng=rng),
            table,
            x_prime,
            claimed=eps_delta(1.0),
            statistic=lr,
            statistics=SCALE,
            n_samples=40_000,
            rng=22,
        )
    )
