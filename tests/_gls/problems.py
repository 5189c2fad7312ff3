"""Random GLS problems with a known truth, for the reference tests."""

from __future__ import annotations

import numpy as np

from invariantdp._gls import Equality, Linear, Measurement, Problem, Zeros

from .kkt import leaf_indicators, query_matrix


def random_tree(rng, roots: int, fan: tuple, allow_leaves: bool = True):
    """``(parents, sizes)``: each unit has 0..f children (0 only with ``allow_leaves``)."""
    sizes, parents = [roots], [np.full(roots, -1)]
    for f in fan:
        n = sizes[-1]
        low = 0 if allow_leaves and rng.random() < 0.3 else 1
        cnt = rng.integers(low, f + 1, size=n)
        cnt[0] = max(cnt[0], 1)
        parents.append(np.repeat(np.arange(n), cnt))
        sizes.append(int(cnt.sum()))
    return parents, sizes


def random_problem(
    rng,
    shape=(2, 3),
    fan=(3, 2, 3),
    roots=1,
    p_missing=0.0,
    n_zero=1,
    n_linear=1,
    n_invariant=1,
    per_cell=False,
    allow_leaves=True,
):
    """A problem whose invariants and zeros hold for a Poisson truth; noise N(0, variance).

    Queries: total, each one-way, detailed (and the first two-way for d > 2),
    each missing with probability ``p_missing`` per unit.  Always a state
    (root) total invariant; ``n_invariant`` random whole-query invariants,
    ``n_zero`` structural zeros and ``n_linear`` non-query equalities at random
    units.  Returns ``(problem, truth per level)``.
    """
    parents, sizes = random_tree(rng, roots, fan, allow_leaves)
    d, k = len(shape), int(np.prod(shape))
    ind, n_leaves = leaf_indicators(parents, sizes)
    x = rng.poisson(5, size=(n_leaves, k)).astype(float)
    zeros = []
    for _ in range(n_zero):
        lev = int(rng.integers(len(sizes)))
        u = int(rng.integers(sizes[lev]))
        attrs = tuple(sorted(rng.choice(d, size=int(rng.integers(1, d + 1)), replace=False)))
        q = query_matrix(shape, attrs)
        mask = np.zeros((1, q.shape[0]), dtype=bool)
        mask[0, int(rng.integers(q.shape[0]))] = True
        zeros.append(Zeros(lev, attrs, np.array([u]), mask))
        x[np.ix_(ind[lev][u] > 0, q[mask[0]].sum(axis=0) > 0)] = 0.0
    hist = [ind[lev] @ x for lev in range(len(sizes))]
    queries = [(), *((a,) for a in range(d)), tuple(range(d))]
    if d > 2:
        queries.append((0, 1))
    meas = []
    for lev, n in enumerate(sizes):
        for attrs in queries:
            units = np.flatnonzero(rng.random(n) >= p_missing)
            if not units.size:
                continue
            ans = hist[lev][units] @ query_matrix(shape, attrs).T
            if per_cell and attrs == tuple(range(d)) and rng.random() < 0.5:
                var = rng.uniform(0.3, 3.0, size=ans.shape)
                scale = np.sqrt(var)
            else:
                var = rng.uniform(0.3, 3.0, size=units.size)
                scale = np.sqrt(var)[:, None]
            meas.append(
                Measurement(lev, attrs, units, ans + rng.normal(size=ans.shape) * scale, var)
            )
    eqs = [Equality(0, (), np.arange(roots), hist[0].sum(axis=1, keepdims=True))]
    for _ in range(n_invariant):
        lev = int(rng.integers(len(sizes)))
        attrs = queries[int(rng.integers(len(queries) - 1))]
        units = np.flatnonzero(rng.random(sizes[lev]) < 0.6)
        if units.size:
            eqs.append(Equality(lev, attrs, units, hist[lev][units] @ query_matrix(shape, attrs).T))
    lin = []
    for _ in range(n_linear):
        lev = int(rng.integers(len(sizes)))
        u = int(rng.integers(sizes[lev]))
        mat = rng.normal(size=(int(rng.integers(1, 3)), k))
        lin.append(Linear(lev, u, mat, mat @ hist[lev][u]))
    return Problem(shape, parents, meas, eqs, zeros, lin), hist
