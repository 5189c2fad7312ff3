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


def random_recoded_problem(
    rng, shape=(4, 2, 3), fan=(3, 2, 3), roots=1, p_missing=0.3, leaves_detailed=True
):
    """A problem with the structure of the 2020 persons file, on a small schema.

    Attribute 0 plays ``hhgq`` (grouped by a recode into {0}, {1, .., n-2}, {n-1}
    and with a one-level group like ``gqNursingTotal``), attribute 1 plays
    ``votingage`` (the group {0}, like ``nonvoting``).  Every unit without
    children measures the detailed query (so every unit is identified); the
    others (total, one-way, the recoded one-way, the recoded pair, each pair
    with attribute 0, detailed) are each missing with probability
    ``p_missing`` per unit (with ``leaves_detailed=False`` the leaves' detailed
    query too, so that some units are not identified).  Structural zeros:
    whole slices of attribute 0 absent at random units without children and
    at every unit all of whose children lack it (as the Bureau's upper bounds sum upward), and
    "group 1 of attribute 0 x level 0 of attribute 1" zero everywhere.
    Invariants: the roots' totals, a recoded one-way and the one-way of
    attribute 1 at random units.  Returns ``(problem, truth per level)``.
    """
    parents, sizes = random_tree(rng, roots, fan)
    d, k, n0 = len(shape), int(np.prod(shape)), shape[0]
    inst = np.zeros((3, n0), dtype=np.int64)
    inst[0, 0] = inst[2, n0 - 1] = 1
    inst[1, 1 : n0 - 1] = 1
    nurse = np.zeros((1, n0), dtype=np.int64)
    nurse[0, 1] = 1
    nonvoting = np.array([[1] + [0] * (shape[1] - 1)])
    ind, n_leaves = leaf_indicators(parents, sizes)
    n_lev = len(sizes)
    children = [np.bincount(parents[lev + 1], minlength=sizes[lev]) for lev in range(n_lev - 1)]
    children.append(np.zeros(sizes[-1], dtype=np.int64))
    # absent slices of attribute 0: random at the units without children, then upward
    absent = [np.zeros((n, n0), dtype=bool) for n in sizes]
    for lev in range(n_lev - 1, -1, -1):
        leaf = children[lev] == 0
        absent[lev][leaf] = rng.random((int(leaf.sum()), n0)) < 0.4
        absent[lev][leaf, 0] = False  # households everywhere
        if lev + 1 < n_lev:
            inner = np.flatnonzero(~leaf)
            for p in inner:
                kids = np.flatnonzero(parents[lev + 1] == p)
                absent[lev][p] = absent[lev + 1][kids].all(axis=0)
    cells = np.indices(shape).reshape(d, -1)
    x = rng.poisson(5, size=(n_leaves, k)).astype(float)
    x[:, (cells[0] == 1) & (cells[1] == 0)] = 0.0
    for lev in range(n_lev):
        for u in np.flatnonzero(absent[lev].any(axis=1)):
            zero_cells = absent[lev][u][cells[0]]
            x[np.ix_(ind[lev][u] > 0, zero_cells)] = 0.0
    hist = [ind[lev] @ x for lev in range(n_lev)]
    queries = [
        ((), {}),
        *(((a,), {}) for a in range(d)),
        ((0,), {0: inst}),
        ((0, 1), {0: nurse, 1: nonvoting}),
        *(((0, a), {}) for a in range(1, d)),
        ((0, 1), {0: inst}),
        (tuple(range(d)), {}),
    ]
    meas = []
    for lev, n in enumerate(sizes):
        for attrs, rec in queries:
            detailed = len(attrs) == d and not rec
            keep = rng.random(n) >= p_missing
            if detailed and leaves_detailed:
                keep |= children[lev] == 0
            units = np.flatnonzero(keep)
            if not units.size:
                continue
            ans = hist[lev][units] @ query_matrix(shape, attrs, rec).T
            var = rng.uniform(0.3, 3.0, size=units.size)
            noisy = ans + rng.normal(size=ans.shape) * np.sqrt(var)[:, None]
            meas.append(Measurement(lev, attrs, units, noisy, var, recodes=rec))
    eqs = [Equality(0, (), np.arange(roots), hist[0].sum(axis=1, keepdims=True))]
    for attrs, rec in (((0,), {0: inst}), ((1,), {})):
        lev = int(rng.integers(n_lev))
        units = np.flatnonzero(rng.random(sizes[lev]) < 0.6)
        if units.size:
            vals = hist[lev][units] @ query_matrix(shape, attrs, rec).T
            eqs.append(Equality(lev, attrs, units, vals, recodes=rec))
    zeros = []
    for lev, n in enumerate(sizes):
        units = np.flatnonzero(absent[lev].any(axis=1))
        if units.size:
            zeros.append(Zeros(lev, (0,), units, absent[lev][units]))
        zeros.append(
            Zeros(lev, (0, 1), np.arange(n), np.ones((n, 1), dtype=bool), {0: nurse, 1: nonvoting})
        )
    return Problem(shape, parents, meas, eqs, zeros), hist


def random_level_set_problem(rng, fan=(3, 3)):
    """A random schema (2-3 attributes of 2-4 levels) with a random recode and random zeros.

    One attribute is recoded into one or two random groups of levels; zeros
    are random cells of a random plain query (unions of products of level
    sets) and random groups of the recoded query, at random units.  The
    leaves measure the detailed query (every unit identified), the other
    units random queries among the total, the one-ways, the recoded one-way
    and the detailed.  Invariants: the root total and the recoded one-way at
    random units.  Returns ``(problem, truth per level)``.
    """
    d = int(rng.integers(2, 4))
    shape = tuple(int(n) for n in rng.integers(2, 5, size=d))
    parents, sizes = random_tree(rng, 1, fan)
    k = int(np.prod(shape))
    r = int(rng.integers(d))
    levels = rng.permutation(shape[r])[: int(rng.integers(1, shape[r] + 1))]
    cut = int(rng.integers(1, levels.size + 1))
    groups = [g for g in (levels[:cut], levels[cut:]) if g.size]
    rec = np.zeros((len(groups), shape[r]), dtype=np.int64)
    for i, g in enumerate(groups):
        rec[i, g] = 1
    ind, n_leaves = leaf_indicators(parents, sizes)
    x = rng.poisson(4, size=(n_leaves, k)).astype(float)
    zeros = []
    for _ in range(2):
        lev = int(rng.integers(len(sizes)))
        units = np.flatnonzero(rng.random(sizes[lev]) < 0.5)
        if not units.size:
            continue
        if rng.random() < 0.5:
            attrs = tuple(sorted(rng.choice(d, size=int(rng.integers(1, d)), replace=False)))
            recs = {}
        else:
            attrs, recs = (r,), {r: rec}
        q = query_matrix(shape, attrs, recs)
        mask = rng.random((units.size, q.shape[0])) < 0.3
        zeros.append(Zeros(lev, attrs, units, mask, recs))
        for i, u in enumerate(units):
            x[np.ix_(ind[lev][u] > 0, q[mask[i]].sum(axis=0) > 0)] = 0.0
    hist = [ind[lev] @ x for lev in range(len(sizes))]
    children = np.zeros(sizes[-1], dtype=bool)
    queries = [((), {}), *(((a,), {}) for a in range(d)), ((r,), {r: rec}), (tuple(range(d)), {})]
    meas = []
    for lev, n in enumerate(sizes):
        leaf = (
            np.bincount(parents[lev + 1], minlength=n) == 0 if lev + 1 < len(sizes) else ~children
        )
        for attrs, recs in queries:
            keep = rng.random(n) < 0.5
            if len(attrs) == d and not recs:
                keep |= leaf
            units = np.flatnonzero(keep)
            if not units.size:
                continue
            ans = hist[lev][units] @ query_matrix(shape, attrs, recs).T
            var = rng.uniform(0.3, 3.0, size=units.size)
            noisy = ans + rng.normal(size=ans.shape) * np.sqrt(var)[:, None]
            meas.append(Measurement(lev, attrs, units, noisy, var, recodes=recs))
    eqs = [Equality(0, (), np.array([0]), hist[0].sum(axis=1, keepdims=True))]
    lev = int(rng.integers(len(sizes)))
    units = np.flatnonzero(rng.random(sizes[lev]) < 0.6)
    if units.size:
        vals = hist[lev][units] @ query_matrix(shape, (r,), {r: rec}).T
        eqs.append(Equality(lev, (r,), units, vals, recodes={r: rec}))
    return Problem(shape, parents, meas, eqs, zeros), hist
