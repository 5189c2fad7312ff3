"""Figures of simulation studies (issue 22): labels and error bars as computed, not pixels."""

import numpy as np
import pytest

from invariantdp import InvariantDPError
from invariantdp.simulate import simulate

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from invariantdp.plotting import plot_power_curves, plot_simulation  # noqa: E402


def _test_run(rng, effect, n):
    """A one-sided z-test of a mean: p-values uniform at effect 0, small above."""
    from scipy import stats

    x = rng.normal(effect, 1.0, size=n)
    z = x.mean() * np.sqrt(n)
    return {"pvalue": float(stats.norm.sf(z)), "mean": float(x.mean())}


@pytest.fixture(scope="module")
def study():
    return simulate(_test_run, {"effect": [0.0, 0.2, 0.5], "n": [10, 40]}, replicates=120, seed=5)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _bars(ax):
    """Per error-bar container: x, y and the (low, high) ends of each bar."""
    out = []
    for c in ax.containers:
        line, _, (bars,) = c.lines
        ends = np.array([[seg[0][1], seg[1][1]] for seg in bars.get_segments()])
        out.append((line.get_xdata(), line.get_ydata(), ends))
    return out


def test_rejection_rates_have_bars_of_the_binomial_standard_errors(study):
    ax = study.plot("effect", hue="n", alpha=0.05, n_se=2.0)
    rates = study.rejection_rate(0.05)
    drawn = _bars(ax)
    assert len(drawn) == 2  # one line per n
    for (xs, ys, ends), n in zip(drawn, (10, 40), strict=True):
        expect = rates[rates["n"] == n].sort_values("effect")
        np.testing.assert_allclose(xs, expect["effect"])
        np.testing.assert_allclose(ys, expect["rejection_rate"])
        se = np.sqrt(ys * (1 - ys) / 120)
        np.testing.assert_allclose(se, expect["mc_se"])
        np.testing.assert_allclose(ends[:, 1] - ends[:, 0], 2 * 2.0 * se, atol=1e-12)
        np.testing.assert_allclose((ends[:, 0] + ends[:, 1]) / 2, ys, atol=1e-12)
    assert ax.get_xlabel() == "effect"
    assert ax.get_ylabel() == "rejection rate ± 2 Monte Carlo s.e."
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["level 0.05", "n = 10", "n = 40"]
    level = [ln for ln in ax.get_lines() if ln.get_label() == "level 0.05"]
    assert level and np.allclose(level[0].get_ydata(), 0.05)


def test_the_axis_says_size_under_the_null_and_power_elsewhere(study):
    null = {"effect": 0.0}
    size = plot_simulation(study, "n", where={"effect": 0.0}, null=null)
    assert size.get_ylabel() == "size ± 2 Monte Carlo s.e."
    power = plot_simulation(study, "n", where={"effect": 0.5}, null=null, n_se=1)
    assert power.get_ylabel() == "power ± 1 Monte Carlo s.e."
    ((_, ys, ends),) = _bars(power)
    np.testing.assert_allclose(ends[:, 1] - ends[:, 0], 2 * np.sqrt(ys * (1 - ys) / 120))
    both = plot_simulation(study, "effect", where={"n": 40}, null=null)
    assert both.get_ylabel().startswith("rejection rate (size at effect = 0, power elsewhere)")


def test_means_have_bars_of_the_standard_error_of_the_mean(study):
    ax = study.plot("effect", y="mean", where={"n": 40}, n_se=3)
    ((xs, ys, ends),) = _bars(ax)
    m = study.mean("mean").query("n == 40").sort_values("effect")
    np.testing.assert_allclose(ys, m["mean"])
    np.testing.assert_allclose(ends[:, 1] - ends[:, 0], 2 * 3 * m["mc_se"])
    # the standard error of the mean of 120 normal means of 40 draws: 1 / sqrt(40 * 120)
    np.testing.assert_allclose(m["mc_se"], 1 / np.sqrt(40 * 120), rtol=0.25)
    assert ax.get_ylabel() == "mean of mean ± 3 Monte Carlo s.e."
    assert not [ln for ln in ax.get_lines() if ln.get_label().startswith("level")]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, r"settings \('n',\) take several values.*`hue`.*where=\{'n'"),
        ({"hue": "effect"}, r"`hue` \('effect'\) must be another setting than `x`"),
        ({"hue": "eps"}, r"`hue` \('eps'\) must be one of the settings"),
        ({"where": {"eps": 1}}, "`where` names 'eps'"),
        ({"where": {"n": 7}}, "no setting of the study matches"),
        ({"hue": "n", "y": "nope"}, "must be one of the outcomes"),
        ({"hue": "n", "n_se": 0}, r"`n_se` \(0.0\) must be > 0"),
        ({"hue": "n", "null": {"eps": 0}}, "`null` names 'eps'"),
    ],
)
def test_bad_plot_arguments_are_named(study, kwargs, match):
    with pytest.raises(InvariantDPError, match=match):
        study.plot("effect", **kwargs)


def test_plot_power_curves_labels_a_size_panel_size():
    fig, (left, right) = plt.subplots(1, 2)
    plot_power_curves([0.5, 1, 2], {"DP": [0.049, 0.05, 0.05]}, xlabel="epsilon",
                      ylabel="size", alpha=0.05, ax=left)  # fmt: skip
    plot_power_curves([1, 2, 4], {"DP": [0.05, 0.3, 0.7]}, ax=right)
    assert (left.get_ylabel(), right.get_ylabel()) == ("size", "power")
    assert left.get_xlabel() == "epsilon"


def test_logx_draws_a_budget_on_a_log_axis_and_keeps_the_bars():
    study = simulate(_test_run, {"effect": [0.01, 0.1, 1.0], "n": [20]}, replicates=60, seed=3)
    ax = study.plot("effect", logx=True)
    assert ax.get_xscale() == "log"
    ((xs, ys, _),) = _bars(ax)
    rates = study.rejection_rate(0.05).sort_values("effect")
    np.testing.assert_allclose(xs, rates["effect"])
    np.testing.assert_allclose(ys, rates["rejection_rate"])
    assert plot_simulation(study, "effect").get_xscale() == "linear"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"logx": True, "where": {"n": 40}}, InvariantDPError, r"`logx` \(True\).*'effect'.*0\.0"),
        ({"logx": "yes", "where": {"n": 40}}, TypeError, r"`logx` must be .*got str \('yes'\)\."),
    ],
)
def test_logx_refuses_non_positive_settings_and_non_booleans(study, kwargs, error, match):
    with pytest.raises(error, match=match):
        study.plot("effect", **kwargs)
