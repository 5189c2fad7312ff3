r"""What every model builder (:mod:`._model_builders`) shares: latent counts, the release node.

The latent confidential counts are created either as integer counts on the
fibre of the invariants (``latent="exact"``, for the lattice sampler) or on
the invariant affine space (``latent="relaxed"``, for NUTS); the release is
observed through the mechanism's exact likelihood (:mod:`._pymc_likelihoods`),
and its per-cell log weights (``noise_unary``) are kept for the fast
lattice step.  :func:`_info` records in ``model.invariantdp`` what
:func:`~invariantdp.inference.bayes.fit` needs.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from scipy import linalg

from ..._validation import InvariantDPError
from ...invariants import Invariants
from ...labels import cell_names
from ...release import Release
from ._latent_samplers import LatticeMoves, affine_counts, fibre_point
from ._projected import _row_basis
from ._pymc_likelihoods import likelihood_class, mechanism_likelihood
from ._scalar import LaplaceLikelihood

_LATENT = ("exact", "relaxed")


def _check_release(release) -> Release:
    if not isinstance(release, Release):
        raise TypeError(f"`release` must be a Release, got {type(release).__name__}.")
    return release


def _check_latent(latent, allowed=_LATENT) -> str:
    if latent not in allowed:
        raise InvariantDPError(
            f"`latent` ({latent!r}) must be one of {', '.join(map(repr, allowed))}."
        )
    return latent


def _noise_bounds(spec, y):
    """Bounds on the latent counts implied by a noise law with bounded support."""
    if spec.support is None:
        return None, None
    lo, hi = spec.support
    return y - hi, y - lo


def _implied_total(inv: Invariants | None):
    """The grand total if the all-ones vector is in the row space of ``C`` (else None)."""
    if inv is None or inv.values is None:
        return None
    C = inv.dense_matrix()
    lam, *_ = linalg.lstsq(C.T, np.ones(C.shape[1]))
    if np.max(np.abs(C.T @ lam - 1.0)) > 1e-8:
        return None
    return float(lam @ inv.values)


def _invariants_potential(name, counts, inv: Invariants):
    """0 on the fibre ``C s = c``, -inf off it (guards user-modified models)."""
    C = inv.dense_matrix()
    resid = pt.dot(pt.as_tensor(C), counts) - inv.values
    ok = pt.all(pt.abs(resid) <= 1e-6 * np.maximum(1.0, np.abs(inv.values)))
    return pm.Potential(name, pt.switch(ok, 0.0, -np.inf))


def _augmented(inv: Invariants | None, n: int, total: float | None) -> Invariants | None:
    """``inv`` with the grand total appended when it is not implied already."""
    if total is None:
        return inv
    if inv is None:
        return Invariants(np.ones((1, n)), [total], None)
    if _implied_total(inv) is not None:
        return inv
    C = inv.dense_matrix()
    return Invariants(np.vstack([C, np.ones((1, n))]), np.append(inv.values, total), inv.shape)


def _observe(release, counts, spec, n, dims):
    """The observed release node, and ``noise_unary(S)``: its per-cell log weights.

    On the fibre every mechanism's log likelihood is a sum over cells of a
    function of ``s_i`` (for the projected Gaussian because ``y - s`` lies in
    ``ker C``, so ``||Q_N^T (y - s)|| = ||y - s||``), up to terms free of ``s``.
    The projected Laplace mechanism gets its row-space noise as a latent.
    """
    y = np.asarray(release.value, dtype=float).reshape(-1)
    yt = pt.as_tensor(y[None, :])
    if spec.structure == "row_space":
        inv = release.invariants
        QR = _row_basis(inv)
        w = pm.Flat("row_space_noise", shape=QR.shape[0], initval=np.zeros(QR.shape[0]))
        shift = pt.dot(pt.as_tensor(QR.T), w)
        b = spec.params["scale"]

        def unary(S):
            return -pt.abs(yt - (S - shift[None, :])) / b

        obs = LaplaceLikelihood(
            "release",
            counts - pt.dot(pt.as_tensor(QR.T), w),
            scale=b,
            observed=y,
            dims=dims,
        )
        return obs, unary
    obs = mechanism_likelihood("release", release, counts, flatten=True, dims=dims)
    return obs, _noise_unary(spec, yt)


def _noise_unary(spec, yt):
    """Per-cell log weight of the release given the counts (constants in ``S`` dropped).

    For the projected Gaussian the scalar Gaussian terms are its density on
    the fibre up to a constant.
    """
    dist = likelihood_class(spec)
    values = pt.round(yt).astype("int64") if spec.integer else yt
    return lambda S: pm.logp(dist.dist(S, **spec.params), pt.broadcast_to(values, S.shape))


def _latent_counts(
    name, release, spec, inv, *, latent, total, count_unary, dist, dims, max_count=None
):
    """Create the latent counts (exact integer or relaxed); return them and the sampler info.

    ``count_unary(s)`` is the count model's log mass per cell (elementwise,
    any terms free of ``s`` included or not).
    """
    y = np.asarray(release.value, dtype=float).reshape(-1)
    n = y.size
    lo, hi = _noise_bounds(spec, y)
    lower = 0 if lo is None else np.maximum(0.0, np.ceil(lo))
    upper = hi if max_count is None else np.minimum(max_count, np.inf if hi is None else hi)
    aug = _augmented(inv, n, total)
    start = fibre_point(y, aug, lower=lower, upper=upper) if aug is not None else None
    if start is None:
        start = np.clip(np.round(y), lower, upper).astype(np.int64)
    if latent == "exact":
        counts = dist(name, initval=start, dims=dims)
        if inv is not None:
            _invariants_potential("invariants", counts, inv)
        moves = LatticeMoves(
            inv if inv is not None else np.zeros((0, n)), fixed_total=total is not None
        )
        return counts, {"moves": moves, "lower": lower, "upper": upper}
    # relaxed: s = s0 + Q_N z, z free
    if aug is None:
        z = pm.Flat(f"{name}_coords", shape=n, initval=np.zeros(n))
        counts = pm.Deterministic(name, pt.as_tensor(start.astype(float)) + z, dims=dims)
    else:
        d = aug.n_cells - aug.rank
        z = pm.Flat(f"{name}_coords", shape=d, initval=np.zeros(d))
        counts = pm.Deterministic(name, affine_counts(aug, start, z), dims=dims)
    inside = pt.all(counts >= 0)
    if max_count is not None:
        inside = inside & pt.all(counts <= max_count)
    relaxed = pt.sum(count_unary(pt.maximum(counts, 0.0)))
    pm.Potential(f"{name}_logp", pt.switch(inside, relaxed, -np.inf))
    return counts, {"moves": None, "lower": lower, "upper": upper}


def _cell_labels(release, shape=None):
    """Coordinates of the cells: the release's labels (``"Ada, F"``) or positions (``"0,1"``)."""
    shape = tuple(shape if shape is not None else np.shape(release.value))
    if release.labels is not None and np.prod(shape) == np.size(release.value):
        return cell_names(release.labels, np.shape(release.value))  # flattened in C order
    if len(shape) == 1:
        return [str(i) for i in range(shape[0])]
    return [",".join(map(str, ix)) for ix in np.ndindex(*shape)]


def _signature(model):
    """Free variables and potentials of a model (to detect user modifications)."""
    return (
        tuple(sorted(v.name for v in model.free_RVs)),
        tuple(sorted(v.name for v in model.potentials)),
    )


def _marginal_binomial(release, spec, theta, n):
    grid = np.arange(n + 1, dtype=np.int64 if spec.integer else float)
    noise = likelihood_class(spec).dist(grid, **spec.params)
    grid = grid.astype(float)
    y = np.asarray(release.value, dtype=float).reshape(-1)
    # log f(y_j - x) for every release j and every x = 0..n: constants of the model
    table = np.stack([pm.logp(noise, np.full(n + 1, v)).eval() for v in y])
    log_binom = (
        pt.gammaln(n + 1.0)
        - pt.gammaln(grid + 1.0)
        - pt.gammaln(n - grid + 1.0)
        + grid * pt.log(theta)
        + (n - grid) * pt.log1p(-theta)
    )
    terms = pt.as_tensor(table) + log_binom[None, :]
    pm.Potential("release", pt.sum(pt.logsumexp(terms, axis=1)))


def _info(release, latent, spec, latent_info, count_unary, noise_unary) -> dict:
    """What :func:`fit` needs to sample the model."""
    info = {"release": release, "latent": latent, "latent_var": "counts"}
    if latent == "exact":
        info.update(
            moves=latent_info["moves"],
            lower=latent_info["lower"],
            upper=latent_info["upper"],
            unary=lambda S: count_unary(S) + noise_unary(S),
            max_step=_initial_step(spec),
        )
    return info


def _initial_step(spec) -> int:
    """Initial lattice step: about the noise standard deviation."""
    return int(max(1, round(spec.sd)))
