"""The one Dask convention: ``scheduler="serial" | "dask"`` and ``client=``, in every runner."""

import inspect

import numpy as np
import pandas as pd
import pytest

from invariantdp.census import Geography, Schema, gls, measure, read_nmf
from invariantdp.exceptions import InvariantDPError
from invariantdp.simulate import simulate


def _nm():
    counts = pd.DataFrame({"geocode": ["11", "12", "12"], "sex": [0, 0, 1], "count": [4, 2, 6]})
    spec = {"A": {"sex": 1.0}, "B": {"detailed": 1.0}}
    return measure(
        counts,
        Schema({"sex": 2}),
        Geography({"A": 1, "B": 2}),
        spec,
        secure=False,
        rng=0,
        units=["11", "12"],
    )


def _runners(tmp_path):
    """Each runner with its other arguments bound (a call does no work before the checks)."""
    return {
        "simulate": lambda **kw: simulate(
            lambda rng: 0.0, {"a": [1]}, replicates=1, seed=0, progress=False, **kw
        ),
        "gls": lambda **kw: gls(_nm(), **kw),
        "read_nmf": lambda **kw: read_nmf(tmp_path / "missing", Schema({"sex": 2}), **kw),
    }


@pytest.mark.parametrize("func", [simulate, gls, read_nmf], ids=lambda f: f.__name__)
def test_every_runner_takes_the_same_dask_arguments(func):
    params = inspect.signature(func).parameters
    assert params["scheduler"].default == "serial"
    assert params["client"].default is None
    assert params["scheduler"].kind is params["client"].kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("name", ["simulate", "gls", "read_nmf"])
def test_every_runner_refuses_the_same_bad_dask_arguments(name, tmp_path):
    run = _runners(tmp_path)[name]
    with pytest.raises(InvariantDPError, match=r"`scheduler` \(None\) must be 'serial' or 'dask'"):
        run(scheduler=None)
    with pytest.raises(InvariantDPError, match="`client` applies to scheduler='dask' only"):
        run(client=object())
    with pytest.raises(TypeError, match="`client` must be a dask.distributed.Client, got object"):
        run(scheduler="dask", client=object())


def test_gls_on_a_given_client_is_the_serial_estimate():
    distributed = pytest.importorskip("distributed")
    nm = _nm()
    serial = gls(nm).estimate("sex", "A")
    with distributed.Client(
        processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None
    ) as client:
        on_dask = gls(nm, scheduler="dask", client=client).estimate("sex", "A")
    assert np.array_equal(serial.to_numpy(), on_dask.to_numpy())
