"""invariantdp.simulate: streams, schedulers, resuming, and the study summaries."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from invariantdp import InvariantDPError, ump_binomial_test
from invariantdp.distributions import tulap, tulap_params
from invariantdp.simulate import SimulationResult, replicate_generator, simulate


def _normal_mean(rng, n, shift):
    x = rng.normal(shift, 1.0, size=n)
    return {"mean": float(x.mean()), "first": float(x[0]), "label": f"n={n}"}


GRID = {"n": [5, 50], "shift": [0.0, 1.5]}


def test_one_row_per_setting_and_replicate_in_grid_order():
    res = simulate(_normal_mean, GRID, replicates=7, seed=3)
    assert isinstance(res, SimulationResult)
    f = res.frame
    assert list(f.columns) == ["n", "shift", "replicate", "mean", "first", "label"]
    assert len(f) == 4 * 7
    assert res.settings == ("n", "shift") and res.outcomes == ("mean", "first", "label")
    # grid order: the last name varies fastest, replicates 0..6 within a setting
    assert list(f["n"][::7]) == [5, 5, 50, 50] and list(f["shift"][::7]) == [0.0, 1.5, 0.0, 1.5]
    assert (f["replicate"].to_numpy() == np.tile(np.arange(7), 4)).all()


def test_each_run_uses_its_documented_spawned_stream():
    res = simulate(_normal_mean, GRID, replicates=5, seed=11)
    for i, child in enumerate(np.random.SeedSequence(11).spawn(4)):
        grandchildren = child.spawn(5)  # spawn() is stateful: call it once per child
        for r in (0, 4):
            setting = res.frame.iloc[i * 5 + r]
            rng = np.random.default_rng(grandchildren[r])
            assert setting["first"] == rng.normal(setting["shift"], 1.0, size=int(setting["n"]))[0]
            assert (
                replicate_generator(11, i, r).normal()
                == np.random.default_rng(grandchildren[r]).normal()
            )


def test_the_table_does_not_depend_on_batching_and_streams_differ():
    a = simulate(_normal_mean, GRID, replicates=9, seed=5, batch_size=1).frame
    b = simulate(_normal_mean, GRID, replicates=9, seed=5, batch_size=4).frame
    pd.testing.assert_frame_equal(a, b)
    c = simulate(_normal_mean, GRID, replicates=9, seed=6).frame
    assert not np.array_equal(a["first"], c["first"])
    assert a["first"].nunique() == len(a)  # no two runs share a stream


def test_dask_gives_the_serial_table():
    pytest.importorskip("dask.distributed")
    serial = simulate(_normal_mean, GRID, replicates=6, seed=2, batch_size=2).frame
    dask = simulate(
        _normal_mean, GRID, replicates=6, seed=2, batch_size=2, scheduler="dask", n_workers=2
    ).frame
    pd.testing.assert_frame_equal(serial, dask)


@pytest.fixture
def thread_client():
    """A client of an in-process cluster of two single-threaded workers."""
    distributed = pytest.importorskip("dask.distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_a_given_client_serves_several_studies(thread_client):
    # a function scattered by one study must not be released under the next one
    runs = [
        simulate(_normal_mean, GRID, replicates=4, seed=s, scheduler="dask", client=thread_client)
        for s in (1, 1, 2)
    ]
    pd.testing.assert_frame_equal(runs[0].frame, runs[1].frame)
    serial = simulate(_normal_mean, GRID, replicates=4, seed=2).frame
    pd.testing.assert_frame_equal(runs[2].frame, serial)


def test_an_interrupted_study_resumes_without_rerunning_finished_tasks(tmp_path):
    calls = []

    def flaky(rng, n, shift):
        calls.append((n, shift))
        if fail and n == 50 and shift == 1.5:
            raise RuntimeError("worker lost")
        return _normal_mean(rng, n, shift)

    fail = True
    with pytest.raises(RuntimeError, match="worker lost") as info:
        simulate(flaky, GRID, replicates=4, seed=9, batch_size=2, store=tmp_path)
    assert any("setting 3" in note for note in info.value.__notes__)
    # runs are numbered setting by setting: settings 0-2 are runs 0-11, two per task
    finished = sorted(p.name for p in tmp_path.glob("runs-*.parquet"))
    assert finished == [f"runs-{k:012d}-{k + 2:012d}.parquet" for k in range(0, 12, 2)]
    fail = False
    calls.clear()
    res = simulate(flaky, GRID, replicates=4, seed=9, batch_size=2, store=tmp_path)
    assert calls == [(50, 1.5)] * 4  # only the setting that had not finished runs again
    fresh = simulate(_normal_mean, GRID, replicates=4, seed=9, batch_size=2).frame
    pd.testing.assert_frame_equal(res.frame, fresh, check_dtype=False)


def test_a_store_of_another_study_is_refused(tmp_path):
    simulate(_normal_mean, GRID, replicates=2, seed=1, store=tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["seed"] == 1 and manifest["replicates"] == 2
    with pytest.raises(InvariantDPError, match=r"different study .*'seed'"):
        simulate(_normal_mean, GRID, replicates=2, seed=2, store=tmp_path)
    with pytest.raises(InvariantDPError, match=r"different study .*'settings'"):
        simulate(_normal_mean, {"n": [5], "shift": [0.0]}, replicates=2, seed=1, store=tmp_path)


def test_settings_as_rows_and_single_values():
    rows = [{"n": 3, "shift": 0.0}, {"n": 4, "shift": 2.0}]
    a = simulate(_normal_mean, rows, replicates=2, seed=0).frame
    b = simulate(_normal_mean, pd.DataFrame(rows), replicates=2, seed=0).frame
    pd.testing.assert_frame_equal(a, b)
    c = simulate(_normal_mean, {"n": 3, "shift": [0.0]}, replicates=2, seed=0).frame
    pd.testing.assert_frame_equal(c, a.iloc[:2])


def test_a_bare_scalar_outcome_is_named_value():
    res = simulate(lambda rng, k: rng.integers(0, k), {"k": [10]}, replicates=3, seed=0)
    assert res.outcomes == ("value",) and res.frame["value"].between(0, 9).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"replicates": 0}, "replicates"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"batch_size": 0}, "batch_size"),
        ({"scheduler": "spark"}, "scheduler"),
        ({"n_workers": 2}, "scheduler='dask'"),
    ],
)
def test_bad_arguments_are_refused_before_any_run(kwargs, match):
    calls = []
    args = {"replicates": 2, "seed": 0, **kwargs}
    with pytest.raises(InvariantDPError, match=match):
        simulate(lambda rng, n: calls.append(n), {"n": [1]}, **args)
    assert calls == []


@pytest.mark.parametrize(
    ("settings", "error", "match"),
    [
        ({}, InvariantDPError, "at least one"),
        ({"n": []}, InvariantDPError, "must not be empty"),
        ({"replicate": [1]}, InvariantDPError, "identifiers"),
        ({"not a name": [1]}, InvariantDPError, "identifiers"),
        ("n=1", TypeError, "settings"),
    ],
)
def test_bad_settings_are_refused(settings, error, match):
    with pytest.raises(error, match=match):
        simulate(lambda rng, **s: 0.0, settings, replicates=1, seed=0)


def test_non_scalar_outcomes_are_refused_with_the_run_named():
    with pytest.raises(InvariantDPError, match=r"setting 0, replicate 0.*'x'"):
        simulate(lambda rng, n: {"x": np.zeros(n)}, {"n": [2]}, replicates=1, seed=0)


def test_rejection_rate_and_mean_have_their_monte_carlo_errors():
    res = simulate(
        lambda rng, p: {"pvalue": float(rng.uniform() < p)},
        {"p": [0.2, 0.7]},
        replicates=400,
        seed=4,
    )
    rate = res.rejection_rate(alpha=0.5)
    # pvalue 0 (rejected) with probability 1 - p
    share = 1 - res.frame.groupby("p")["pvalue"].mean().to_numpy()
    np.testing.assert_allclose(rate["rejection_rate"], share)
    np.testing.assert_allclose(rate["mc_se"], np.sqrt(share * (1 - share) / 400))
    m = res.mean("pvalue")
    np.testing.assert_allclose(m["mean"], 1 - share)
    np.testing.assert_allclose(m["mc_se"], res.frame.groupby("p")["pvalue"].sem())
    with pytest.raises(InvariantDPError, match="outcomes"):
        res.mean("nope")
    text = str(res.summary())
    assert "replicates" in text and "not for publication" in text


def _binomial_run(rng, n, epsilon, p):
    b, q = tulap_params(epsilon)
    z = rng.binomial(n, p) + tulap(b, q).rvs(random_state=rng)
    return {"pvalue": ump_binomial_test(z, n, 0.4, epsilon=epsilon, alternative="greater").pvalue}


def test_a_study_of_the_dp_binomial_test_finds_its_size_and_power():
    # Awan & Slavkovic (2018): the test is exact, so the null p-values are uniform,
    # and its power grows with epsilon
    res = simulate(
        _binomial_run, {"n": [30], "epsilon": [0.5, 3.0], "p": [0.4, 0.8]}, replicates=300, seed=8
    )
    rate = res.rejection_rate(0.05).set_index(["epsilon", "p"])
    for eps in (0.5, 3.0):
        null = rate.loc[(eps, 0.4)]
        assert null["rejection_rate"] <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 300)
        pv = res.frame.query("epsilon == @eps and p == 0.4")["pvalue"]
        assert stats.kstest(pv, "uniform").pvalue > 1e-3
    assert rate.loc[(3.0, 0.8), "rejection_rate"] > rate.loc[(0.5, 0.8), "rejection_rate"] > 0.2


# --- issue 22: the bar counts runs and is cheap; Dask batches small tasks ------------------


def test_the_progress_bar_counts_runs_not_tasks(capsys):
    # 4 settings x 7 replicates in tasks of 2: the bar says 28 runs, not 16 tasks
    simulate(_normal_mean, GRID, replicates=7, seed=3, batch_size=2, progress=True)
    err = capsys.readouterr().err
    assert "28/28" in err and "run" in err
    assert "/16" not in err


def test_the_progress_bar_reaches_tqdm_in_batches(monkeypatch):
    # a fast study updates the bar once per run; tqdm sees a handful of updates
    import tqdm.auto

    seen = []

    class CountingBar(tqdm.auto.tqdm):
        def update(self, n=1):
            seen.append(n)
            return super().update(n)

    monkeypatch.setattr(tqdm.auto, "tqdm", CountingBar)
    import time as _time

    t0 = _time.monotonic()
    simulate(_normal_mean, GRID, replicates=500, seed=1, progress=True)
    elapsed = _time.monotonic() - t0
    assert sum(seen) == 2000  # every run counted
    # at most one update per refresh interval, plus the last one at the close
    from invariantdp._progress import REFRESH_SECONDS

    assert len(seen) <= elapsed / REFRESH_SECONDS + 2


def test_the_throttled_bar_updates_tqdm_once_per_interval(monkeypatch):
    import invariantdp._progress as progress

    clock = iter(np.arange(0.0, 100.0, 0.01))  # 10 ms per step
    monkeypatch.setattr(progress, "_clock", lambda: float(next(clock)))
    with progress.progress_bar(1000, True, desc="t", interval=0.2) as bar:
        for _ in range(1000):
            bar.update(1)
        assert bar.n == 1000
    # 10 s of steps at one push per 0.2 s, and the rest at the close
    assert 49 <= bar.pushes <= 51
    assert bar._bar.n == 1000
    hidden = progress.progress_bar(1000, False, desc="t")
    for _ in range(10):
        hidden.update(1)
    hidden.close()
    assert hidden.n == 10 and hidden.pushes == 0  # a hidden bar never reaches tqdm


def test_a_resumed_study_may_change_scheduler_and_batch_size(tmp_path):
    calls = []

    def flaky(rng, n, shift):
        calls.append((n, shift))
        if fail and n == 50:
            raise RuntimeError("worker lost")
        return _normal_mean(rng, n, shift)

    fail = True
    with pytest.raises(RuntimeError):
        simulate(flaky, GRID, replicates=6, seed=4, batch_size=4, store=tmp_path)
    fail = False
    calls.clear()
    res = simulate(flaky, GRID, replicates=6, seed=4, batch_size=5, store=tmp_path)
    assert calls == [(50, 0.0)] * 6 + [(50, 1.5)] * 6  # settings 0 and 1 were read back
    fresh = simulate(_normal_mean, GRID, replicates=6, seed=4).frame
    pd.testing.assert_frame_equal(res.frame, fresh, check_dtype=False)


def test_dask_batch_size_amortises_the_task_overhead():
    from invariantdp.simulate import DASK_TASK_SECONDS, dask_batch_size

    # fast runs: a task holds half a second of them, at least 4 tasks per worker
    assert dask_batch_size(1e-5, 10**6, 2) == round(DASK_TASK_SECONDS / 1e-5)
    assert dask_batch_size(1e-5, 400, 2) == 50
    # slow runs: one per task; an enormous study: at most ~1000 tasks
    assert dask_batch_size(3.0, 400, 2) == 1
    assert dask_batch_size(1e-3, 10**8, 4) == 10**5


def test_dask_with_default_batches_sends_few_tasks_and_gives_the_serial_table(
    tmp_path, thread_client
):
    # the store holds one file per task: a pilot of <= 8 single runs, then batches
    from invariantdp.simulate import PILOT_RUNS, TASKS_PER_WORKER

    res = simulate(
        _normal_mean, GRID, replicates=50, seed=2, scheduler="dask", client=thread_client,
        store=tmp_path,
    )  # fmt: skip
    files = list(tmp_path.glob("runs-*.parquet"))
    pilots = [p for p in files if int(p.stem.split("-")[2]) - int(p.stem.split("-")[1]) == 1]
    # 200 runs: the pilot takes PILOT_RUNS of them, one file each
    assert len(pilots) == PILOT_RUNS
    # each gap the pilot left is cut into tasks of ~ (200 - pilots) / (4 workers per 2) runs
    assert len(files) - len(pilots) <= TASKS_PER_WORKER * 2 + len(pilots) + 1
    serial = simulate(_normal_mean, GRID, replicates=50, seed=2).frame
    pd.testing.assert_frame_equal(res.frame, serial)


def test_outcomes_must_be_named_apart_from_settings_and_not_empty():
    with pytest.raises(InvariantDPError, match=r"setting names \('n',\), got 'n'"):
        simulate(lambda rng, n: {"n": 1.0}, {"n": [2]}, replicates=1, seed=0)
    with pytest.raises(InvariantDPError, match="no outcome"):
        simulate(lambda rng, n: {}, {"n": [2]}, replicates=1, seed=0)
