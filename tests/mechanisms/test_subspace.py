"""Projected and extended mechanisms under linear invariants (Gao, Gong & Yu)."""

import numpy as np
import pytest

from invariantdp import InvariantDPError, Release
from invariantdp.invariants import Invariants, nested_totals, one_way_margins, totals
from invariantdp.mechanisms import (
    distributed_privatize,
    extended_gaussian,
    extended_laplace,
    projected_gaussian,
    projected_laplace,
)

from ._simulation import simulation_unless_seeded

STATE = np.repeat([0, 1, 2], [4, 3, 5])
COUNTY = np.array([0, 0, 1, 1, 0, 1, 1, 0, 0, 1, 2, 2])
INVARIANTS = {
    "totals": totals(STATE),
    "nested": nested_totals([STATE, COUNTY]),
    "margins": one_way_margins((3, 4)),
    "general": Invariants(
        np.array([[1.0, 2.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 3.0, 0.0, 1.0]])
    ),
}
MECHS = {
    "projected_gaussian": lambda x, inv, rng: projected_gaussian(x, inv, mu=0.5, rng=rng),
    "projected_gaussian-eps": lambda x, inv, rng: projected_gaussian(
        x, inv, epsilon=1.0, delta=1e-6, rng=rng
    ),
    "extended_gaussian": lambda x, inv, rng: extended_gaussian(x, inv, mu=0.5, rng=rng),
    "projected_laplace": lambda x, inv, rng: projected_laplace(x, inv, epsilon=0.5, rng=rng),
    "extended_laplace": lambda x, inv, rng: extended_laplace(x, inv, epsilon=0.5, rng=rng),
}


def _data(inv, scale=1.0):
    return np.arange(1.0, inv.n_cells + 1).reshape(inv.shape) * scale


@pytest.mark.parametrize("mech", MECHS)
@pytest.mark.parametrize("kind", INVARIANTS)
def test_invariants_hold_in_every_draw_and_seed_reproduces(mech, kind):
    inv = INVARIANTS[kind]
    x = _data(inv, scale=1e7)  # counts up to 1e8
    gen = np.random.default_rng(7)
    for _ in range(20):
        r = MECHS[mech](x, inv, gen)
        got, want = inv.apply(r.value), inv.apply(x)
        assert np.all(np.abs(got - want) <= 1e-9 * np.maximum(1.0, np.abs(want)))
    a, b = MECHS[mech](x, inv, 3), MECHS[mech](x, inv, 3)
    assert a == b
    back = Release.from_json(a.to_json())
    assert back == a
    assert back.noise.distribution().intrinsic_dim == inv.n_cells - inv.rank


@pytest.mark.parametrize("kind", ["nested", "general"])
@pytest.mark.parametrize("construction", ["projected", "extended"])
def test_gaussian_covariance_is_sigma2_projector(kind, construction):
    inv = INVARIANTS[kind]
    mech = projected_gaussian if construction == "projected" else extended_gaussian
    x, mu, m = _data(inv), 0.5, 4000
    gen = np.random.default_rng(11)
    noise = np.array([mech(x, inv, mu=mu, rng=gen).value - x for _ in range(m)]).reshape(m, -1)
    exact = (1.0 / mu) ** 2 * inv.projector()
    emp = noise.T @ noise / m
    se = np.sqrt((np.diag(exact)[:, None] * np.diag(exact)[None, :] + exact**2) / m)
    assert np.all(np.abs(emp - exact) <= 4.5 * se + 1e-12)
    # Cor. 14 / 15: E||noise||^2 = (n - n_c) sigma^2
    sq = (noise**2).sum(1)
    mse = (inv.n_cells - inv.rank) / mu**2
    assert abs(sq.mean() - mse) < 4 * sq.std() / np.sqrt(m)


def test_extended_uses_null_space_sensitivity():
    inv = INVARIANTS["totals"]
    x = _data(inv)
    # difference vectors of the histogram under bounded DP: e_i - e_j
    n = inv.n_cells
    i, j = np.triu_indices(n, 1)
    S = np.zeros((i.size, n))
    S[np.arange(i.size), i], S[np.arange(i.size), j] = 1.0, -1.0
    pg = projected_gaussian(x, inv, mu=1.0, sensitivity=S, rng=0)
    eg = extended_gaussian(x, inv, mu=1.0, sensitivity=S, rng=0)
    assert pg.metadata["sensitivity"] == pytest.approx(np.sqrt(2.0))
    assert eg.metadata["sensitivity"] <= pg.metadata["sensitivity"] + 1e-12
    law_p, law_e = pg.noise.distribution(), eg.noise.distribution()
    assert law_e.expected_squared_error() <= law_p.expected_squared_error() + 1e-12
    assert law_p.expected_squared_error() == pytest.approx(2.0 * (n - inv.rank))
    # an invariant direction has zero null-space sensitivity and is ignored
    S2 = np.vstack([S[:1], np.ones(n)])
    eg2 = extended_gaussian(x, inv, mu=1.0, sensitivity=S2, rng=0)
    assert eg2.metadata["sensitivity"] == pytest.approx(np.sqrt(2.0))


def test_projection_equals_conditioning_theorem_22():
    # Theorem 22: Pi_N e has the law of e | C(x + e) = Cx for spherical Gaussian e
    C = np.array([[1.0, 1.0, 1.0], [1.0, -1.0, 0.0]])
    inv = Invariants(C)
    sigma = 1.0
    # exact: the Gaussian conditional covariance by the Schur complement
    joint = np.block([[np.eye(3), C.T], [C, C @ C.T]]) * sigma**2
    cond = joint[:3, :3] - joint[:3, 3:] @ np.linalg.solve(joint[3:, 3:], joint[3:, :3])
    np.testing.assert_allclose(cond, sigma**2 * inv.projector(), atol=1e-12)
    # Monte Carlo: condition unconstrained draws on |C e| < h, compare with projected draws
    gen = np.random.default_rng(5)
    e = gen.standard_normal((2_000_000, 3))
    keep = np.all(np.abs(e @ C.T) < 0.08, axis=1)
    conditioned = e[keep]
    x = np.zeros(3)
    projected = np.array([projected_gaussian(x, inv, mu=1.0, rng=gen).value for _ in range(3000)])
    for sample in (conditioned, projected):
        emp = sample.T @ sample / sample.shape[0]
        exact = inv.projector()
        se = np.sqrt((np.diag(exact)[:, None] * np.diag(exact)[None, :] + exact**2) / len(sample))
        assert np.all(np.abs(emp - exact) < 4.5 * se + 5e-3)
    assert conditioned.shape[0] > 1000


@pytest.mark.parametrize(
    "mech", ["projected_gaussian", "extended_gaussian", "projected_laplace", "extended_laplace"]
)
def test_distributed_privatization_reproduces_central_release(mech):
    inv = INVARIANTS["nested"]
    x = _data(inv)
    params = {"mu": 0.5} if "gaussian" in mech else {"epsilon": 0.5}
    central = MECHS[mech](x, inv, 99).value.reshape(-1)
    agents = [np.arange(0, 5), np.arange(5, 9), np.arange(9, 12)]
    parts = [
        distributed_privatize(x.reshape(-1)[c], c, inv, mechanism=mech, seed=99, **params)
        for c in agents
    ]
    np.testing.assert_array_equal(np.concatenate(parts), central)


def test_noise_law_density():
    inv = INVARIANTS["margins"]
    r = projected_gaussian(_data(inv), inv, mu=1.0, rng=0)
    law = Release.from_json(r.to_json()).noise.distribution()
    noise = r.value - _data(inv)
    s = inv.n_cells - inv.rank
    expected = -0.5 * s * np.log(2 * np.pi) - 0.5 * np.sum(noise**2)
    assert law.logpdf(noise) == pytest.approx(expected)
    assert law.logpdf(np.ones(inv.shape)) == -np.inf
    np.testing.assert_allclose(law.var().ravel(), np.diag(law.cov()))
    with pytest.raises(InvariantDPError, match="no closed-form density"):
        projected_laplace(_data(inv), inv, epsilon=1.0, rng=0).noise.distribution().logpdf(noise)


def test_large_nested_release_is_fast():
    n = 200_000
    state = np.repeat(np.arange(20), n // 20)
    county = np.repeat(np.arange(500), n // 500)
    inv = nested_totals([state, county])
    x = np.random.default_rng(0).integers(0, 1000, size=n).astype(float)
    r = projected_gaussian(x, inv, mu=1.0, rng=1)
    inv.of(x).check(r.value)


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: projected_gaussian([1.0, 2.0, 3.0], totals([0, 0, 1]).of([1, 1, 3]), mu=1.0),
            "`invariants` are inconsistent with the data",
        ),
        (lambda: projected_gaussian([1.0, 2.0], totals([0, 0, 1]), mu=1.0), "`x` must have shape"),
        (lambda: projected_laplace([1.0, np.nan, 2], totals([0, 0, 1]), epsilon=1.0), "finite"),
        (lambda: projected_gaussian([1.0, 2.0], totals([0, 1]), mu=1.0), "nothing is left"),
        (
            lambda: extended_gaussian([1.0, 2.0, 3.0], totals([0, 0, 1]), epsilon=1, delta=2.0),
            r"`delta` \(2.0\) must be in \[0, 1\)",
        ),
        (
            lambda: extended_laplace([1.0, 2.0, 3.0], totals([0, 0, 1]), epsilon=-1),
            r"`epsilon` \(-1.0\) must be > 0",
        ),
        (
            lambda: distributed_privatize([1.0], [0], totals([0, 0]), mechanism="x", seed=1),
            "`mechanism`",
        ),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(InvariantDPError, match=match):
        call()


def test_invariants_type_is_checked():
    with pytest.raises(TypeError, match="`invariants` must be an Invariants"):
        projected_gaussian([1.0, 2.0], np.ones((1, 2)), mu=1.0)


# --- simulation only (issue 10, item 2) ----------------------------------------------

SUBSPACE = {
    "projected_gaussian": (projected_gaussian, {"mu": 1.0}),
    "projected_laplace": (projected_laplace, {"epsilon": 1.0}),
    "extended_gaussian": (extended_gaussian, {"mu": 1.0}),
    "extended_laplace": (extended_laplace, {"epsilon": 1.0}),
}


@pytest.mark.parametrize("name", SUBSPACE)
def test_secure_is_refused_with_the_secure_alternatives(name):
    mech, kw = SUBSPACE[name]
    with pytest.raises(
        InvariantDPError,
        match=rf"`secure=True`: {name} has no exact sampler.*"
        r"discrete_laplace_mechanism\(x, \.\.\., secure=True\).*discrete_gaussian_mechanism",
    ):
        mech([1.0, 2.0, 3.0], totals([0, 0, 0]), secure=True, **kw)
    with pytest.raises(TypeError, match="`secure` must be None, True or False"):
        mech([1.0, 2.0, 3.0], totals([0, 0, 0]), secure=1, **kw)


@pytest.mark.parametrize("name", SUBSPACE)
@pytest.mark.parametrize("rng", [None, 11])
def test_releases_are_marked_as_simulations(name, rng):
    mech, kw = SUBSPACE[name]
    with simulation_unless_seeded(rng, name):
        r = mech([1.0, 2.0, 3.0], totals([0, 0, 0]), rng=rng, **kw)
    assert r.simulation and r.metadata["randomness"] == "simulation"
    assert Release.from_json(r.to_json()).simulation


def test_distributed_privatize_refuses_secure():
    # the shared seed is the algorithm: every agent can reproduce the noise
    with pytest.raises(
        InvariantDPError, match=r"distributed_privatize \(its noise comes from a seed shared"
    ):
        distributed_privatize(
            [1.0], [0], totals([0, 0]), mechanism="projected_gaussian", seed=1, mu=1.0, secure=True
        )
