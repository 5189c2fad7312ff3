"""Release of a 2 x 2 table's ``x11`` with Tulap noise under invariant margins."""

from __future__ import annotations

import numpy as np

from .._validation import check_counts, check_delta, check_epsilon
from ..invariants import one_way_margins
from ..privacy import QueryAdjacency
from ..release import Release
from ..secure import random_source
from ._base import guarantee, make_release, resolve_secure
from ._integer_noise import tulap_mechanism
from ._side_channels import TABLE_RULE, secure_table

__all__ = ["odds_ratio_release"]


def odds_ratio_release(table, *, epsilon, delta=0.0, rng=None, secure=None) -> Release:
    r"""Release ``U = x11 + N`` of a 2 x 2 table with its one-way margins invariant.

    ``N`` is Tulap, the canonical noise distribution of
    :math:`f_{\epsilon,\delta}`.  With the margins published exactly, two
    tables with the same margins differ by multiples of
    ``(1, -1, -1, 1)``, which moves ``x11`` by 1, so the release is
    :math:`(D_t, A_{a(t)}, f_{\epsilon,\delta})`-DP with semi-adjacent
    parameter ``a(t) = 3`` (Cho & Awan, Examples 5 and 7, Theorem 37).  This
    is the statistic that :func:`~invariantdp.umpu_odds_ratio_test` consumes.

    Parameters
    ----------
    table : array_like, shape (2, 2)
        Confidential counts ``[[x11, x12], [x21, x22]]``.
    epsilon, delta : float
        Privacy parameters, ``epsilon > 0``, ``0 <= delta < 1``.
    rng : None, int, SeedSequence or numpy.random.Generator
        A seed or generator makes the release a simulation (numpy noise,
        reproducible, recorded as such in ``metadata["randomness"]``), not
        for publication; must be None (or a
        :class:`~invariantdp.secure.SecureGenerator`) with ``secure=True``.
    secure : None or bool, optional
        None (the default): secure unless ``rng`` is given; False: a
        simulation.  Secure draws the Tulap noise exactly from
        :mod:`secrets` for a production release: ``(x11 + G) + U`` with
        ``G`` the exact integer part and ``U`` the ``2**-53``-cell of the
        uniform part of one Tulap draw, the truncation decided exactly (see
        :func:`~invariantdp.mechanisms.tulap_mechanism` and
        :mod:`invariantdp.secure`).

    Returns
    -------
    Release
        ``value`` is ``U``; ``invariants`` hold ``(t1., t2., t.1, t.2)``.  The
        guarantee is that of :func:`~invariantdp.mechanisms.tulap_mechanism`
        on ``x11`` (with ``secure=True``, of the value and its run time:
        ``delta`` includes the run time's share, ``timing_tv``).

    Raises
    ------
    ValueError
        For a table that is not 2 x 2 of non-negative whole-number counts.  A
        simulation also refuses a total above ``2**53`` (showing the counts);
        a secure release instead clamps every cell to ``2**51 - 1`` (so that
        the margins are exact doubles; recorded as ``metadata["data_rule"]``),
        a rule that does not depend on the counts, and its messages never
        show them.

    References
    ----------
    Cho & Awan, Sec. 5.3; Awan & Slavkovic (2018) for the Tulap sampler.

    Examples
    --------
    >>> from invariantdp.mechanisms import odds_ratio_release
    >>> r = odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, rng=7)
    >>> r.invariants.values, r.simulation
    (array([17., 13., 16., 14.]), True)
    """
    secure = resolve_secure(secure, rng, "odds_ratio_release")
    random_source(rng, secure)  # the public checks first: a secure call reads its table last
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if secure:  # clamped, never refused for its size: a refusal would depend on the counts
        x = secure_table("table", table, (2, 2))
    else:
        x = check_counts("table", table, shape=(2, 2))
    # x11 has sensitivity 1 on the semi-adjacent data space: the Tulap mechanism
    noisy = tulap_mechanism(float(x[0, 0]), epsilon=epsilon, delta=delta, rng=rng, secure=secure)
    query = np.zeros((1, 4))
    query[0, 0] = 1.0
    return make_release(
        np.array(float(noisy.value)),
        "odds_ratio_release",
        noisy.noise,
        guarantee(
            noisy.guarantee.definition,
            dict(noisy.guarantee.params),
            adjacency=QueryAdjacency(
                "linf",
                1.0,
                coordinates_changed=1,
                relation="semi-adjacent: invariant-conforming tables at distance a(t) in the "
                "replace-one-record adjacency (x11 changes by at most 1)",
            ),
            semi_adjacent_parameter=3,
            dataspace="2 x 2 tables with the released one-way margins",
        ),
        invariants=one_way_margins((2, 2)).of(x),
        query=query,
        data_shape=(2, 2),
        metadata={"statistic": "x11", **({"data_rule": TABLE_RULE} if secure else {})},
        secure=secure,
        labels=table,  # a DataFrame's labels name x11 and the odds ratio (data_labels)
    )
