r"""Likelihoods of Poisson counts observed through a Gaussian-type release.

The counts :math:`s_i \sim \mathrm{Poisson}(\lambda_i)` are released as
:math:`y = s + e` with invariants :math:`C s = t` (module notes of
:mod:`._release_observation`).  The likelihood conditions on the invariants
(Gong & Meng 2020, Eq. 2.3):

.. math:: L(\lambda) = \sum_{s \ge 0:\ C s = t} \prod_i
          \mathrm{Pois}(s_i; \lambda_i)\; p_e(y - s),

two ways, each returning the log-likelihood and its gradient in
:math:`\lambda` (the models chain it to their parameters):

**Gaussian** (:class:`GaussianCountLikelihood`).  The counts as
:math:`N(\lambda, D)`, :math:`D = \mathrm{diag}(\lambda)`, the noise as
:math:`N(0, \Sigma_e)`.  When the noise keeps the invariants the release
alone is observed, :math:`y \sim N(\lambda, D + \Sigma_e)` (its invariant
part carries :math:`t`; Gao, Gong & Yu, Theorem 22).  Otherwise the
observation is :math:`z = (y, u)`, :math:`u = R s` the exact invariants in
an orthonormal basis :math:`R` of the row space of :math:`C`:

.. math:: z \sim N\Big(\begin{pmatrix}\lambda \\ R\lambda\end{pmatrix},
          \begin{pmatrix} D + \Sigma_e & D R^\top \\ R D & R D R^\top
          \end{pmatrix}\Big),

whose conditional law of :math:`y` given :math:`u` is the congenial one.
Accurate when every cell's law is near normal: large counts, or noise wide
enough to dominate the Poisson skewness.

**Exact** (:class:`ExactDiscreteGaussianLikelihood`), for discrete Gaussian
noise :math:`p_e(k) \propto e^{-k^2 / 2\sigma^2}` when the invariants fix
the total of every class of cells with identical columns of :math:`C`
(totals, nested totals, none): the sum factors over classes, each a
convolution of the cells' weights
:math:`a_i(s) = \mathrm{Pois}(s; \lambda_i)\, p_e(y_i - s)` evaluated at
the class total.  Each cell's weights are kept where :math:`p_e(y_i - s)`
is within :math:`e^{-50}` of its peak, :math:`|y_i - s| \le 10\sigma`; the
convolution is exponentially tilted so that the class total sits at the
centre of its law (no underflow; the tilt cancels exactly); the gradient
:math:`\partial \ell / \partial\lambda_i = E[s_i \mid y, t]/\lambda_i - 1`
comes from a backward pass.  Its cost grows with :math:`\sigma`
(:math:`20\sigma + 1` weights a cell).

**The switch** (:func:`count_likelihood`, ``likelihood="auto"``): exact for a
discrete Gaussian release with :math:`\sigma \le` :data:`EXACT_SIGMA_MAX`
(5) whose invariants allow it, Gaussian otherwise.  The Gaussian likelihood
errs through the skewness of a released cell, :math:`\lambda / (\lambda +
\sigma^2)^{3/2}`, at most :math:`0.385 / \sigma` whatever the mean (at
:math:`\lambda = 2\sigma^2`): for small :math:`\sigma` the release keeps
the Poisson skewness of small counts (and at :math:`\sigma \le 1` the
noise takes a handful of values), which the Gaussian likelihood misses; wide
noise, normal to :math:`e^{-2\pi^2\sigma^2}` as a law on the integers,
smooths the sum.  Over 60 cells of mean 3, 20 and 150 with a state total
(20 releases each), the two maximum likelihood estimates differ by 0.05-0.3
standard errors on average at :math:`\sigma \le 1`, 0.04-0.07 at
:math:`\sigma = 3`, at most 0.04 on average and 0.1 at worst from
:math:`\sigma = 5` on, and under 0.03 at :math:`\sigma = 12`; the exact
likelihood stays affordable there (its cost grows as :math:`\sigma^2`).
tests/inference/test_count_likelihoods.py checks both sides of the switch.

References
----------
R. Gong and X.-L. Meng (2020), *Congenial differential privacy under
mandated disclosure*, Eq. 2.3; J. Gao, R. Gong and F.-Y. Yu (2022),
*Subspace differential privacy*, Theorem 22; C. Canonne, G. Kamath and
T. Steinke (2020), *The discrete Gaussian for differential privacy*, Def. 1.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg, special

from .._linalg import AffineSubspace, cell_classes
from .._validation import InvariantDPError
from ..families import GAUSSIAN_LIKELIHOOD
from ._release_observation import ReleaseObservation

__all__ = [
    "EXACT_SIGMA_MAX",
    "LIKELIHOODS",
    "ExactDiscreteGaussianLikelihood",
    "GaussianCountLikelihood",
    "count_likelihood",
    "exact_unavailable",
]

#: the largest discrete Gaussian ``sigma`` for which ``likelihood="auto"`` is exact
EXACT_SIGMA_MAX = 5.0
#: the choices of ``likelihood=``
LIKELIHOODS = ("auto", "exact", "gaussian")
#: a cell keeps the weights with ``p_e(y - s) >= exp(-_TAIL) p_e(0)``: ``|y - s| <= 10 sigma``
_TAIL = 50.0
#: at most this many numbers in the stored forward messages of the exact likelihood
_EXACT_MAX = 20_000_000
#: the exponential tilt is kept in [-_TILT_MAX, _TILT_MAX] (a degenerate class beyond)
_TILT_MAX = 60.0


# ---------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------


class _Solver:
    """``S^{-1}`` (or the pseudo-inverse) and ``log det S`` of a symmetric PSD matrix."""

    def __init__(self, S: np.ndarray):
        try:
            self._chol = linalg.cho_factor(S, lower=True, check_finite=False)
            self.logdet = 2.0 * float(np.sum(np.log(np.diag(self._chol[0]))))
            self.rank = S.shape[0]
            self._U = None
        except linalg.LinAlgError:
            # a covariance singular in some direction (noise that keeps part of the invariants)
            lam, U = linalg.eigh(S)
            keep = lam > 1e-10 * max(lam.max(), 1e-300)
            self._U, self._lam = U[:, keep], lam[keep]
            self.logdet = float(np.sum(np.log(self._lam)))
            self.rank = int(keep.sum())
            self._chol = None

    def solve(self, b: np.ndarray) -> np.ndarray:
        if self._chol is not None:
            return linalg.cho_solve(self._chol, b, check_finite=False)
        return self._U @ ((self._U.T @ b) / (self._lam if b.ndim == 1 else self._lam[:, None]))

    def outside(self, r: np.ndarray) -> bool:
        """``r`` leaves the range of ``S`` (density 0)."""
        if self._chol is not None:
            return False
        resid = r - self._U @ (self._U.T @ r)
        return bool(np.linalg.norm(resid) > 1e-7 * (1.0 + np.linalg.norm(r)))


class GaussianCountLikelihood:
    """The Gaussian likelihood of Poisson counts through the release (module notes).

    Parameters
    ----------
    obs : ReleaseObservation

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.mechanisms import projected_gaussian
    >>> from invariantdp.inference._release_observation import observe_release
    >>> rel = projected_gaussian(np.array([40.0, 60.0]), totals([0, 0]), mu=0.5, rng=1)
    >>> lik = GaussianCountLikelihood(observe_release(rel))
    >>> ll, grad = lik.poisson(np.array([50.0, 50.0]))
    >>> grad.shape
    (2,)
    """

    method = "gaussian"

    def __init__(self, obs: ReleaseObservation):
        self.obs = obs
        self._noise = obs.noise_cov()
        inv = obs.invariants
        if inv is None or obs.keeps_invariants:
            self._R = None
            self.z = obs.counts
        else:
            sub = AffineSubspace(inv.dense_matrix(), inv.values)
            R = sub.basis  # orthonormal basis of the row space of C
            self._R = R
            self.z = np.concatenate([obs.counts, R @ sub.point])

    def _cov(self, var: np.ndarray) -> np.ndarray:
        """The observation's covariance when the counts have variances ``var``."""
        n = var.size
        if self._R is None:
            S = self._noise.copy()
            S[np.diag_indices(n)] += var
            return S
        R = self._R
        DRt = var[:, None] * R.T
        top = self._noise.copy()
        top[np.diag_indices(n)] += var
        return np.block([[top, DRt], [DRt.T, R @ DRt]])

    def _mean(self, lam: np.ndarray) -> np.ndarray:
        return lam if self._R is None else np.concatenate([lam, self._R @ lam])

    def loglike(self, lam: np.ndarray) -> float:
        """The log-likelihood at cell means ``lam``."""
        return self.poisson(lam, gradient=False)[0]

    def poisson(self, lam: np.ndarray, gradient: bool = True):
        r"""``(loglik, d loglik / d lam)`` at the cell means ``lam`` (gradient None if not asked).

        With :math:`S = B D B^\top + \Sigma_z`, :math:`a = S^{-1}(z - B\lambda)`:
        :math:`\partial\ell/\partial\lambda_i = (B^\top a)_i + \tfrac12
        ((B^\top a)_i^2 - (B^\top S^{-1} B)_{ii})`.
        """
        ll, grads = self.moments(lam, lam, gradient)
        return ll, None if grads is None else grads[0] + grads[1]

    def negative_binomial(self, lam: np.ndarray, alpha: float, gradient: bool = True):
        r"""``(loglik, (d/d lam, d/d alpha))`` for NB2 counts: mean ``lam``, variance
        :math:`\lambda + \alpha\lambda^2` (gradient None if not asked)."""
        var = lam + alpha * lam * lam
        ll, grads = self.moments(lam, var, gradient)
        if grads is None:
            return ll, None
        dmean, dvar = grads
        return ll, (dmean + dvar * (1.0 + 2.0 * alpha * lam), float(np.sum(dvar * lam * lam)))

    def moments(self, mean: np.ndarray, var: np.ndarray, gradient: bool = True):
        r"""``(loglik, (d/d mean, d/d var))`` for counts of means ``mean`` and variances ``var``.

        With :math:`S = B\,\mathrm{diag}(v)\,B^\top + \Sigma_z`,
        :math:`a = S^{-1}(z - B m)`: :math:`\partial\ell/\partial m_i = (B^\top a)_i`
        and :math:`\partial\ell/\partial v_i = \tfrac12((B^\top a)_i^2 -
        (B^\top S^{-1} B)_{ii})`.
        """
        lam = mean
        S = self._cov(var)
        try:
            solver = _Solver(S)
        except (linalg.LinAlgError, ValueError):
            return -np.inf, None
        r = self.z - self._mean(lam)
        if solver.outside(r):
            return -np.inf, None
        a = solver.solve(r)
        ll = -0.5 * (solver.rank * math.log(2.0 * math.pi) + solver.logdet + float(r @ a))
        if not gradient:
            return ll, None
        n = lam.size
        if self._R is None:
            Bta = a
            diag = np.diag(solver.solve(np.eye(n))).copy()
        else:
            R = self._R
            Bta = a[:n] + R.T @ a[n:]
            B = np.vstack([np.eye(n), R])
            SinvB = solver.solve(B)
            diag = np.einsum("ji,ji->i", B, SinvB)
        return ll, (Bta, 0.5 * (Bta * Bta - diag))


# ---------------------------------------------------------------------------
# exact (discrete Gaussian noise)
# ---------------------------------------------------------------------------


def _classes(obs: ReleaseObservation):
    """``(members, totals, free, reason)``: the classes whose totals the invariants fix."""
    n = obs.n_cells
    inv = obs.invariants
    if inv is None:
        return [], np.zeros(0, dtype=np.int64), np.arange(n), ""
    C = np.asarray(inv.dense_matrix(), dtype=float)
    cls = cell_classes(C)
    fixed = [k for k, m in enumerate(cls.members) if np.any(cls.matrix[:, k] != 0)]
    free = [m for k, m in enumerate(cls.members) if k not in fixed]
    Abar = cls.matrix[:, fixed].astype(float)
    if np.linalg.matrix_rank(Abar) < len(fixed):
        return (
            None,
            None,
            None,
            (
                "the invariants do not fix the total of each class of cells with identical "
                "columns of C (e.g. the margins of a table)"
            ),
        )
    T = AffineSubspace(Abar, inv.values).point  # the one solution: Abar has full column rank
    Ti = np.round(T)
    if np.any(np.abs(T - Ti) > 1e-6 * (1.0 + np.abs(T))) or np.any(Ti < 0):
        raise InvariantDPError(
            "`release` invariants give class totals that are not non-negative integers; "
            "discrete Gaussian counts must have them."
        )
    members = [cls.members[k] for k in fixed]
    free_cells = np.concatenate(free) if free else np.zeros(0, dtype=np.int64)
    return members, Ti.astype(np.int64), np.sort(free_cells), ""


def _exact_noise(obs: ReleaseObservation, continuous: bool):
    r"""``(sigma, integer, why)``: the noise the exact likelihood sums against, or why not.

    Integer discrete Gaussian noise, independent across cells; with
    ``continuous``, also Gaussian noise independent across cells or
    projected on the null space of the invariants (the projected and
    extended Gaussian mechanisms), whose density on the invariants' affine
    space is :math:`\propto \prod_i e^{-(y_i - s_i)^2 / 2\sigma^2}`.
    """
    sigma = obs.discrete_gaussian_sigma
    if sigma is not None:
        if obs.noise.structure != "independent":
            return None, True, f"the {obs.family} noise is not independent across cells"
        return sigma, True, ""
    if not continuous or obs.noise.form is not GAUSSIAN_LIKELIHOOD:
        return None, False, f"the noise is {obs.family}, not integer discrete Gaussian noise"
    if obs.noise.structure not in ("independent", "projected") or obs.variance is None:
        return None, False, f"the {obs.family} noise is correlated across cells"
    return math.sqrt(obs.variance), False, ""


def exact_unavailable(obs: ReleaseObservation, continuous: bool = False) -> str:
    """Why the exact likelihood does not apply to ``obs`` ("" when it does).

    ``continuous``: Gaussian noise (independent, or projected) qualifies too
    (:func:`_exact_noise`).
    """
    sigma, _, why = _exact_noise(obs, continuous)
    if why:
        return why
    members, _, _, why = _classes(obs)
    if members is None:
        return why
    # the forward messages of a class of m cells hold about m (2 sqrt(2 TAIL) sigma sqrt(m) + W)
    # numbers: the partial sums' law, trimmed, is some sigma sqrt(k) wide
    width = 2 * math.sqrt(2.0 * _TAIL) * sigma
    stored = sum(len(c) * (width * math.sqrt(len(c)) + width + 1) for c in members)
    if stored > _EXACT_MAX:
        return (
            f"its dynamic programme would store about {stored:.3g} numbers (more than {_EXACT_MAX})"
        )
    return ""


def _trim(F: np.ndarray, off: int) -> tuple[np.ndarray, int, float]:
    """``F`` without its end entries below ``exp(-_TAIL)`` of its peak, scaled to peak 1.

    ``F`` is log-concave (a convolution of log-concave weights), so what is
    cut is a geometric tail: a relative error below ``exp(-_TAIL)``.
    """
    top = float(F.max())
    keep = np.flatnonzero(F >= top * math.exp(-_TAIL))
    a, b = int(keep[0]), int(keep[-1]) + 1
    return F[a:b] / top, off + a, math.log(top)


def _class_dp(A: list, lo: np.ndarray, total: int, gradient: bool):
    """``(log Z, laws)`` of one class: ``Z = sum_{sum s = total} prod_k A_k(s_k - lo_k)``.

    ``A_k`` are the cells' (tilted, scaled) weights on ``lo_k, lo_k + 1, ...``;
    the forward messages are the laws of the partial sums, trimmed
    (:func:`_trim`); the backward pass gives each cell's law given the
    total (``laws[k]`` on the support of ``A_k``).  A dynamic programme over
    the cells of the class: one convolution per cell.
    """
    F, off, logscale = np.ones(1), 0, 0.0
    forward = [(F, off)]
    for Ak, lk in zip(A, lo, strict=True):
        F, off, ls = _trim(np.convolve(F, Ak), off + int(lk))
        logscale += ls
        forward.append((F, off))
    idx = total - off
    if not 0 <= idx < F.size:
        return -np.inf, None
    logZ = math.log(F[idx]) + logscale
    if not gradient:
        return logZ, None
    laws = [None] * len(A)
    G = np.zeros(F.size)
    G[idx] = 1.0
    for k in range(len(A) - 1, -1, -1):
        Fp, offp = forward[k]
        offk = forward[k + 1][1]
        Ak = A[k]
        d = offp + int(lo[k]) - offk  # G's index of (u = 0, w = 0)
        # sum_u Fp[u] G[u + d + w], for every weight w of the cell
        q = np.convolve(G, Fp[::-1])
        j = d + np.arange(Ak.size) + Fp.size - 1
        ok = (j >= 0) & (j < q.size)
        inner = np.where(ok, q[np.clip(j, 0, q.size - 1)], 0.0)
        p = Ak * inner
        laws[k] = p / p.sum()
        # backward message on the support of Fp: G_prev[u] = sum_w G[u + d + w] A_k[w]
        r = np.convolve(G, Ak[::-1])
        j = d + np.arange(Fp.size) + Ak.size - 1
        ok = (j >= 0) & (j < r.size)
        G = np.where(ok, r[np.clip(j, 0, r.size - 1)], 0.0)
        G /= G.max()
    return logZ, laws


class ExactDiscreteGaussianLikelihood:
    """The exact likelihood of Poisson counts through discrete Gaussian noise (module notes).

    Parameters
    ----------
    obs : ReleaseObservation
        A discrete Gaussian release (:func:`exact_unavailable` is "").

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from invariantdp import Release
    >>> from invariantdp.inference._release_observation import observe_release
    >>> rel = Release.from_published([3], noise="discrete_gaussian", sigma=0.5)
    >>> lik = ExactDiscreteGaussianLikelihood(observe_release(rel))
    >>> ll, _ = lik.poisson(np.array([2.0]))
    >>> s = np.arange(40)     # sum_s Pois(s; 2) p_e(3 - s), by brute force
    >>> pe = np.exp(-(3 - s) ** 2 / 0.5); pe /= np.exp(-np.arange(-40, 41) ** 2 / 0.5).sum()
    >>> bool(np.isclose(ll, np.log(np.sum(stats.poisson.pmf(s, 2.0) * pe))))
    True
    """

    method = "exact"
    #: added to the log-likelihood (the dimension of a projected noise's density)
    _constant = 0.0

    def __init__(self, obs: ReleaseObservation, continuous: bool = False):
        why = exact_unavailable(obs, continuous)
        if why:
            raise InvariantDPError(f"the exact likelihood does not apply: {why}.")
        self.obs = obs
        sigma, integer, _ = _exact_noise(obs, continuous)
        K = math.ceil(math.sqrt(2.0 * _TAIL) * sigma)
        if integer:
            y = np.round(obs.counts).astype(np.int64)
            lo = np.maximum(0, y - K)
            hi = np.maximum(0, y + K)
        else:
            y = obs.counts
            lo = np.maximum(0, np.floor(y - K)).astype(np.int64)
            hi = np.maximum(0, np.ceil(y + K)).astype(np.int64)
        W = int(np.max(hi - lo)) + 1
        S = lo[:, None] + np.arange(W)[None, :]
        valid = S <= hi[:, None]
        if integer:
            law = obs.noise_law()
            with np.errstate(divide="ignore"):
                lpe = np.where(valid, law.logpmf(y[:, None] - S), -np.inf)
        else:
            # the Gaussian density; noise projected on the null space of C has it on the
            # affine space {C s = t}, of n - rank(C) dimensions
            log_norm = -0.5 * math.log(2.0 * math.pi * sigma * sigma)
            lpe = np.where(valid, -0.5 * ((y[:, None] - S) / sigma) ** 2 + log_norm, -np.inf)
            if obs.noise.structure == "projected":
                self._constant = -obs.invariants.rank * log_norm
        self._S = S.astype(float)
        self._lpe = lpe
        self._log_factorial = special.gammaln(S + 1.0)
        members, totals, free, _ = _classes(obs)
        self._free = free
        self._members = members
        self._totals = totals
        self._lo = [lo[c] for c in members]
        self._width = (hi - lo + 1).astype(np.int64)
        for c, total in zip(members, totals, strict=True):
            if not int(lo[c].sum()) <= total <= int(hi[c].sum()):
                raise InvariantDPError(
                    "`release` values are inconsistent with its invariants under its noise "
                    f"law: a class total lies more than {K} (10 sigma) per cell from the "
                    "released counts."
                )

    def loglike(self, lam: np.ndarray) -> float:
        return self.poisson(lam, gradient=False)[0]

    def poisson(self, lam: np.ndarray, gradient: bool = True):
        """``(loglik, d loglik / d lam)`` at the cell means ``lam``."""
        S = self._S
        logpmf = S * np.log(lam)[:, None] - lam[:, None] - self._log_factorial
        ll, P = self.posterior(logpmf, gradient)
        if P is None:
            return ll, None
        return ll, np.sum(P * S, axis=1) / lam - 1.0

    def negative_binomial(self, lam: np.ndarray, alpha: float, gradient: bool = True):
        r"""``(loglik, (d/d lam, d/d alpha))`` for NB2 counts: means ``lam``, dispersion ``alpha``.

        The NB2 law :math:`\binom{s + r - 1}{s} (r/(r+\lambda))^r
        (\lambda/(r+\lambda))^s`, :math:`r = 1/\alpha` (variance
        :math:`\lambda + \alpha\lambda^2`); by Fisher's identity the gradient
        is the posterior mean of the count law's score,
        :math:`E[s/\lambda - (s + r)/(r + \lambda) \mid y, t]` in
        :math:`\lambda` and :math:`-r^2 E[\psi(s + r) - \psi(r) + \log(r/(r +
        \lambda)) + (\lambda - s)/(r + \lambda) \mid y, t]` in :math:`\alpha`.
        """
        S = self._S
        r = 1.0 / alpha
        lr = lam[:, None] + r
        logpmf = (
            special.gammaln(S + r)
            - special.gammaln(r)
            - self._log_factorial
            + r * np.log(r / lr)
            + S * np.log(lam[:, None] / lr)
        )
        ll, P = self.posterior(logpmf, gradient)
        if P is None:
            return ll, None
        Es = np.sum(P * S, axis=1)
        d_lam = Es / lam - (Es + r) / (lam + r)
        Epsi = np.sum(P * special.digamma(S + r), axis=1)
        d_r = Epsi - special.digamma(r) + np.log(r / (lam + r)) + (lam - Es) / (lam + r)
        return ll, (d_lam, float(-r * r * np.sum(d_r)))

    def posterior(self, logpmf: np.ndarray, gradient: bool = True):
        """``(loglik, P)``: the likelihood of independent counts of log-pmf ``logpmf`` given
        the release, and each count's law given the release and the invariants.

        ``logpmf[i, w]`` is the log-probability of cell ``i``'s count
        ``lo_i + w`` (the cell's window of the module notes); ``P`` has the
        same shape (None unless ``gradient``).
        """
        la = np.where(np.isfinite(self._lpe), self._lpe + logpmf, -np.inf)
        ll = self._constant
        P = np.zeros(la.shape) if gradient else None
        if self._free.size:
            lf = la[self._free]
            ll += float(np.sum(special.logsumexp(lf, axis=1)))
            if gradient:
                P[self._free] = special.softmax(lf, axis=1)
        if self._members:
            lc, laws = self._classes(la, gradient)
            ll += lc
            if gradient:
                for cells, cell_laws in zip(self._members, laws, strict=True):
                    if cell_laws is None:  # a total the weights cannot reach: loglik -inf
                        continue
                    for c, law in zip(cells, cell_laws, strict=True):
                        P[c, : law.size] = law
        return ll, P

    def _tilt(self, la: np.ndarray, cells: np.ndarray, total: int) -> float:
        """The tilt ``tau`` with ``sum_k E_tau[s_k] = total`` (safeguarded Newton).

        Tilting every weight by ``exp(tau s)`` multiplies the class's terms by
        ``exp(tau total)`` (they all have that sum), so it cancels exactly; it
        puts the total at the centre of the partial sums' law.
        """
        L, S = la[cells], self._S[cells]
        lo, hi, tau = -_TILT_MAX, _TILT_MAX, 0.0
        for _ in range(200):
            p = special.softmax(L + tau * S, axis=1)
            m = np.sum(p * S, axis=1)
            f = float(m.sum()) - total
            fp = float(np.sum(np.sum(p * S * S, axis=1) - m * m))
            if abs(f) < 1e-9 * (1.0 + total):
                break
            if f < 0:
                lo = tau
            else:
                hi = tau
            step = tau - f / fp if fp > 0 else 0.5 * (lo + hi)
            new = step if lo < step < hi else 0.5 * (lo + hi)
            if abs(new - tau) < 1e-12:
                break
            tau = new
        return tau

    def _classes(self, la: np.ndarray, gradient: bool):
        """Sum of the classes' log partition functions at their totals, and each class's
        cells' laws given the total (a list per class; None unless ``gradient``)."""
        ll = 0.0
        laws = []
        for cells, total, lo in zip(self._members, self._totals, self._lo, strict=True):
            tau = self._tilt(la, cells, int(total))
            Lt = la[cells] + tau * self._S[cells]
            cmax = Lt.max(axis=1)
            W = self._width[cells]
            A = [np.exp(Lt[k, : W[k]] - cmax[k]) for k in range(cells.size)]
            logZ, cell_laws = _class_dp(A, lo, int(total), gradient)
            ll += logZ + float(cmax.sum()) - tau * float(total)
            laws.append(cell_laws)
        return ll, laws


# ---------------------------------------------------------------------------
# the switch
# ---------------------------------------------------------------------------


def count_likelihood(obs: ReleaseObservation, likelihood: str = "auto", continuous=False):
    r"""The likelihood of counts through ``obs``: exact or Gaussian (module notes).

    Parameters
    ----------
    obs : ReleaseObservation
    likelihood : {"auto", "exact", "gaussian"}
        ``"auto"``: exact for a discrete Gaussian release with ``sigma <=
        EXACT_SIGMA_MAX`` whose invariants allow it, else Gaussian.
    continuous : bool
        Let the exact likelihood sum against Gaussian noise too (independent
        or projected, :func:`_exact_noise`), and ``"auto"`` choose it whenever
        it applies: for count laws whose Gaussian approximation is poor
        whatever the noise (the negative binomial's skewness tends to
        :math:`2\sqrt\alpha`, not 0, as the mean grows).

    Returns
    -------
    GaussianCountLikelihood or ExactDiscreteGaussianLikelihood
    """
    if likelihood not in LIKELIHOODS:
        raise InvariantDPError(
            f"`likelihood` ({likelihood!r}) must be one of {', '.join(map(repr, LIKELIHOODS))}."
        )
    if likelihood == "gaussian":
        return GaussianCountLikelihood(obs)
    why = exact_unavailable(obs, continuous)
    if likelihood == "exact":
        if why:
            raise InvariantDPError(f"`likelihood` ('exact') does not apply: {why}.")
        return ExactDiscreteGaussianLikelihood(obs, continuous)
    if not why and (continuous or obs.discrete_gaussian_sigma <= EXACT_SIGMA_MAX):
        return ExactDiscreteGaussianLikelihood(obs, continuous)
    return GaussianCountLikelihood(obs)
