import contextlib
import hashlib
import os
import sys
import tracemalloc
import types

# one BLAS thread in each xdist worker (the workers already fill the cores; several BLAS
# threads each would oversubscribe them): the workers start after this module is imported
# and inherit the variables.  In this process numpy may already be loaded (by a plugin), so
# the variables do not change a serial run.  A value set by the user is kept.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# Hypothesis profiles: "ci" (default, bounded) and "slow" (HYPOTHESIS_PROFILE=slow, or the
# `@pytest.mark.slow` variants that use settings.get_profile("slow")).
# CI replays the same examples every run (a red CI is then a reproducible
# finding, not luck); the "slow" profile explores fresh random examples.
settings.register_profile(
    "ci",
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "slow", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng(request):
    """A generator seeded from the test's node id: every test has its own stream, the same
    whatever ran before it, serially or on any xdist worker."""
    digest = hashlib.sha256(request.node.nodeid.encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


# --- work done, where a test once bounded the wall-clock time ----------------------------
# Speed lives in benchmarks/; a test checks what a call did: the numbers it drew, the
# Python calls it made (a loop over records or levels shows there), the memory it took.


class CountingGenerator(np.random.Generator):
    """A numpy ``Generator`` that counts the numbers it draws (``drawn``)."""

    def __init__(self, seed=0):
        super().__init__(np.random.PCG64(seed))
        self.drawn = 0


def _counted(name):
    method = getattr(np.random.Generator, name)

    def draw(self, *args, **kwargs):
        out = method(self, *args, **kwargs)
        self.drawn += int(np.size(out)) if out is not None else len(args[0])
        return out

    draw.__name__ = name
    return draw


for _name in (
    "random",
    "integers",
    "uniform",
    "standard_normal",
    "normal",
    "standard_exponential",
    "exponential",
    "standard_gamma",
    "gamma",
    "laplace",
    "geometric",
    "binomial",
    "poisson",
    "choice",
    "permutation",
    "shuffle",
    "permuted",
):
    setattr(CountingGenerator, _name, _counted(_name))


@contextlib.contextmanager
def _python_calls():
    """Count the Python and built-in function calls made in the block (``box.calls``)."""
    box = types.SimpleNamespace(calls=0)

    def profile(frame, event, arg):
        if event == "call" or event == "c_call":
            box.calls += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield box
    finally:
        sys.setprofile(previous)


@contextlib.contextmanager
def _peak_memory():
    """The peak of the memory allocated in the block, in bytes (``box.peak``; numpy's
    arrays are traced)."""
    box = types.SimpleNamespace(peak=0)
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    try:
        yield box
    finally:
        box.peak = tracemalloc.get_traced_memory()[1] - base
        if started:
            tracemalloc.stop()


def _no_qhull(*args, **kwargs):
    raise AssertionError("Qhull was run")


def _refused_at_once(call, match, *, max_bytes=16 * 2**20):
    """``call(gen)`` raises ``InvariantDPError`` matching ``match`` before any work: it
    draws nothing from ``gen``, runs no Qhull hull and allocates under ``max_bytes``.
    Returns the message."""
    from invariantdp import InvariantDPError, sensitivity

    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sensitivity, "ConvexHull", _no_qhull)
        with _peak_memory() as mem, pytest.raises(InvariantDPError, match=match) as err:
            call(gen)
    assert gen.bit_generator.state == state, "numbers were drawn before the refusal"
    assert mem.peak < max_bytes, f"{mem.peak} bytes allocated before the refusal"
    return str(err.value)


@pytest.fixture(scope="session")
def work():
    """Checks of work done: ``refused_at_once(call, match)``, ``python_calls()`` and
    ``peak_memory()`` (context managers), ``CountingGenerator(seed)``, ``no_qhull``."""
    return types.SimpleNamespace(
        refused_at_once=_refused_at_once,
        python_calls=_python_calls,
        peak_memory=_peak_memory,
        CountingGenerator=CountingGenerator,
        no_qhull=_no_qhull,
    )
