r"""The congenial mechanism :func:`conditional_release` and its result :class:`ConditionalRelease`.

See :mod:`invariantdp.mechanisms._congenial` for the target and the samplers.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..._deprecation import deprecated, renamed_keywords
from ..._progress import show_progress
from ..._results import Summary
from ..._rng import as_generator
from ..._validation import InvariantDPError, check_positive, check_positive_int
from ...exceptions import ConvergenceWarning
from ...invariants import Invariants
from ...privacy import QueryAdjacency
from ...release import NoiseLaw, Release
from .._base import (
    guarantee,
    make_release,
    release_part,
    resolve_secure,
    warn_unasked_simulation,
)
from ._diagnostics import SamplerDiagnostics, diagnose
from ._exact_conditional import exact_plan, run_exact
from ._mcmc import run_gibbs, run_mis
from ._targets import LinearInequalities, build_target

__all__ = ["ConditionalRelease", "conditional_release"]

SAMPLERS = ("auto", "exact", "gibbs", "mis")


@dataclass(frozen=True, eq=False, kw_only=True)
class ConditionalRelease(Release):
    r"""A congenial release with the draws and diagnostics that produced it.

    A :class:`~invariantdp.Release` -- one draw of
    :math:`M(x) \mid M(x) \in S^*` (the last state of the first chain),
    its invariants, noise law and guarantee -- with the sampler's output as
    further attributes.  :meth:`~invariantdp.Release.save` writes the
    Release part only; :meth:`~invariantdp.Release.load` gives back a plain
    Release.  The former ``.release`` attribute is a deprecated alias of
    that Release part.

    Attributes
    ----------
    draws : numpy.ndarray, shape (chains, draws, d)
        All retained draws of the flattened release.
    diagnostics : SamplerDiagnostics or None
        Acceptance, ESS and R-hat.  For exact i.i.d. draws the acceptance is 1
        and the ArviZ ESS is close to the number of draws.
    method : str
        The sampler used.
    inequalities : LinearInequalities or None
        The inequality invariants :math:`B s \ge b` the draws satisfy, if any.

    References
    ----------
    Gong & Meng (2020), Theorem 2.1 (the congenial release
    :math:`M(x) \mid M(x) \in S^*`) and Algorithm 1; Gao, Gong & Yu,
    Theorem 22.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Invariants
    >>> from invariantdp.mechanisms import conditional_release
    >>> res = conditional_release([30, 70], "laplace", Invariants(np.ones((1, 2))),
    ...                           epsilon=1.0, sensitivity=2.0, inequalities="nonnegative",
    ...                           sampler="gibbs", draws=200, chains=2, rng=0)
    >>> res.method, res.draws.shape, round(float(res.value.sum()), 9)
    ('gibbs', (2, 200, 2), 100.0)
    >>> bool((res.draws >= 0).all())
    True
    """

    draws: np.ndarray
    diagnostics: SamplerDiagnostics | None
    method: str
    inequalities: LinearInequalities | None = field(default=None, repr=False)

    release = release_part("ConditionalRelease")

    def summary(self) -> Summary:
        """The release's summary, followed by the sampler's diagnostics."""
        part = (
            f"exact i.i.d. draws: {self.draws.shape[1]}"
            if self.diagnostics is None
            else self.diagnostics.summary()
        )
        return super().summary().extend(part)

    def __repr__(self) -> str:
        diag = "" if self.diagnostics is None else f", ess_min={self.diagnostics.ess_min:.0f}"
        return (
            f"ConditionalRelease(method={self.method!r}, draws={self.draws.shape}{diag}, "
            f"value={np.array2string(self.value, threshold=6)})"
        )


#: Gong & Meng's name of the discrete Laplace mechanism, this function's former spelling
_DOUBLE_GEOMETRIC = deprecated(
    "the mechanism name 'double_geometric' of conditional_release()", "'discrete_laplace'"
)


#: what to use for a release to publish (no sampler here is exact)
_ALTERNATIVES = (
    "discrete_laplace_mechanism(x, ..., secure=True) or discrete_gaussian_mechanism(x, ..., "
    "secure=True) (exact integer noise, not conditioned on the invariants)"
)


@renamed_keywords(n_draws="draws", n_chains="chains", n_tune="tune")
def conditional_release(
    x,
    mechanism,
    invariants,
    inequalities=None,
    *,
    epsilon=None,
    mu=None,
    rho=None,
    sensitivity=1.0,
    sampler="auto",
    draws=1000,
    chains=4,
    tune=200,
    thin=1,
    proposal_index=None,
    proposal_epsilon=None,
    proposal_sigma=None,
    warn=True,
    rng=None,
    secure=None,
    progress=None,
) -> ConditionalRelease:
    r"""Release :math:`M(x) \mid M(x) \in S^*` for an additive mechanism (congenial privacy).

    Parameters
    ----------
    x : array_like
        Confidential query :math:`s^*`, of the shape of ``invariants``
        (integer counts for the integer-valued mechanisms).
    mechanism : {"discrete_laplace", "discrete_gaussian", "laplace", "gaussian"}
        The unconstrained additive mechanism :math:`M` (Definitions 1.1-1.2;
        Lemma 13 of Gao et al.), independent noise on every cell, by its name
        in :data:`~invariantdp.mechanisms.MECHANISMS`.  ``"discrete_laplace"``
        is Gong & Meng's double geometric mechanism (``"double_geometric"``,
        its former name here, still works with a ``DeprecationWarning``).
    invariants : Invariants
        Equality invariants :math:`A s = a`; values default to those of ``x``
        and, when given, must be satisfied by ``x``.
    inequalities : None, "nonnegative", LinearInequalities or (B, b)
        Inequality invariants :math:`B s \ge b`.
    epsilon : float
        Laplace / discrete Laplace (double geometric): noise rate
        ``epsilon / sensitivity`` per cell (:math:`a = e^{-\epsilon/\nabla}` in Eq. 1.3).
    mu : float
        Gaussian: :math:`\mu`-GDP of the unconstrained mechanism,
        ``sigma = sensitivity / mu``.
    rho : float
        Discrete Gaussian: :math:`\rho`-zCDP, ``sigma = sensitivity / sqrt(2 rho)``.
    sensitivity : float
        Per-cell sensitivity :math:`\nabla(s)` (l1 for Laplace-type, l2 for
        Gaussian-type noise).
    sampler : {"auto", "exact", "gibbs", "mis"}
        ``"auto"`` is ``"exact"`` where exact i.i.d. sampling applies (integer
        noise with 0/1 invariants and cells bounded below, with a class-total
        fibre of at most a million points; a one-dimensional fibre; spherical
        Gaussian noise with equalities only), else ``"gibbs"`` (general
        inequalities, non-0/1 invariants, fibres too large to enumerate).
    draws, chains, tune, thin : int
        Retained draws per chain, chains, discarded tuning draws, thinning
        (the names of PyMC's ``pm.sample``).  Exact sampling returns
        ``chains * draws`` i.i.d. draws (``tune`` and ``thin`` are ignored),
        arranged as ``chains`` chains so that the ArviZ ESS and R-hat reported
        with them can be compared with MCMC.  The old names ``n_draws``,
        ``n_chains`` and ``n_tune`` still work, with a ``DeprecationWarning``,
        until the next release.
    proposal_index : array_like of int, optional
        MIS only: the proposal index set :math:`\mathcal I` (0-based), of size
        ``d - rank(A)`` with ``A[:, complement]`` non-singular.  Default: the
        complement is chosen by pivoted QR.
    proposal_epsilon, proposal_sigma : float, optional
        MIS only: the tuning parameter :math:`\tilde\epsilon` of the proposal
        (Laplace-type) or its standard deviation (Gaussian-type); default
        the mechanism's own.
    warn : bool
        Emit a :class:`~invariantdp.exceptions.ConvergenceWarning` when
        R-hat > 1.01 or ESS < 100.
    rng : None, int, SeedSequence or numpy.random.Generator
    secure : None or bool, optional
        None (default) or False: a simulation (every sampler here works in
        floating point; None without ``rng`` warns, ``SimulationWarning``);
        True is refused and names the secure mechanisms (module notes).
    progress : bool, optional
        Show a progress bar of the MCMC samplers (default: in a terminal or
        a notebook, not under CI; :mod:`invariantdp._progress`).

    Returns
    -------
    ConditionalRelease
        A :class:`~invariantdp.Release` (its ``metadata["randomness"]`` is
        ``"simulation"`` and ``metadata["method"]`` the sampler used) with
        the sampler's ``.draws``, ``.diagnostics`` and ``.method``.

    Notes
    -----
    Privacy (Theorem 2.1): if :math:`M` is :math:`\epsilon`-DP, the conditional
    mechanism is :math:`(1+\gamma)\epsilon`-DP on invariant-conforming
    neighbours for some :math:`\gamma \in [-1, 1]`; the guarantee recorded is
    the safe :math:`2\epsilon` (:math:`\gamma = 1`).  For the Gaussian
    mechanism with equality invariants only, conditioning equals projection
    (Gao et al., Theorem 22) and the release is :math:`\mu`-GDP induced
    subspace DP (their Corollary 14).  MCMC output is only approximately a
    draw of the target; check ``diagnostics``.

    References
    ----------
    Gong & Meng (2020), Eq. 2.3, Theorem 2.1, Algorithm 1, Example 4.1;
    Gao, Gong & Yu, Theorem 22.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Invariants
    >>> from invariantdp.mechanisms import conditional_release
    >>> total = Invariants(np.ones((1, 2)))
    >>> res = conditional_release([30, 70], "laplace", total, epsilon=1.0, sensitivity=2.0,
    ...                           draws=5, rng=1)
    >>> res.method, round(float(res.value.sum()), 9)
    ('exact', 100.0)
    """
    if isinstance(mechanism, str) and mechanism == "double_geometric":
        _DOUBLE_GEOMETRIC.warn(stacklevel=3)  # the caller, past the renamed_keywords wrapper
        mechanism = "discrete_laplace"
    resolve_secure(secure, rng, "conditional_release", exact=False, alternatives=_ALTERNATIVES)
    if sampler not in SAMPLERS:
        raise InvariantDPError(
            f"`sampler` ({sampler!r}) must be one of {', '.join(map(repr, SAMPLERS))}."
        )
    show_progress(progress)  # its type, before any work
    draws = check_positive_int("draws", draws)
    chains = check_positive_int("chains", chains)
    tune = check_positive_int("tune", tune, minimum=0)
    thin = check_positive_int("thin", thin)
    target, privacy, ineq, values = build_target(
        x, mechanism, invariants, inequalities, epsilon, mu, rho, sensitivity
    )
    gen = as_generator(rng)
    d, r = target.d, target.A.shape[0]
    t0 = time.perf_counter()
    plan, why = None, "the noise is not integer-valued"
    if sampler in ("auto", "exact") and target.integer:
        plan, why = exact_plan(target)
    exact_ok = (
        plan is not None or (d - r == 1) or (target.spherical_gaussian and target.unconstrained)
    )
    if sampler == "auto":
        sampler = "exact" if exact_ok else "gibbs"
    elif sampler == "exact" and not exact_ok:
        raise InvariantDPError(
            "`sampler` ('exact') needs integer noise with 0/1 invariants and bounded cells "
            f"(here {why}), a one-dimensional fibre (here d - rank(A) = {d - r}) or "
            "Gaussian noise with equality invariants only."
        )
    if sampler == "exact":
        samples = run_exact(target, draws * chains, gen, invariants, plan)
        samples = samples.reshape(chains, draws, d)
    elif sampler == "gibbs":
        samples, accept = run_gibbs(target, chains, tune, draws, thin, gen, progress=progress)
    else:
        if target.laplace_type:
            param = (
                target.rate
                if proposal_epsilon is None
                else check_positive("proposal_epsilon", proposal_epsilon) / sensitivity
            )
        else:
            param = (
                target.sigma
                if proposal_sigma is None
                else check_positive("proposal_sigma", proposal_sigma)
            )
        samples, accept = run_mis(
            target, chains, tune, draws, thin, gen, proposal_index, param, progress=progress
        )
    elapsed = time.perf_counter() - t0
    if sampler == "exact":
        diagnostics = diagnose(sampler, samples, 1.0, elapsed, 0, 1)
    else:
        diagnostics = diagnose(sampler, samples, accept, elapsed, tune, thin)
        if warn and not diagnostics.ok:
            warnings.warn(
                f"the {sampler} chains may not have converged: max R-hat "
                f"{diagnostics.rhat_max:.3f} (want < 1.01), min ESS {diagnostics.ess_min:.0f} "
                "(want >= 100); increase draws/tune"
                + (" or use sampler='gibbs'." if sampler == "mis" else "."),
                ConvergenceWarning,
                # the caller of conditional_release, past the renamed_keywords wrapper
                stacklevel=3,
            )
    value = samples[0, -1].reshape(invariants.shape)
    if target.integer:
        value = np.round(value).astype(np.int64)
    sampling = {
        "draws": samples,
        "diagnostics": diagnostics,
        "method": sampler,
        "inequalities": ineq,
    }
    release = _conditional_release(
        value, mechanism, target, privacy, invariants, values, sensitivity, sampling, x
    )
    # the caller of conditional_release, past the renamed_keywords wrapper
    warn_unasked_simulation(secure, rng, "conditional_release", _ALTERNATIVES, stacklevel=4)
    return release


_DATASPACE = "data sets whose query satisfies the released invariants"


def _guarantee(target, privacy, sensitivity):
    """The recorded guarantee: Gong & Meng, Theorem 2.1, or Gao, Gong & Yu, Theorem 22."""
    if target.laplace_type:
        eps0 = privacy["epsilon"]
        return guarantee(
            "epsilon-DP",
            {"epsilon": 2.0 * eps0, "epsilon_unconstrained": eps0, "gamma": 1.0},
            adjacency=QueryAdjacency(
                "l1",
                float(sensitivity),
                relation="invariant-conforming neighbours (Gong & Meng, Theorem 2.1, gamma = 1)",
            ),
            dataspace=_DATASPACE,
        )
    definition = "zCDP" if "rho" in privacy else "GDP"
    if target.spherical_gaussian and target.unconstrained:
        adjacency = (
            "induced subspace DP: neighbours conforming to the invariants "
            "(Gao, Gong & Yu, Theorem 22 and Corollary 14)"
        )
    else:
        adjacency = (
            "guarantee of the unconstrained mechanism; conditioning on "
            "inequalities may change it (Gong & Meng, Theorem 2.1)"
        )
    return guarantee(
        definition,
        dict(privacy),
        adjacency=QueryAdjacency("l2", float(sensitivity), relation=adjacency),
        dataspace=_DATASPACE,
    )


def _conditional_release(
    value, mechanism, target, privacy, invariants, values, sensitivity, sampling, labels=None
):
    """The :class:`ConditionalRelease` of a draw; ``sampling`` holds its extra fields."""
    ineq = sampling["inequalities"]
    metadata = {
        "congenial": True,
        "conditioned_on": "A s = a" + ("" if ineq is None else " and B s >= b"),
        "method": sampling["method"],
        "sensitivity": float(sensitivity),
        "noise_per_cell": "independent, before conditioning",
    }
    if ineq is not None:
        metadata["inequalities"] = ineq.to_dict()
    kind = target.kind
    return make_release(
        value,
        f"conditional_{mechanism}",
        NoiseLaw(kind.family, {kind.scale_key: target.noise_scale}),
        _guarantee(target, privacy, sensitivity),
        invariants=Invariants(invariants.matrix, values, invariants.shape, invariants.names),
        query=None,
        data_shape=invariants.shape,
        metadata=metadata,
        # every sampler draws from a numpy Generator: never secure
        secure=False,
        cls=ConditionalRelease,
        extra=sampling,
        labels=labels,
    )
