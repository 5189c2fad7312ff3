"""Bases and pivots that depend on the subspace alone, never on the BLAS build (issue 21, 6).

The references here are computed independently, in exact rational arithmetic
(``fractions.Fraction``): the reduced row echelon form by textbook
Gauss-Jordan, the Gram-Schmidt of its rows, and only then a rounding to float.
"""

import json
import math
import os
import platform
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from invariantdp._linalg import _fixed_linalg as fl
from invariantdp.invariants import Invariants
from invariantdp.sensitivity import contingency_sensitivity_space, span_basis

EPS = np.finfo(float).eps


def exact_rref(A):
    """Rows (lists of Fractions) and pivot columns of the reduced row echelon form of ``A``."""
    rows = [[Fraction(float(x)) for x in row] for row in np.asarray(A, dtype=float)]
    d = len(rows[0]) if rows else 0
    out, pivots = [], []
    for j in range(d):
        i = next((i for i, row in enumerate(rows) if row[j] != 0), None)
        if i is None:
            continue
        p = rows.pop(i)
        p = [x / p[j] for x in p]
        rows = [[a - r[j] * b for a, b in zip(r, p, strict=True)] for r in rows]
        out = [[a - r[j] * b for a, b in zip(r, p, strict=True)] for r in out]
        out.append(p)
        pivots.append(j)
    return out, pivots


def exact_gram_schmidt(rows):
    """Orthonormal rows (floats) from the exact Gram-Schmidt of Fraction rows, in order."""
    ws = []
    for r in rows:
        w = list(r)
        for u in ws:
            c = sum(a * b for a, b in zip(r, u, strict=True)) / sum(b * b for b in u)
            w = [a - c * b for a, b in zip(w, u, strict=True)]
        ws.append(w)
    out = []
    for w in ws:
        n2 = sum(x * x for x in w)
        out.append([math.copysign(math.sqrt(x * x / n2), x) for x in w])
    return np.array(out).reshape(len(ws), -1)


def exact_span_basis(S):
    return exact_gram_schmidt(exact_rref(S)[0]).T


def exact_null_basis(C):
    R, pivots = exact_rref(C)
    d = np.asarray(C).shape[1]
    free = [f for f in range(d) if f not in pivots]
    N = []
    for f in free:
        v = [Fraction(0)] * d
        v[f] = Fraction(1)
        for row, p in zip(R, pivots, strict=True):
            v[p] = -row[f]
        N.append(v)
    return exact_gram_schmidt(N).T if N else np.zeros((d, 0))


SPACES = {
    "S_Semi 2x2": contingency_sensitivity_space(2, 2),
    "S_Semi 3x4": contingency_sensitivity_space(3, 4),
    "S_Semi 4x4": contingency_sensitivity_space(4, 4),
    "S_Semi 5x5": contingency_sensitivity_space(5, 5),
    "S_Semi 2x10": contingency_sensitivity_space(2, 10),
    "dyadic": np.array([[0.5, -0.25, 0.0, 1.0], [1.5, 0.0, -0.75, 2.0], [2.0, -0.25, -0.75, 3.0]]),
    "wide exponents": np.array([[2.0**-40, 1.0, 3.0], [1.0, 2.0**30, -5.0]]),
    "primes": np.array([[3.0, 5.0, 7.0, 11.0], [13.0, 17.0, 19.0, 23.0], [1.0, 0.0, 0.0, -1.0]]),
}


@pytest.mark.parametrize("name", SPACES)
def test_span_basis_equals_the_exact_gram_schmidt_of_the_echelon_form(name):
    S = SPACES[name]
    B = span_basis(S)
    ref = exact_span_basis(S)
    assert B.shape == ref.shape == (S.shape[1], np.linalg.matrix_rank(S))
    np.testing.assert_allclose(B, ref, rtol=0, atol=8 * EPS)


@pytest.mark.parametrize("name", SPACES)
def test_span_basis_is_orthonormal_spans_the_space_and_has_the_echelon_signs(name):
    S = SPACES[name]
    B = span_basis(S)
    s = B.shape[1]
    np.testing.assert_allclose(B.T @ B, np.eye(s), atol=8 * EPS)
    scale = np.abs(S).max()
    np.testing.assert_allclose(S - (S @ B) @ B.T, 0.0, atol=1e-13 * scale)
    # column k is 0 at the later pivots and positive at its own
    pivots = exact_rref(S)[1]
    for k, j in enumerate(pivots):
        assert B[j, k] > 0
        assert np.all(B[pivots[k + 1 :], k] == 0.0)


def _generators_of_the_same_space(S, g):
    """Other generating sets of span(S): permuted, rescaled, repeated, recombined."""
    m = S.shape[0]
    scales = g.choice([-7.0, -1.0, -0.5, 0.25, 3.0, 1024.0], size=(m, 1))
    T = np.eye(m) + np.triu(g.integers(-2, 3, size=(m, m)), 1)  # unimodular: same span
    return {
        "permuted": S[g.permutation(m)],
        "rescaled": S * scales,
        "repeated": np.vstack([S, S[::2], -S[:3]]),
        "with zero rows": np.vstack([np.zeros((2, S.shape[1])), S]),
        "recombined": T @ S,
        "its echelon form": np.array([[float(x) for x in row] for row in exact_rref(S)[0]]),
    }


@pytest.mark.parametrize("name", ["S_Semi 3x4", "S_Semi 5x5", "dyadic", "primes"])
def test_span_basis_is_the_same_to_the_bit_for_every_generating_set(name, rng):
    S = SPACES[name]
    B = span_basis(S)
    for how, other in _generators_of_the_same_space(S, rng).items():
        assert np.array_equal(span_basis(other), B), how


def test_null_space_basis_is_the_exact_gram_schmidt_and_depends_on_the_kernel_alone(rng):
    C = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1], [1, 0, 0, 1, 0, 0], [1, 1, 1, 1, 1, 1]])
    Q = fl.null_space_basis(C)
    assert Q.shape == (6, 3)  # the last row is the sum of the first two
    np.testing.assert_allclose(Q, exact_null_basis(C), rtol=0, atol=8 * EPS)
    np.testing.assert_allclose(C @ Q, 0.0, atol=8 * EPS)
    np.testing.assert_allclose(Q.T @ Q, np.eye(3), atol=8 * EPS)
    for how, other in _generators_of_the_same_space(C.astype(float), rng).items():
        assert np.array_equal(fl.null_space_basis(other), Q), how
    # the general invariants use it, so the extended mechanisms' coordinates are canonical
    inv = Invariants(C.astype(float), None, (6,))
    assert np.array_equal(inv.null_space_basis(), Q)


@st.composite
def exact_matrices(draw):
    m, d = draw(st.integers(1, 6)), draw(st.integers(1, 7))
    entries = st.integers(-4, 4) | st.sampled_from([0.5, -0.25, 2.0**20, 3.0 * 2**-30])
    A = np.array(draw(st.lists(entries, min_size=m * d, max_size=m * d)), float)
    A = A.reshape(m, d)
    if draw(st.booleans()) and m > 1:  # a dependent row
        A = np.vstack([A, A[0] - 3 * A[-1]])
    return A


@given(exact_matrices())
def test_rref_is_the_exact_echelon_form_correctly_rounded(A):
    R, pivots = fl.rref(A)
    ref, ref_pivots = exact_rref(A)
    if pivots != ref_pivots:
        # only a numerically negligible row may be dropped (rank by singular values)
        assert len(pivots) < len(ref_pivots) and np.linalg.matrix_rank(A) == len(pivots)
        return
    assert np.array_equal(R, np.array([[float(x) for x in r] for r in ref]).reshape(R.shape))
    assert np.array_equal(fl.independent_columns(A), np.asarray(ref_pivots, dtype=np.intp))


def test_rref_counts_the_rank_numerically_and_falls_back_on_rounding_noise(monkeypatch, rng):
    S = SPACES["S_Semi 3x4"]
    calls = []
    real = fl._svd_rref
    monkeypatch.setattr(fl, "_svd_rref", lambda Q: calls.append(Q.shape) or real(Q))
    # exactly of full rank, numerically of rank 6: the SVD path, the same basis up to rounding
    noisy = S + 1e-17 * rng.standard_normal(S.shape)
    assert np.linalg.matrix_rank(noisy) == 6
    np.testing.assert_allclose(span_basis(noisy), span_basis(S), atol=1e-14)
    assert calls == [(6, 12)]
    # too large for the exact arithmetic: the same again, with LAPACK's QR for the Gram-Schmidt
    monkeypatch.setattr(fl, "EXACT_WORK", 100)
    np.testing.assert_allclose(span_basis(S), exact_span_basis(S), atol=1e-14)
    assert calls == [(6, 12), (6, 12)]


def test_python_integers_take_over_when_the_exact_entries_grow(monkeypatch):
    # integers beyond 2**26 would make float products inexact: the elimination continues in
    # Python integers and still gives the exact echelon form
    A = np.array([[3.0**20, 5.0, 7.0], [2.0, 3.0**19, 11.0], [1.0, 1.0, 1.0]])
    monkeypatch.setattr(fl, "_FLOAT_EXACT", 4.0)
    R, pivots = fl.rref(A)
    assert pivots == exact_rref(A)[1] == [0, 1, 2]
    np.testing.assert_array_equal(R, np.eye(3))
    B = np.array([[3.0**20, 5.0, 7.0, 1.0], [2.0, 3.0**19, 11.0, 1.0]])
    ref = exact_rref(B)[0]
    assert np.array_equal(fl.rref(B)[0], np.array([[float(x) for x in r] for r in ref]))


def test_pivoted_columns_break_ties_by_the_lowest_index():
    # equal columns: a pivoted QR picks between them by rounding; here always the first
    M = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
    assert fl.pivoted_columns(M).tolist() == [0, 2]
    # without ties the largest column first, as LAPACK's pivoted QR
    M = np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 3.0]])
    assert fl.pivoted_columns(M).tolist() == [2, 1]
    assert fl.pivoted_columns(np.zeros((2, 3))).size == 0


@given(st.integers(1, 5), st.integers(1, 40), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_fixed_order_products_are_matmul_up_to_rounding_and_exact_on_integers(n, k, m, seed):
    g = np.random.default_rng(seed)
    A, B = g.standard_normal((n, k)), g.standard_normal((k, m))
    np.testing.assert_allclose(fl.fixed_matmul(A, B), A @ B, rtol=1e-12, atol=1e-12)
    Ai, Bi = g.integers(-9, 10, (n, k)).astype(float), g.integers(-9, 10, (k, m)).astype(float)
    assert np.array_equal(fl.fixed_matmul(Ai, Bi), Ai @ Bi)
    X = g.standard_normal((n, min(k, 6), min(k, 6)))
    np.testing.assert_allclose(fl.fixed_det(X), np.linalg.det(X), rtol=1e-9, atol=1e-12)
    assert fl.tree_sum(A, axis=1) == pytest.approx(A.sum(axis=1), rel=1e-12, abs=1e-12)


# --- the release of a seed is the same for every BLAS kernel ---------------------------

_PROBE = r"""
import hashlib, json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
from invariantdp.distributions._knorm_law import KNormNoise
from invariantdp.invariants import one_way_margins
from invariantdp.mechanisms import conditional_release
from invariantdp.sensitivity import contingency_sensitivity_space as css, span_basis

def h(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()

S = css(3, 4)
out = {
    # the control: LAPACK's own basis, which turns with the kernel
    "svd": h(np.linalg.svd(S)[2]),
    "basis 3x4": h(span_basis(S)),
    "basis 5x5": h(span_basis(css(5, 5))),
    "triangulation": h(KNormNoise("polytope", 12, 1.0, S).rvs(100, random_state=1)),
    "rejection": h(KNormNoise("polytope", 12, 1.0, S).rvs(100, random_state=1, method="rejection")),
    "polar": h(KNormNoise("polytope", 18, 1.0, css(3, 6)).rvs(5, random_state=1)),
    "gibbs": h(conditional_release(np.array([[3, 5, 2], [4, 1, 6]]), "laplace",
               one_way_margins((2, 3)), sampler="gibbs", draws=20, tune=20, chains=1,
               rng=4, epsilon=1.0).draws),
}
json.dump(out, sys.stdout)
"""


def _x86_kernels():
    """OpenBLAS kernels this CPU can run (OPENBLAS_CORETYPE), oldest first."""
    if platform.machine().lower() not in ("x86_64", "amd64") or not os.path.exists("/proc/cpuinfo"):
        return []
    flags = set(open("/proc/cpuinfo").read().split())
    kernels = ["Prescott"]
    if {"avx2", "fma"} <= flags:
        kernels.append("Haswell")
    if "avx512f" in flags:
        kernels.append("SkylakeX")
    return kernels


def test_seeded_draws_do_not_depend_on_the_blas_kernel():
    """The failure of issue 21: on an AMD EPYC (OpenBLAS DYNAMIC_ARCH) the cube sampler's
    acceptance and the K-norm draws of a seed differed.  OpenBLAS picks its kernel from
    OPENBLAS_CORETYPE: the default choice and every kernel this CPU runs must give the
    same bits (on a CPU with one kernel, fresh processes must agree with each other)."""
    kernels = [None, *_x86_kernels()]
    got = {}
    for kernel in kernels:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        env.pop("OPENBLAS_CORETYPE", None)
        if kernel is not None:
            env["OPENBLAS_CORETYPE"] = kernel
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True
        )
        got[kernel] = json.loads(proc.stdout)
        # the control (a plain LAPACK SVD) may differ between kernels; the package's bases may not
        got[kernel].pop("svd")
    first = got[None]
    for kernel in kernels[1:]:
        assert got[kernel] == first, kernel
