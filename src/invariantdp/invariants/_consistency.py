"""Consistency of invariant values: do some data satisfy ``C x = c``, do these?

Internal to the ``invariants`` package: :func:`check_consistent` is used when
invariants are read from a document (where the values are not computed
from data), :func:`check_satisfied` by ``Invariants.check``.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from .._validation import InvariantDPError

#: general matrices with more entries are not checked for consistency by an SVD
CONSISTENCY_LIMIT = 1_000_000


def check_consistent(inv, name: str = "values", rtol: float = 1e-9) -> None:
    """Raise unless some data satisfy ``C x = c``, i.e. ``c`` lies in the range of ``C``.

    Margins must share one grand total, nested totals must add up to their
    parents; a general ``C`` of full row rank is always consistent, a
    rank-deficient one is checked by projecting ``c`` on the range of ``C``
    when it has at most ``CONSISTENCY_LIMIT`` entries (for larger ones a
    release whose value satisfies ``C value = c`` shows consistency).  ``inv``
    is an :class:`~invariantdp.invariants.Invariants`.
    """
    if inv.values is None:
        return
    c = inv.values
    kind = inv.kind
    if kind == "totals":
        return
    if kind == "one_way_margins":
        sums, start = [], 0
        for size in inv.shape:
            part = c[start : start + size]
            sums.append((float(np.sum(part)), float(np.sum(np.abs(part)))))
            start += size
        scale = max(m for _, m in sums)
        low, high = min(t for t, _ in sums), max(t for t, _ in sums)
        if not high - low <= rtol * scale:
            raise InvariantDPError(
                f"`{name}` are not the margins of any table: the margins along the "
                f"axes add up to different totals ({low:.17g} and {high:.17g})."
            )
        return
    if kind == "nested_totals":
        maps = inv._level_maps()  # the group of every level of each finest group
        sizes = [int(m.max()) + 1 for m in maps]
        starts = np.concatenate([[0], np.cumsum(sizes)])
        for j in range(1, len(maps)):
            parent = np.zeros(sizes[j], dtype=np.intp)
            parent[maps[j]] = maps[j - 1]
            child = c[starts[j] : starts[j + 1]]
            own = c[starts[j - 1] : starts[j]]
            got = np.bincount(parent, weights=child, minlength=sizes[j - 1])
            mag = np.bincount(parent, weights=np.abs(child), minlength=sizes[j - 1])
            bad = np.flatnonzero(~(np.abs(got - own) <= rtol * (mag + np.abs(own))))
            if bad.size:
                i = int(starts[j - 1] + bad[0])
                label = inv.names[i] if inv.names else f"row {i}"
                raise InvariantDPError(
                    f"`{name}` are not consistent: {label} is {own[bad[0]]:.17g} but the "
                    f"totals of level {j} inside it add up to {got[bad[0]]:.17g}."
                )
        return
    k, n = inv.matrix.shape
    if k * n > CONSISTENCY_LIMIT:
        return  # an SVD would take too long; a release's value still checks C value = c
    if inv.rank == k:
        return
    C = inv.dense_matrix()
    M = C @ inv._row_basis().T  # spans the range of C
    # any orthonormal basis of the range gives the same residual (not the canonical one)
    Q = linalg.orth(M) if M.size else np.zeros((C.shape[0], 0))
    # relative to the largest value: values near the float limit must not overflow the norm
    top = float(np.max(np.abs(c))) if c.size else 0.0
    unit = c / top if top > 0 else c
    resid = unit - Q @ (Q.T @ unit)
    if not np.linalg.norm(resid) <= 1e3 * rtol * np.linalg.norm(unit):
        raise InvariantDPError(
            f"`{name}` are not consistent: no data satisfy C x = values (the values are "
            f"off the range of C by {np.linalg.norm(resid) * top:.3g} in norm)."
        )


def check_satisfied(inv, flat: np.ndarray, name: str, rtol: float) -> None:
    """Raise unless the flat data ``flat`` satisfy ``C x = c`` to relative accuracy ``rtol``.

    Row ``i`` may be off by ``rtol * (|C| |x| + |c|)_i`` (``Invariants.check``;
    ``inv`` has values).
    """
    got = inv._apply_flat(flat)
    if inv.kind != "general":  # structured C has 0/1 entries: |C| |x| = C |x|
        magnitude = inv._apply_flat(np.abs(flat))
    else:
        magnitude = np.asarray(abs(inv.matrix) @ np.abs(flat), dtype=float)
    tol = rtol * (magnitude + np.abs(inv.values))
    bad = np.flatnonzero(~(np.abs(got - inv.values) <= tol))
    if bad.size:
        i = bad[0]
        label = inv.names[i] if inv.names else f"row {i}"
        raise InvariantDPError(
            f"`{name}` does not satisfy the invariants: {label} is {got[i]:.17g}, "
            f"the invariant value is {inv.values[i]:.17g} (relative tolerance {rtol:g})."
        )
