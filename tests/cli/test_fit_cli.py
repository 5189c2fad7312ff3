"""``invariantdp fit poisson`` and ``invariantdp fit loglinear``."""

import numpy as np
import pandas as pd
import pytest

from invariantdp import Release
from invariantdp.cli import main
from invariantdp.inference import PrivatizedLogLinear, PrivatizedPoisson
from invariantdp.invariants import totals
from invariantdp.mechanisms import discrete_gaussian_mechanism, projected_gaussian, semi_dp_gaussian

from ._helpers import one_error_line
from ._helpers import strict_json as _strict


def _one_error_line(capsys, command="fit"):
    return one_error_line(capsys, command)


@pytest.fixture(scope="module")
def counties(tmp_path_factory):
    """County counts released with their state totals invariant, and the covariates.

    The covariate file lists the counties in another order than the release
    and holds a column ``count`` of other numbers, which the fit must ignore.
    """
    tmp = tmp_path_factory.mktemp("fit")
    rng = np.random.default_rng(12)
    n = 40
    names = [f"c{i:02d}" for i in range(n)]
    data = pd.DataFrame(
        {"county": names, "state": np.repeat(["AK", "AL"], n // 2), "x": rng.normal(size=n)}
    )
    counts = rng.poisson(np.exp(4.0 + 0.5 * data["x"])).astype(float)
    series = pd.Series(counts, index=pd.Index(names, name="county"))
    release = projected_gaussian(series, totals(np.repeat([0, 1], n // 2)), mu=0.5, rng=1)
    release.save(tmp / "release.json")
    shuffled = data.sample(frac=1.0, random_state=3).assign(count=-1)
    shuffled.to_csv(tmp / "shuffled.csv", index=False)
    data.to_csv(tmp / "ordered.csv", index=False)
    return tmp, release, data


def test_poisson_formula_matches_the_model(counties, capsys):
    tmp, release, data = counties
    argv = ["fit", "poisson", "--release", str(tmp / "release.json"), "--data"]
    argv += [str(tmp / "shuffled.csv"), "--formula", "count ~ x + C(state)"]
    assert main([*argv, "--label-columns", "county", "--json"]) == 0
    out = _strict(capsys.readouterr().out)
    frame = data.assign(count=np.asarray(release.value))
    ref = PrivatizedPoisson.from_formula(
        "count ~ x + C(state)", frame, release=release, missing="raise"
    ).fit(disp=0)
    assert list(out["params"]) == ["Intercept", "C(state)[T.AL]", "x"]
    for key in ("params", "bse", "pvalues"):
        np.testing.assert_allclose(list(out[key].values()), getattr(ref, key), rtol=1e-6)
    assert out["params"]["x"] == pytest.approx(0.5, abs=0.1)
    assert out["response"] == "count" and out["nobs"] == 40 and out["converged"]
    assert out["randomness"] == "simulation" and out["simulation"] is True
    assert main([*argv, "--label-columns", "county"]) == 0
    text = capsys.readouterr().out
    assert "PrivatizedPoisson" in text and "C(state)[T.AL]" in text
    assert "SIMULATION: not for publication" in text


def test_poisson_exog_in_the_release_order(counties, capsys):
    tmp, release, data = counties
    argv = ["fit", "poisson", "--release", str(tmp / "release.json")]
    argv += ["--data", str(tmp / "ordered.csv"), "--exog", "x", "--json"]
    assert main(argv) == 0
    out = _strict(capsys.readouterr().out)
    exog = pd.DataFrame({"const": 1.0, "x": data["x"]})
    ref = PrivatizedPoisson(release, exog).fit(disp=0)
    assert list(out["params"]) == ["const", "x"]
    np.testing.assert_allclose(list(out["params"].values()), ref.params, rtol=1e-6)
    # a formula with an empty left side fits the same model
    argv[argv.index("--exog") : argv.index("--exog") + 2] = ["--formula", "~ x"]
    assert main(argv) == 0
    out2 = _strict(capsys.readouterr().out)
    np.testing.assert_allclose(list(out2["params"].values()), ref.params, rtol=1e-6)


@pytest.mark.parametrize(
    "args, match",
    [
        (["--data", "{tmp}/ordered.csv", "--formula", "count ~ nosuch"], "`--formula`"),
        (["--data", "{tmp}/ordered.csv", "--formula", "x + z"], "must have the form"),
        (["--data", "{tmp}/ordered.csv", "--formula", "np.log(y) ~ x"], "plain name or empty"),
        (["--data", "{tmp}/ordered.csv", "--exog", "state"], "must hold numbers"),
        (["--data", "{tmp}/ordered.csv", "--exog", "nosuch"], "'nosuch', which is not"),
        (["--data", "{tmp}/ordered.csv", "--exog", "x", "--label-columns", "nosuch"],
         "'nosuch', which is not a column of `--data`"),
        (["--data", "{tmp}/ordered.csv", "--exog", "x", "--label-columns", "county,state"],
         "gives 2 columns but the release's cells have 1"),
        (["--data", "{tmp}/missing.csv", "--exog", "x"], "No such file"),
    ],
)  # fmt: skip
def test_poisson_bad_inputs(args, match, counties, capsys):
    tmp, _, _ = counties
    argv = ["fit", "poisson", "--release", str(tmp / "release.json")]
    assert main([*argv, *[a.format(tmp=tmp) for a in args]]) == 2
    assert match in _one_error_line(capsys)


def test_poisson_rows_not_matching_the_cells(counties, tmp_path, capsys):
    tmp, _, data = counties
    short = tmp_path / "short.csv"
    data.iloc[:-1].to_csv(short, index=False)
    argv = ["fit", "poisson", "--release", str(tmp / "release.json"), "--data", str(short)]
    assert main([*argv, "--exog", "x"]) == 2
    assert "has 39 rows but the release has 40 cells" in _one_error_line(capsys)
    assert main([*argv, "--exog", "x", "--label-columns", "county"]) == 2
    err = _one_error_line(capsys)
    assert "no row for the release's cell ['c39']" in err and "labels ['county']" in err


@pytest.fixture(scope="module")
def table_release(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("loglinear")
    table = pd.DataFrame(
        [[60, 20, 15], [25, 55, 30]],
        index=pd.Index(["F", "M"], name="sex"),
        columns=pd.Index(["yes", "no", "maybe"], name="answer"),
    )
    release = semi_dp_gaussian(table, mu=0.5, rng=3)
    return release.save(tmp / "table.json"), release


@pytest.mark.parametrize("method", ["pearson", "lr"])
def test_loglinear_json_matches_the_model(method, table_release, capsys):
    path, release = table_release
    argv = ["fit", "loglinear", "--release", str(path), "--independence-method", method]
    assert main([*argv, "--json"]) == 0
    out = _strict(capsys.readouterr().out)
    model = PrivatizedLogLinear(release)
    ref, test = model.fit(disp=0), model.test_independence(method=method)
    assert list(out["params"]) == ["gamma[F,yes]", "gamma[F,no]"]
    for key in ("params", "bse", "pvalues"):
        np.testing.assert_allclose(list(out[key].values()), getattr(ref, key), rtol=1e-6)
    ind = out["independence_test"]
    assert ind["method"] == method and ind["df"] == 2
    assert ind["pvalue"] == pytest.approx(test.pvalue, rel=1e-6) and ind["pvalue"] < 1e-3
    assert out["table_shape"] == [2, 3] and out["sigma"] == pytest.approx(model.sigma)


def test_loglinear_text(table_release, capsys):
    path, _ = table_release
    assert main(["fit", "loglinear", "--release", str(path)]) == 0
    text = capsys.readouterr().out
    assert "PrivatizedLogLinear" in text and "gamma[M" not in text and "gamma[F,yes]" in text
    assert "Independence test" in text and "SIMULATION: not for publication" in text


def test_loglinear_bad_releases(counties, tmp_path, capsys):
    tmp, _, _ = counties
    assert main(["fit", "loglinear", "--release", str(tmp / "release.json")]) == 2
    assert "`--release`" in (err := _one_error_line(capsys)) and "r x c table" in err
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    assert main(["fit", "loglinear", "--release", str(bad)]) == 2
    assert "`--release`" in _one_error_line(capsys)


def test_fit_without_a_model_prints_help(capsys):
    assert main(["fit"]) == 2
    assert "poisson" in capsys.readouterr().out


def test_long_csv_to_release_to_fit_keeps_the_labels(tmp_path, capsys):
    """Long CSV -> `release` -> `fit poisson`: cells matched by their text labels."""
    counts = tmp_path / "counts.csv"
    counts.write_text(
        "county,sex,count\nAda,F,510\nAda,M,470\nBay,F,200\nBay,M,260\nCole,F,90\nCole,M,120\n"
    )
    rel = tmp_path / "rel.json"
    argv = ["release", "projected-gaussian", str(counts), "--value-column", "count"]
    argv += ["--label-columns", "county,sex", "--invariants", "row-totals", "--rho", "0.5"]
    assert main([*argv, "--seed", "2", "-o", str(rel)]) == 0
    covariates = tmp_path / "cov.csv"
    covariates.write_text(
        "sex,county,urban\nM,Ada,1\nF,Ada,1\nF,Bay,0\nM,Bay,0\nF,Cole,0\nM,Cole,0\n"
    )
    capsys.readouterr()
    argv = ["fit", "poisson", "--release", str(rel), "--data", str(covariates)]
    assert main([*argv, "--formula", "~ urban", "--label-columns", "county,sex", "--json"]) == 0
    out = _strict(capsys.readouterr().out)
    assert list(out["params"]) == ["Intercept", "urban"]
    assert out["params"]["urban"] == pytest.approx(np.log(980 / 335), abs=0.15)
    assert main([*argv, "--formula", "~ urban", "--label-columns", "sex,county"]) == 2
    assert "labels ['county', 'sex']" in _one_error_line(capsys)


# --- discrete Gaussian releases, groups of terms, strata (issue 22) ------------------------


@pytest.fixture(scope="module")
def census(tmp_path_factory):
    """County x sex x age counts with discrete Gaussian noise and the exact state total."""
    tmp = tmp_path_factory.mktemp("census")
    rng = np.random.default_rng(22)
    idx = pd.MultiIndex.from_product(
        [["C1", "C2", "C3"], ["F", "M"], ["0-17", "18-64", "65+"]],
        names=["county", "sex", "age"],
    )
    cells = idx.to_frame(index=False)
    mu = np.exp(4.0 + 0.3 * (cells["sex"] == "F") + 0.8 * (cells["age"] == "18-64"))
    s = rng.poisson(mu.to_numpy())
    noisy = pd.Series(discrete_gaussian_mechanism(s, rho=0.5, rng=rng).value, index=idx)
    release = Release.from_published(
        noisy,
        noise="discrete_gaussian",
        rho=0.5,
        sensitivity=1.0,
        invariants=totals(np.zeros(s.size, dtype=int)).with_values([s.sum()]),
    )
    release.save(tmp / "census.json")
    cells.to_csv(tmp / "cells.csv", index=False)
    return tmp, release, cells


def test_poisson_on_a_discrete_gaussian_release_tests_a_group_of_terms(census, capsys):
    tmp, release, cells = census
    formula = "~ C(county) + C(sex) * C(age)"
    argv = ["fit", "poisson", "--release", str(tmp / "census.json"), "--data"]
    argv += [str(tmp / "cells.csv"), "--formula", formula, "--label-columns", "county,sex,age"]
    assert main([*argv, "--test", "C(sex):C(age)", "--json"]) == 0
    out = _strict(capsys.readouterr().out)
    assert out["likelihood"] == "exact" and out["sigma"] == 1.0
    frame = cells.assign(released=np.asarray(release.value))
    full = PrivatizedPoisson.from_formula(f"released {formula}", frame, release=release).fit(disp=0)
    restricted = PrivatizedPoisson.from_formula(
        "released ~ C(county) + C(sex) + C(age)", frame, release=release
    ).fit(disp=0)
    lr = full.compare_lr_test(restricted)
    test = out["term_test"]
    assert test["terms"] == ["C(sex):C(age)"] and len(test["coefficients"]) == 2
    assert test["likelihood_ratio"]["df"] == 2 and test["wald"]["df"] == 2
    assert test["likelihood_ratio"]["statistic"] == pytest.approx(lr.statistic, rel=1e-5)
    wald = full.wald_test(", ".join(f"{n} = 0" for n in test["coefficients"]), scalar=True)
    assert test["wald"]["pvalue"] == pytest.approx(float(wald.pvalue), rel=1e-5)
    assert main([*argv, "--test", "C(sex):C(age)"]) == 0
    text = capsys.readouterr().out
    assert "coefficients of C(sex):C(age) are zero" in text and "likelihood ratio" in text


def test_poisson_term_test_and_likelihood_refusals(census, counties, capsys):
    tmp, _, _ = census
    argv = ["fit", "poisson", "--release", str(tmp / "census.json"), "--data"]
    argv += [str(tmp / "cells.csv"), "--formula", "~ C(sex) + C(age)"]
    assert main([*argv, "--test", "C(county)"]) == 2
    assert "`--test` ('C(county)') is not a term of the model" in _one_error_line(capsys)
    ctmp, _, _ = counties  # a projected Gaussian release: no exact likelihood
    argv = ["fit", "poisson", "--release", str(ctmp / "release.json"), "--data"]
    argv += [str(ctmp / "ordered.csv"), "--exog", "x", "--likelihood", "exact"]
    assert main(argv) == 2
    assert "`--likelihood` (exact) does not apply to `--release`" in _one_error_line(capsys)


def test_loglinear_tests_sex_by_age_given_county(census, capsys):
    tmp, release, _ = census
    argv = ["fit", "loglinear", "--release", str(tmp / "census.json"), "--given", "county"]
    assert main([*argv, "--independence-method", "lr", "--json"]) == 0
    out = _strict(capsys.readouterr().out)
    ref = PrivatizedLogLinear(release, given="county").test_independence("lr")
    ind = out["independence_test"]
    assert out["given"] == "county" and out["table_shape"] == [3, 2, 3]
    assert not out["conditioned_on_margins"] and out["likelihood"] == "exact"
    assert ind["df"] == 6 and ind["pvalue"] == pytest.approx(ref.pvalue, rel=1e-6)
    assert main(argv) == 0
    assert "Conditional independence test given county" in capsys.readouterr().out
    assert (
        main(["fit", "loglinear", "--release", str(tmp / "census.json"), "--given", "state"]) == 2
    )
    assert "`given` ('state') must name an axis" in _one_error_line(capsys)
