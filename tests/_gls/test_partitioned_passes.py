"""The dense-factor passes part by part (_gls/_partitioned_passes.py) equal the one-piece solve.

Random recoded problems with level-set zeros are cut below a level: each
subtree is solved to its root's summary, the levels above from the
summaries, and each subtree again from its root's final estimate.  Every
estimate, covariance and gain equals :func:`solve_blocks` to 1e-12 of the
level's scale, and the estimates equal the dense constrained GLS.
"""

import numpy as np
import pytest

from invariantdp._gls import (
    Measurement,
    Problem,
    partitioned_bottom_up,
    partitioned_top_down,
    replace_root,
    solve_blocks,
    tree_dense,
)
from invariantdp.exceptions import InvariantDPError

from .kkt import DenseGLS
from .problems import random_recoded_problem


def above(prob, split):
    """Levels ``0..split`` of ``prob`` with their own items."""

    def keep(items):
        return [it for it in items if it.level <= split]

    return Problem(
        prob.shape,
        prob.parents[: split + 1],
        keep(prob.measurements),
        keep(prob.equalities),
        keep(prob.zeros),
    )


def subtrees(prob, split):
    """``(lo, hi)`` per level >= ``split`` of each unit of ``split``'s subtree."""
    out = []
    for u in range(prob.sizes[split]):
        blocks = [(u, u + 1)]
        for lev in range(split + 1, len(prob.sizes)):
            lo, hi = blocks[-1]
            par = prob.parents[lev]
            blocks.append((int(np.searchsorted(par, lo)), int(np.searchsorted(par, hi))))
        out.append(blocks)
    return out


def solve_in_parts(prob, split):
    dense = tree_dense(prob)
    cuts = subtrees(prob, split)
    summaries = []
    for blocks in cuts:  # bottom-up, one subtree at a time
        sol = partitioned_bottom_up(prob.subtree(split, blocks), dense)
        summaries.append((sol.z[0], sol.V[0], sol.zero[0]))
    leaves = tuple(np.concatenate(a) for a in zip(*summaries, strict=True))
    top = partitioned_top_down(partitioned_bottom_up(above(prob, split), dense, leaves=leaves))
    parts = []
    for u, blocks in enumerate(cuts):  # top-down, again one subtree at a time
        sol = partitioned_bottom_up(prob.subtree(split, blocks), dense)
        root = (top.x[split][u : u + 1], top.F[split][u : u + 1], top.G[split][u : u + 1])
        parts.append(partitioned_top_down(sol, root))
    return top, parts


def scaled_close(a, b, rtol):
    return np.abs(a - b).max(initial=0.0) <= rtol * (1.0 + np.abs(b).max(initial=0.0))


@pytest.mark.parametrize(
    "shape, fan, roots, split",
    [((4, 2, 3), (3, 2, 2), 1, 1), ((4, 2, 3), (2, 3, 2), 2, 2), ((5, 2, 2), (3, 2), 2, 0)],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_the_passes_in_parts_equal_the_passes_in_one_piece(shape, fan, roots, split, seed):
    rng = np.random.default_rng(40 + seed)
    prob, _ = random_recoded_problem(rng, shape, fan, roots)
    one = solve_blocks(prob)
    # solve_blocks writes x over z below the roots: the bottom-up pass alone keeps them
    up = partitioned_bottom_up(prob, one.fa.dense)
    assert all(z is None for z in one.z[1:])
    top, parts = solve_in_parts(prob, split)
    assert top.fa.dense == one.fa.dense == (0, 1)
    for lev in range(len(prob.sizes)):
        for name in ("x", "F", "G", "z", "V"):
            if lev <= split:
                got = getattr(top, name)[lev]
            else:
                got = np.concatenate([getattr(p, name)[lev - split] for p in parts])
            want = getattr(up if name == "z" else one, name)[lev]
            if name == "G" and lev == 0:
                continue  # the roots have no gain
            assert scaled_close(got, want, 1e-12), (lev, name)
    ref = DenseGLS(prob)
    last = len(prob.sizes) - 1
    x = np.concatenate([p.histograms(last - split) for p in parts])
    r_est, _ = ref.slice(last, np.arange(prob.sizes[last]), tuple(range(len(shape))), {})
    assert scaled_close(x.reshape(-1), r_est, 1e-8)


def test_replace_root_takes_the_roots_items_from_the_tree_above():
    meas = Measurement(0, (0,), np.array([0]), np.array([[1.0, 2.0]]), np.ones(1))
    child = Measurement(1, (0,), np.array([0]), np.array([[1.0, 1.0]]), np.ones(1))
    prob = Problem((2,), [np.array([-1]), np.array([0])], measurements=[meas, child])
    moved = Measurement(0, (0,), np.array([0]), np.array([[5.0, 6.0]]), np.full(1, 2.0))
    out = replace_root(prob, Problem((2,), [np.array([-1])], measurements=[moved]))
    assert [m.values.tolist() for m in out.measurements] == [[[1.0, 1.0]], [[5.0, 6.0]]]
    with pytest.raises(InvariantDPError, match=r"expected one level of 1 units"):
        replace_root(prob, prob)


def test_an_algebra_without_the_problems_dense_attributes_is_refused():
    rng = np.random.default_rng(3)
    prob, _ = random_recoded_problem(rng, (4, 2, 3), (2, 2), 1)
    with pytest.raises(InvariantDPError, match=r"dense attributes \[0, 1\] are not among .*\[0\]"):
        partitioned_bottom_up(prob, dense=(0,))
    sol = partitioned_bottom_up(prob, tree_dense(prob))
    n = prob.sizes[1]
    leaves = tuple(np.concatenate([a, a]) for a in (sol.z[1], sol.V[1], sol.zero[1]))
    with pytest.raises(InvariantDPError, match=rf"`leaves` summarise {2 * n} units; .* has {n}\."):
        partitioned_bottom_up(above(prob, 1), tree_dense(prob), leaves=leaves)


def test_top_down_from_a_root_keeps_the_bottom_up_summaries():
    rng = np.random.default_rng(5)
    prob, _ = random_recoded_problem(rng, (4, 2, 3), (3, 2, 2), 1)
    top, _ = solve_in_parts(prob, 1)
    blocks = subtrees(prob, 1)[0]
    sol = partitioned_bottom_up(prob.subtree(1, blocks), tree_dense(prob))
    z0, v0 = sol.z[0].copy(), sol.V[0].copy()
    root = (top.x[1][:1], top.F[1][:1], top.G[1][:1])
    partitioned_top_down(sol, root)
    # the summary a parent needs stays the subtree's own; the final values are the root's
    assert np.array_equal(sol.z[0], z0) and np.array_equal(sol.V[0], v0)
    assert np.array_equal(sol.x[0], root[0]) and np.array_equal(sol.F[0], root[1])
    assert np.array_equal(sol.G[0], root[2])
    assert not np.allclose(z0, root[0])  # the test can tell them apart
