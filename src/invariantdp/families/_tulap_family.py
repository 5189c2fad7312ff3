r"""The Tulap noise family: its calibration, claim check, likelihood and test view.

Tulap lives in three places, each holding one thing: the law and its closed
forms in :mod:`invariantdp.distributions` (:data:`~invariantdp.distributions.tulap`,
:mod:`~invariantdp.distributions._tulap_forms`), its exact sampler with the
other exact samplers (:mod:`invariantdp.distributions._exact_samplers`), and the
family here: what a release records (``b``, ``q``, ``scale``), how
``(epsilon, delta)`` calibrate it, what a recorded guarantee may claim, how
PyMC observes it, and the view a DP test needs (:class:`TulapTails`).

The test view evaluates the closed forms in the parametrisation
``(log b, q, 1 - q)`` of :mod:`~invariantdp.distributions._tulap_forms`:
``log b = -epsilon`` is exact for every epsilon, where ``b`` underflows to 0
(epsilon > ~745) or rounds to 1 (epsilon < ~1e-16), and ``1 - q`` keeps its
precision when ``q`` rounds to 1.  A release records ``(b, q)``; when its
guarantee states the ``(epsilon, delta)`` that calibrate exactly that
``(b, q)``, the view takes ``log b = -epsilon`` (:func:`release_tails`).

References
----------
.. [1] Awan, J. and Slavkovic, A. (2018). "Differentially private uniformly
   most powerful tests for binomial data", NeurIPS 31, Def. 4.1, Thm 4.5.
.. [2] Cho, J. and Awan, J. "Semi-DP and invariant statistics", Def. 35,
   Lemma 36, Eq. 6.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from .._bounded_cache import BoundedCache
from .._validation import (
    InvariantDPError,
    check_delta,
    check_epsilon,
    check_positive,
    check_real,
    doc_positive,
    doc_probability,
    format_value,
)
from ..distributions import (
    canonical_noise,
    log_b_power,
    truncate_logcdf,
    tulap,
    tulap_gen,
    tulap_logcdf,
    tulap_params,
    tulap_ppf,
    tulap_privacy,
    tulap_privacy_gen,
    tulap_privacy_shapes,
    tulap_untruncated_var,
)
from ..privacy import TradeoffFunction
from ._claims import REL, eps_delta, overstated, unsupported
from ._family import register_noise_family
from ._likelihood import TULAP_LIKELIHOOD, NoiseLikelihood
from ._schemas import params_schema
from ._tails import NoiseTails

__all__ = [
    "TULAP",
    "TulapTails",
    "noise_tails",
    "release_tails",
    "tulap_shape_tails",
    "tulap_tails",
]

#: the test function is summed exactly where F is above exp(-_CUT_LOG) and below 1 minus it
_CUT_LOG = 70.0
#: -log of the smallest positive double: a Tulap b that underflowed to 0 means epsilon above it
_LOG_TINY = 744.4400719213812


class TulapTails(NoiseTails):
    """Tulap noise ``F`` as a DP test uses it: closed forms, exact on the lattice.

    Held as ``log_b``, ``q`` and ``qc = 1 - q`` (module notes); ``b`` and the
    privacy parameters are kept for display.  On a run of integers ``h`` the
    fractional part of ``h - u`` is the same for every point, so
    ``F(sign (h - u))`` is ``b**|k| F(frac)`` on the lower half and
    ``1 - b**|k| F(-frac)`` on the upper (Awan & Slavkovic 2018, Def. 4.1):
    one cell value, then a power per point.

    Examples
    --------
    >>> t = tulap_tails(1.0)
    >>> t.description, t.tail_rate
    ('Tulap(b=0.367879, q=0)', 1.0)
    >>> # F(-1) = b / 2 for q = 0
    >>> [round(float(v), 6) for v in t.cdf_lattice(np.arange(-1, 2), 0.0, 1.0)]
    [0.18394, 0.5, 0.81606]
    """

    exactly_symmetric = True

    def __init__(self, log_b, q, qc, b, description, epsilon=None, delta=None):
        super().__init__(None, description, epsilon, delta)
        self.log_b, self.q, self.qc, self.b = float(log_b), float(q), float(qc), float(b)

    @cached_property
    def law(self):
        """The frozen Tulap law (built on first use: freezing costs ~1 ms)."""
        if self.epsilon is not None and self.log_b == -self.epsilon:
            return tulap_privacy(self.epsilon, self.delta)
        return tulap(self.b, self.q)

    @property
    def tail_rate(self) -> float:
        """``epsilon = -log b``: ``F(x) <= b**(-(x + 1))`` (also truncated, where F <= 1/2)."""
        return -self.log_b

    def logcdf(self, x) -> np.ndarray:
        return tulap_logcdf(np.asarray(x, dtype=float), self.log_b, self.q, self.qc)

    def ppf(self, u) -> np.ndarray:
        return tulap_ppf(np.asarray(u, dtype=float), self.log_b, self.q, self.qc)

    def _cell(self, frac: float) -> float:
        """``log F(frac)`` in the central cell.

        :func:`~invariantdp.distributions._tulap_forms.tulap_cell_logcdf` for a scalar.
        """
        t = frac + 0.5
        if not t > 0.0:
            return self.log_b - math.log1p(math.exp(self.log_b))
        b = math.exp(self.log_b)
        return math.log(b + t * -math.expm1(self.log_b)) - math.log1p(b)

    def _lattice_parts(self, h: np.ndarray, u: float, sign: float):
        """``x = sign (h - u) = k + frac`` for increasing integers ``h``.

        Returns ``(|k| log b, lower slice, upper slice, log F(frac), log F(-frac))``:
        ``k`` is monotone in ``h``, so the lower half (``x <= 0``) is a prefix
        (``sign > 0``) or a suffix.
        """
        d0 = sign * (float(h[0]) - u)
        k0 = float(round(d0))
        frac = d0 - k0
        if h[-1] - h[0] == h.size - 1:  # a run (the p-value windows): no subtraction
            k = np.arange(h.size, dtype=float)
        else:
            k = (h - h[0]).astype(float)
        k *= sign
        k += k0
        n_low = int(np.count_nonzero((k < 0) | ((k == 0) & (frac <= 0))))
        if sign > 0:
            low, high = slice(0, n_low), slice(n_low, k.size)
        else:
            low, high = slice(k.size - n_low, k.size), slice(0, k.size - n_low)
        np.abs(k, out=k)
        if self.log_b > -np.inf:
            k *= self.log_b  # |k| log b; b**0 = 1 (b > 0)
        else:
            k = log_b_power(k, self.log_b)  # b = 0: b**0 = 1, b**k = 0
        return k, low, high, self._cell(frac), self._cell(-frac)

    def _lattice_order(self, h: np.ndarray) -> bool:
        """Whether the closed forms apply: increasing ``h`` (the callers' windows)."""
        return h.size < 2 or not np.any(np.diff(h) <= 0)

    def logcdf_lattice(self, h: np.ndarray, u: float, sign: float) -> np.ndarray:
        """``log F(sign * (h - u))`` for integers ``h`` (any order)."""
        if h.size == 0 or self.q > 0.5 or not self._lattice_order(h):
            # q > 1/2 needs the centred form of the truncated cdf (see tulap_forms.py)
            return self.logcdf(sign * (h - u))
        klb, low, high, c_left, c_right = self._lattice_parts(h, u, sign)
        out = np.empty(klb.size)
        np.add(klb[low], c_left, out=out[low])
        upper = out[high]
        np.add(klb[high], c_right, out=upper)
        np.minimum(upper, 0.0, out=upper)
        np.exp(upper, out=upper)
        np.negative(upper, out=upper)
        with np.errstate(divide="ignore"):
            np.log1p(upper, out=upper)
        if self.q > 0:
            # the direct form on both halves (q <= 1/2 here); the truncated cdf is 1 above
            # the support
            out = np.minimum(truncate_logcdf(out, self.q, self.qc), 0.0)
        return out

    def cdf_lattice(self, h: np.ndarray, u: float, sign: float) -> np.ndarray:
        """``F(sign * (h - u))`` for integers ``h`` (linear scale, any order)."""
        if self.q > 0 or h.size < 2 or not self._lattice_order(h):
            return np.exp(self.logcdf_lattice(h, u, sign))
        klb, low, high, c_left, c_right = self._lattice_parts(h, u, sign)
        out = np.empty(klb.size)
        np.add(klb[low], c_left, out=out[low])
        np.exp(out[low], out=out[low])
        upper = out[high]
        np.add(klb[high], c_right, out=upper)
        np.exp(upper, out=upper)
        np.subtract(1.0, upper, out=upper)
        return out

    def cut(self, u: float, sign: float):
        """Where ``F(sign * (h - u))`` is within ``F(-L)`` of 0 or 1 (``|h - u| >= L``).

        ``F(-L) <= b**(L - 1/2)``: with ``L`` about ``_CUT_LOG / epsilon`` the
        test function needs evaluating on ``2 L`` points only (see
        ``invariantdp.inference._logconcave_sums._cut_sum``).
        """
        if not self.log_b < 0.0:
            return None
        half = min(_CUT_LOG / -self.log_b, 1e15) + 1.0
        # F(-x) <= b**(x - 1/2) for x >= 0, also truncated (there F <= 1/2)
        f_edge = math.exp(self.log_b * (half - 0.5))
        return u - half, u + half, sign > 0, f_edge


def _description(b: float, q: float, qc: float, epsilon: float | None) -> str:
    """``Tulap(b=..., q=...)``, with ``b = exp(-epsilon)`` where b is 0 or 1 to 6 digits."""
    if epsilon is not None and not 1e-6 <= epsilon <= 700.0:
        b_text = f"exp(-{epsilon:.6g})"
    else:
        b_text = f"{b:.6g}"
    q_text = f"{q:.6g}" if q <= 0.5 else f"1-{qc:.6g}"
    return f"Tulap(b={b_text}, q={q_text})"


def tulap_shape_tails(b: float, q: float, epsilon=None, delta=None) -> TulapTails:
    """The test view of ``Tulap(0, b, q)``, ``0 <= b < 1``, ``0 <= q < 1``.

    ``epsilon``/``delta``, when given, are only reported.

    Examples
    --------
    >>> tulap_shape_tails(0.5, 0.0).description
    'Tulap(b=0.5, q=0)'
    """
    b = check_real("b", b)
    q = check_real("q", q)
    if not 0.0 <= b < 1.0:
        raise InvariantDPError(f"Tulap `b` ({b}) must be in [0, 1).")
    if not 0.0 <= q < 1.0:
        raise InvariantDPError(f"Tulap `q` ({q}) must be in [0, 1).")
    with np.errstate(divide="ignore"):
        log_b = float(np.log(b))
    return TulapTails(log_b, q, 1.0 - q, b, _description(b, q, 1.0 - q, None), epsilon, delta)


def _privacy_tails(epsilon, delta) -> TulapTails:
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    log_b, q, qc = (float(v) for v in tulap_privacy_shapes(epsilon, delta))
    b = float(np.exp(log_b))
    return TulapTails(log_b, q, qc, b, _description(b, q, qc, epsilon), epsilon, delta)


#: test views of f_{epsilon,delta} by the (type, value) of plain Python numbers, which
#: validate the same way every time (tests and power studies repeat their parameters)
_PRIVACY_TAILS = BoundedCache("Tulap test views by (epsilon, delta)", maxsize=256)
_PLAIN = (float, int)


def tulap_tails(epsilon, delta=0.0) -> TulapTails:
    """The test view of the Tulap CND of ``f_{epsilon,delta}``, ``log b = -epsilon`` exact.

    Any ``epsilon > 0`` (``b`` may round to 1 or underflow to 0 in double
    precision; the closed forms keep ``log b``) and ``0 <= delta < 1``.

    Examples
    --------
    >>> t = tulap_tails(1e-20)
    >>> t.log_b, t.description
    (-1e-20, 'Tulap(b=exp(-1e-20), q=0)')
    """
    if type(epsilon) in _PLAIN and type(delta) in _PLAIN:
        key = (type(epsilon), epsilon, type(delta), delta)
        return _PRIVACY_TAILS.get(key, lambda: _privacy_tails(epsilon, delta))
    return _privacy_tails(epsilon, delta)


def release_tails(params: dict, guarantee: dict) -> TulapTails:
    """The test view of the Tulap noise a release records: exact from epsilon when they agree.

    A release made by the Tulap mechanism records ``(b, q)`` calibrated from
    its per-coordinate ``(epsilon, delta)`` (``epsilon_per_coordinate`` and
    ``delta_per_coordinate`` when recorded, else the guarantee's); when
    calibrating them again gives exactly that ``(b, q)``, ``log b = -epsilon``
    is used (exact also where ``b`` underflowed to 0).  Any other ``(b, q)``
    is taken as the noise law as recorded.
    """
    scale = params.get("scale", 1.0)
    if scale != 1.0:
        raise InvariantDPError(
            f"the Release's Tulap noise has `scale` ({scale!r}); the test needs scale 1 "
            "(a statistic of sensitivity 1)."
        )
    b, q = params["b"], params["q"]
    # the noise's own (epsilon, delta): per coordinate, before composition and the run time
    eps = guarantee.get("epsilon_per_coordinate", guarantee.get("epsilon"))
    delta = guarantee.get("delta_per_coordinate", guarantee.get("delta", 0.0))
    if eps is not None:
        try:
            eps, delta = check_epsilon(eps), check_delta(delta)
            exact = tulap_params(eps, delta) == (b, q)
        except (InvariantDPError, TypeError):
            exact = False
        if exact:
            return tulap_tails(eps, delta)
    return tulap_shape_tails(b, q, eps, delta)


def noise_tails(noise) -> NoiseTails:
    """The test view of a noise law given to a test directly (``noise=``).

    Parameters
    ----------
    noise : frozen distribution, TradeoffFunction or NoiseTails
        A frozen Tulap (``tulap(b, q)`` or ``tulap_from_privacy(epsilon,
        delta)``, with loc 0 and scale 1), any frozen scipy continuous law
        symmetric about 0 (used as the CND), or a
        :class:`~invariantdp.privacy.TradeoffFunction`, whose CND is built by
        Lemma 36 of Cho & Awan.

    Returns
    -------
    NoiseTails

    Examples
    --------
    >>> from invariantdp.distributions import tulap_from_privacy
    >>> noise_tails(tulap_from_privacy(1.0)).log_b
    -1.0
    """
    if isinstance(noise, NoiseTails):
        return noise
    if isinstance(noise, TradeoffFunction):
        return NoiseTails(canonical_noise(noise), f"CND of {noise!r}")
    dist_obj = getattr(noise, "dist", None)
    if isinstance(dist_obj, tulap_gen):
        shapes, loc, scale = dist_obj._parse_args(*noise.args, **noise.kwds)
        if loc != 0.0 or scale != 1.0:
            raise InvariantDPError(
                f"`noise` must be a Tulap with loc=0 and scale=1 (the statistic's sensitivity "
                f"is 1), got loc={loc!r}, scale={scale!r}."
            )
        if isinstance(dist_obj, tulap_privacy_gen):
            return tulap_tails(check_epsilon(shapes[0]), check_delta(shapes[1]))
        return tulap_shape_tails(*shapes)
    if not (hasattr(noise, "logcdf") and hasattr(noise, "ppf")):
        raise TypeError(
            "`noise` must be a frozen scipy.stats distribution or a TradeoffFunction, "
            f"got {type(noise).__name__}."
        )
    med = float(noise.ppf(0.5))
    if abs(med) > 1e-8:
        raise InvariantDPError(f"`noise` must be symmetric about 0, but its median is {med:g}.")
    return NoiseTails(noise, f"{getattr(getattr(noise, 'dist', None), 'name', 'custom')} noise")


# ---------------------------------------------------------------------------
# the family
# ---------------------------------------------------------------------------


def _terms(given, invariants):
    """``b, q`` of the canonical noise of ``f_{epsilon, delta}`` (Awan & Slavkovic 2018)."""
    if "epsilon" not in given:
        raise InvariantDPError("Tulap noise takes `epsilon` (and `delta`), or its own `b`, `q`.")
    eps = check_epsilon(given.pop("epsilon"))
    delta = check_delta(given.pop("delta", 0.0))
    sens = given.pop("sensitivity", None)
    sens = None if sens is None else check_positive("sensitivity", sens)
    b, q = tulap_params(eps, delta)
    params = {"b": b, "q": q, "scale": 1.0 if sens is None else sens}
    return params, ("(epsilon, delta)-DP", {"epsilon": eps, "delta": delta})


def _likelihood(p, congenial):
    b, q, scale = p["b"], p.get("q", 0.0), p.get("scale", 1.0)
    with np.errstate(divide="ignore"):
        log_b = float(np.log(b))
    support = None
    if q > 0:
        support = tuple(float(v) * scale for v in tulap.support(b, q))
    # the untruncated Tulap's standard deviation (Awan & Slavkovic 2018, Def. 4.1)
    sd = scale * math.sqrt(float(tulap_untruncated_var(log_b)))
    return NoiseLikelihood(
        TULAP_LIKELIHOOD, {"b": b, "q": q, "scale": scale}, sd=sd, support=support
    )


def _claim(noise: dict, definition: str, params: dict, metadata: dict) -> bool:
    """``epsilon >= m log(1/b)``, ``delta >= 1 - (1 - delta_q)**m`` (``invariantdp.families``).

    ``m`` is the number of coordinates the structured neighbours change (1
    when not stated), each by at most the law's ``scale``.  Without
    structured neighbours the recorded ``coordinates_changed`` is used and
    the claim is unchecked.
    """
    structured = metadata.get("sensitivity") is not None
    claim = eps_delta(definition, params)
    if claim is None:
        if structured:
            raise unsupported("tulap", definition, "epsilon-DP or (epsilon, delta)-DP")
        return False
    eps, delta = claim
    b, q = float(noise["b"]), float(noise["q"])
    recorded = params.get("coordinates_changed")
    if structured:
        if metadata["norm"] != "linf":
            raise InvariantDPError(
                f"`guarantee.adjacency.norm` ({format_value(metadata['norm'])}) is not the norm "
                "Tulap noise is calibrated in (linf: each coordinate by at most its scale)."
            )
        scale = float(noise.get("scale", 1.0))
        if metadata["sensitivity"] > scale * (1 + REL):
            raise InvariantDPError(
                f"`guarantee.adjacency.sensitivity` ({metadata['sensitivity']!r}) exceeds the "
                f"Tulap scale ({scale!r}): the noise protects changes of at most its scale."
            )
        m = metadata.get("coordinates_changed") or 1
        if recorded is not None and recorded != m:
            raise InvariantDPError(
                f"`guarantee.params.coordinates_changed` ({format_value(recorded)}) differs from "
                f"`guarantee.adjacency.coordinates_changed` ({m}): the neighbours are stated once."
            )
    else:
        m = int(recorded or 1)
    eps_noise = -math.log(b) if b > 0 else _LOG_TINY
    if eps < m * eps_noise * (1 - REL):
        raise overstated(
            "epsilon",
            eps,
            f"Tulap noise with b = {b!r} gives epsilon = {eps_noise:.10g} per coordinate, so "
            f"{m} changed coordinate(s) need epsilon >= {m * eps_noise:.10g}.",
        )
    per_eps = params.get("epsilon_per_coordinate")
    if per_eps is not None and per_eps < eps_noise * (1 - REL):
        raise overstated(
            "epsilon_per_coordinate",
            per_eps,
            f"Tulap noise with b = {b!r} gives epsilon = {eps_noise:.10g} per coordinate.",
        )
    if b > 0 and q > 0:
        # tulap_params inverted: q = 2 delta b / (1 - b + 2 delta b)
        delta_q = q * (1 - b) / (2 * b * (1 - q))
        need = -math.expm1(m * math.log1p(-min(delta_q, 1.0 - 2.0**-53)))
        if delta < need * (1 - REL):
            raise overstated(
                "delta",
                delta,
                f"Tulap noise with b = {b!r} and q = {q!r} gives delta = {delta_q:.10g} per "
                f"coordinate, so {m} changed coordinate(s) need delta >= {need:.10g}.",
            )
        per = params.get("delta_per_coordinate")
        if per is not None and per < delta_q * (1 - REL):
            raise overstated(
                "delta_per_coordinate",
                per,
                f"Tulap noise with b = {b!r} and q = {q!r} gives delta = {delta_q:.10g}.",
            )
    return structured


#: Tulap noise (Awan & Slavkovic 2018, Def. 4.1): ``b`` in [0, 1) (0: the uniform limit
#: epsilon -> inf), truncation ``q`` in [0, 1), optional ``scale``
TULAP = register_noise_family(
    "tulap",
    lambda p: tulap(p["b"], p["q"], loc=0.0, scale=p.get("scale", 1.0)),
    schema=params_schema({"b": doc_probability, "q": doc_probability}, {"scale": doc_positive}),
    likelihood=_likelihood,
    terms=_terms,
    tails=release_tails,
    claim=_claim,
)
