"""The API reference's table of contents: every public name once, grouped by task.

A *public name* is a name in the ``__all__`` of a public module (one with no
part of its dotted path starting with ``_``).  Each is listed here exactly
once, as ``"<home module>.<name>"``: its home is the module users import it
from, and the reference documents it there (a name re-exported elsewhere is
the same name, listed once).  Groups follow what a user sets out to do; within
a group, sections keep related names together, in the order they are listed.

To edit: move, add or delete a line.  ``make docs`` (``docs/conf.py``) and
``tests/test_api_reference.py`` fail, naming the name, when a public name is
missing here, listed twice, or listed under a module whose ``__all__`` does not
hold it.  A group may be added or removed freely (its key becomes the page
name ``api/<key>.html``); a group without names is left out.

``modules`` lists the modules whose docstrings (the background a group needs)
open the group's page, each module at most once in the whole table.
"""

GROUPS = {
    "make-a-release": {
        "title": "Make a release",
        "intro": (
            "Mechanisms turn confidential data into a :class:`~invariantdp.Release` "
            "that records its noise law, invariants and privacy guarantee. "
            "``secure=True`` draws the noise exactly from the operating system's "
            "CSPRNG and is the only way to make a release for publication."
        ),
        "modules": ["invariantdp.mechanisms", "invariantdp.secure", "invariantdp.invariants"],
        "sections": {
            "Additive and discrete noise": [
                "invariantdp.mechanisms.laplace_mechanism",
                "invariantdp.mechanisms.gaussian_mechanism",
                "invariantdp.mechanisms.discrete_laplace_mechanism",
                "invariantdp.mechanisms.discrete_gaussian_mechanism",
                "invariantdp.mechanisms.tulap_mechanism",
                "invariantdp.mechanisms.odds_ratio_release",
            ],
            "Invariants (statistics published exactly)": [
                "invariantdp.invariants.Invariants",
                "invariantdp.invariants.Structure",
                "invariantdp.invariants.totals",
                "invariantdp.invariants.nested_totals",
                "invariantdp.invariants.one_way_margins",
                "invariantdp.invariants.grand_total",
                "invariantdp.invariants.group_totals",
                "invariantdp.invariants.null_space_projector",
                "invariantdp.invariants.DENSE_LIMIT",
                "invariantdp.invariants.MAX_DOCUMENT_CELLS",
            ],
            "Subspace DP: noise that keeps the invariants": [
                "invariantdp.mechanisms.projected_gaussian",
                "invariantdp.mechanisms.projected_laplace",
                "invariantdp.mechanisms.extended_gaussian",
                "invariantdp.mechanisms.extended_laplace",
                "invariantdp.mechanisms.distributed_privatize",
            ],
            "Semi-DP and K-norm mechanisms": [
                "invariantdp.mechanisms.semi_dp_gaussian",
                "invariantdp.mechanisms.semi_dp_knorm",
                "invariantdp.mechanisms.knorm",
                "invariantdp.mechanisms.lp_mechanism",
            ],
            "The mechanisms by name": [
                "invariantdp.mechanisms.MECHANISMS",
                "invariantdp.mechanisms.Mechanism",
                "invariantdp.mechanisms.find_mechanism",
            ],
            "Congenial releases (conditioned on the invariants)": [
                "invariantdp.mechanisms.conditional_release",
                "invariantdp.mechanisms.ConditionalRelease",
                "invariantdp.mechanisms.LinearInequalities",
                "invariantdp.mechanisms.SamplerDiagnostics",
            ],
            "Data swapping": [
                "invariantdp.mechanisms.permutation_swap",
                "invariantdp.mechanisms.SwapResult",
                "invariantdp.mechanisms.swapping_invariants",
                "invariantdp.mechanisms.SwappingInvariants",
                "invariantdp.mechanisms.table_on_release_cells",
                "invariantdp.mechanisms.swapping_mape",
            ],
            "Sensitivity": [
                "invariantdp.sensitivity.sensitivity",
                "invariantdp.sensitivity.contingency_sensitivity_space",
                "invariantdp.sensitivity.hull_norm",
                "invariantdp.sensitivity.HullNorm",
                "invariantdp.sensitivity.span_basis",
                "invariantdp.sensitivity.span_projector",
                "invariantdp.sensitivity.project_onto_span",
                "invariantdp.sensitivity.MAX_BYTES",
                "invariantdp.sensitivity.MAX_HULL_DIM",
                "invariantdp.sensitivity.MAX_HULL_POINTS",
            ],
            "Secure randomness": [
                "invariantdp.secure.SecureGenerator",
                "invariantdp.secure.random_source",
            ],
        },
    },
    "read-a-release": {
        "title": "Read a release",
        "intro": (
            "A :class:`~invariantdp.Release` is what a curator publishes and an "
            "analyst consumes: build one from published numbers, read it back from "
            "JSON, and look at its labels, noise law and guarantee."
        ),
        "modules": ["invariantdp.release", "invariantdp.published", "invariantdp.labels"],
        "sections": {
            "The release": [
                "invariantdp.Release",
                "invariantdp.NoiseLaw",
                "invariantdp.PrivacyGuarantee",
                "invariantdp.Summary",
            ],
            "From published numbers": [
                "invariantdp.published.from_published",
                "invariantdp.published.read_published",
            ],
            "Labels": [
                "invariantdp.labels.AxisLabels",
                "invariantdp.labels.labels_of",
                "invariantdp.labels.cell_names",
                "invariantdp.labels.label_text",
                "invariantdp.labels.check_labels",
                "invariantdp.labels.to_pandas",
                "invariantdp.labels.labels_to_doc",
                "invariantdp.labels.labels_from_doc",
            ],
            "Noise families (how a release names its noise law)": [
                "invariantdp.families.noise_family",
                "invariantdp.families.noise_families",
                "invariantdp.families.register_noise_family",
                "invariantdp.families.NoiseFamily",
                "invariantdp.families.NoiseLikelihood",
                "invariantdp.families.SchemaContext",
                "invariantdp.families.LAPLACE",
                "invariantdp.families.GAUSSIAN",
                "invariantdp.families.DISCRETE_LAPLACE",
                "invariantdp.families.DISCRETE_GAUSSIAN",
                "invariantdp.families.TULAP",
                "invariantdp.families.CORRELATED_GAUSSIAN",
                "invariantdp.families.NoiseTails",
                "invariantdp.families.noise_tails",
                "invariantdp.families.CellNoise",
                "invariantdp.families.gaussian_type_families",
                "invariantdp.families.overstated",
                "invariantdp.families.LikelihoodForm",
                "invariantdp.families.TULAP_LIKELIHOOD",
                "invariantdp.families.LAPLACE_LIKELIHOOD",
                "invariantdp.families.GAUSSIAN_LIKELIHOOD",
                "invariantdp.families.DISCRETE_LAPLACE_LIKELIHOOD",
                "invariantdp.families.DISCRETE_GAUSSIAN_LIKELIHOOD",
                "invariantdp.families.PROJECTED_GAUSSIAN_LIKELIHOOD",
            ],
        },
    },
    "test": {
        "title": "Test",
        "intro": (
            "Exact tests of hypotheses on a release, with their confidence "
            "intervals, power and the sample size a study needs."
        ),
        "modules": ["invariantdp.inference"],
        "sections": {
            "The semi-DP odds-ratio test of a 2 x 2 table": [
                "invariantdp.inference.umpu_odds_ratio_test",
                "invariantdp.inference.OddsRatioTestResult",
                "invariantdp.inference.umpu_odds_ratio_critical_value",
                "invariantdp.inference.umpu_odds_ratio_power",
                "invariantdp.inference.umpu_odds_ratio_sample_size",
            ],
            "The DP test of a binomial proportion": [
                "invariantdp.inference.ump_binomial_test",
                "invariantdp.inference.BinomialTestResult",
                "invariantdp.inference.ump_binomial_power",
                "invariantdp.inference.ump_binomial_sample_size",
            ],
        },
    },
    "estimate": {
        "title": "Estimate",
        "intro": (
            "Estimates that honour the invariants: the GLS estimate of every cell and "
            "sum with its interval, post-processing a noisy release onto them, and "
            "the intervals that results report."
        ),
        "modules": [],
        "sections": {
            "Cells and sums with intervals": [
                "invariantdp.estimate",
                "invariantdp.CellEstimates",
            ],
            "Estimates under the invariants": [
                "invariantdp.mechanisms.l2_postprocess",
                "invariantdp.mechanisms.l1_postprocess",
                "invariantdp.mechanisms.l1_privacy_level",
            ],
            "Intervals": [
                "invariantdp.ConfidenceInterval",
            ],
        },
    },
    "model": {
        "title": "Model",
        "intro": (
            "Likelihoods and models fitted to releases: frequentist models that "
            "stay valid under the noise and the invariants, and Bayesian models in "
            "PyMC (``pip install invariantdp[bayes]``)."
        ),
        "modules": ["invariantdp.inference.bayes"],
        "sections": {
            "Likelihood models": [
                "invariantdp.inference.PrivatizedPoisson",
                "invariantdp.inference.PrivatizedNegativeBinomial",
                "invariantdp.inference.PrivatizedLogLinear",
                "invariantdp.inference.PrivatizedResults",
                "invariantdp.inference.LogLinearResults",
                "invariantdp.inference.IndependenceTestResult",
                "invariantdp.inference.LikelihoodRatioTestResult",
            ],
            "Small-area models": [
                "invariantdp.inference.FayHerriot",
                "invariantdp.inference.FayHerriotResults",
            ],
            "Likelihoods of a release": [
                "invariantdp.inference.projected_gaussian_logpdf",
                "invariantdp.inference.projected_gaussian_marginal_loglik",
                "invariantdp.inference.conditional_laplace_logpdf",
                "invariantdp.inference.degenerate_gaussian_logpdf",
            ],
            "Bayesian models": [
                "invariantdp.inference.bayes.fit",
                "invariantdp.inference.bayes.contingency_table_model",
                "invariantdp.inference.bayes.poisson_regression_model",
                "invariantdp.inference.bayes.binomial_model",
                "invariantdp.inference.bayes.fay_herriot_model",
            ],
            "Mechanism likelihoods (PyMC distributions)": [
                "invariantdp.inference.bayes.mechanism_likelihood",
                "invariantdp.inference.bayes.release_noise",
                "invariantdp.inference.bayes.likelihood_class",
                "invariantdp.inference.bayes.LaplaceLikelihood",
                "invariantdp.inference.bayes.GaussianLikelihood",
                "invariantdp.inference.bayes.DiscreteLaplaceLikelihood",
                "invariantdp.inference.bayes.DiscreteGaussianLikelihood",
                "invariantdp.inference.bayes.TulapLikelihood",
                "invariantdp.inference.bayes.ProjectedGaussianLikelihood",
                "invariantdp.inference.bayes.FormLikelihood",
            ],
            "Samplers for latent counts under invariants": [
                "invariantdp.inference.bayes.LatticeMetropolis",
                "invariantdp.inference.bayes.LatticeMoves",
                "invariantdp.inference.bayes.DirichletGibbs",
                "invariantdp.inference.bayes.affine_counts",
                "invariantdp.inference.bayes.fibre_point",
            ],
        },
    },
    "account": {
        "title": "Account",
        "intro": (
            "Privacy accounting: tradeoff functions, exact conversions between "
            "(epsilon, delta)-DP, Gaussian DP and zCDP, group privacy and "
            "composition, the semi-adjacent parameter, and the privacy loss of "
            "data swapping."
        ),
        "modules": ["invariantdp.privacy"],
        "sections": {
            "Neighbours": [
                "invariantdp.privacy.QueryAdjacency",
                "invariantdp.privacy.ADJACENCY_NORMS",
            ],
            "Tradeoff functions": [
                "invariantdp.privacy.TradeoffFunction",
                "invariantdp.privacy.as_tradeoff",
                "invariantdp.privacy.eps_delta",
                "invariantdp.privacy.gaussian_tradeoff",
                "invariantdp.privacy.zcdp_tradeoff",
                "invariantdp.privacy.group",
            ],
            "Pure and approximate DP": [
                "invariantdp.privacy.pure_dp_composition",
                "invariantdp.privacy.pure_dp_group_privacy",
                "invariantdp.privacy.pure_dp_to_zcdp",
                "invariantdp.privacy.approximate_dp_composition",
                "invariantdp.privacy.approximate_dp_group_privacy",
                "invariantdp.privacy.laplace_delta",
                "invariantdp.privacy.discrete_laplace_delta",
            ],
            "Gaussian DP": [
                "invariantdp.privacy.gdp_to_eps_delta",
                "invariantdp.privacy.gdp_to_epsilon",
                "invariantdp.privacy.gdp_log_delta",
                "invariantdp.privacy.eps_delta_to_gdp",
                "invariantdp.privacy.gdp_to_zcdp",
                "invariantdp.privacy.gdp_composition",
                "invariantdp.privacy.gdp_group_privacy",
            ],
            "Zero-concentrated DP": [
                "invariantdp.privacy.zcdp_to_eps_delta",
                "invariantdp.privacy.zcdp_log_delta",
                "invariantdp.privacy.zcdp_composition",
                "invariantdp.privacy.zcdp_group_privacy",
                "invariantdp.privacy.ZCDP_CONVERSIONS",
            ],
            "Semi-DP: the semi-adjacent parameter": [
                "invariantdp.privacy.semi_adjacent_parameter",
                "invariantdp.privacy.semi_adjacent_upper_bound",
                "invariantdp.privacy.one_way_margins_semi_adjacent_parameter",
            ],
            "Data swapping": [
                "invariantdp.privacy.swapping_epsilon",
                "invariantdp.privacy.min_swapping_epsilon",
                "invariantdp.privacy.MinimumSwappingEpsilon",
                "invariantdp.privacy.swap_rate_for_epsilon",
                "invariantdp.privacy.largest_stratum",
            ],
        },
    },
    "audit": {
        "title": "Audit",
        "intro": (
            "Check a mechanism's privacy claim empirically, by testing releases "
            "drawn from two neighbouring inputs."
        ),
        "modules": ["invariantdp.audit"],
        "sections": {
            "Audits": [
                "invariantdp.audit.audit_mechanism",
                "invariantdp.audit.audit_samples",
                "invariantdp.audit.AuditResult",
                "invariantdp.audit.audit_sample_size",
                "invariantdp.audit.AuditSampleSize",
                "invariantdp.audit.achievable_set_test",
            ],
            "Timing side channels": [
                "invariantdp.audit.audit_timing",
                "invariantdp.audit.audit_timing_samples",
                "invariantdp.audit.TimingAuditResult",
                "invariantdp.audit.timing_sample_size",
                "invariantdp.audit.TIMING_TESTS",
            ],
            "Building blocks": [
                "invariantdp.audit.neighbour_from_space",
                "invariantdp.audit.likelihood_ratio_statistic",
                "invariantdp.audit.projection_statistic",
                "invariantdp.audit.lattice_classes",
                "invariantdp.audit.STATISTICS",
            ],
        },
    },
    "simulate": {
        "title": "Simulate",
        "intro": (
            "Simulation studies (a grid of settings times replicates, one "
            "independent random stream per run, serially or on a Dask cluster), "
            "synthetic microdata to run them on, and figures of their results."
        ),
        "modules": ["invariantdp.simulate", "invariantdp.plotting"],
        "sections": {
            "Simulation studies": [
                "invariantdp.simulate.simulate",
                "invariantdp.simulate.SimulationResult",
                "invariantdp.simulate.replicate_generator",
                "invariantdp.simulate.dask_batch_size",
                "invariantdp.simulate.DASK_TASK_SECONDS",
                "invariantdp.simulate.SERIAL_TASK_SECONDS",
                "invariantdp.simulate.TASKS_PER_WORKER",
                "invariantdp.simulate.MAX_TASKS",
                "invariantdp.simulate.PILOT_RUNS",
                "invariantdp.simulate.PILOT_SECONDS",
            ],
            "Synthetic microdata": [
                "invariantdp.synthetic.massachusetts_1940_households",
                "invariantdp.synthetic.MASSACHUSETTS_1940_HOUSEHOLD_SIZES",
            ],
            "Figures": [
                "invariantdp.plotting.plot_power_curves",
                "invariantdp.plotting.plot_simulation",
                "invariantdp.plotting.plot_pvalue_histogram",
                "invariantdp.plotting.plot_pvalue_vs_epsilon",
                "invariantdp.plotting.plot_release_distances",
                "invariantdp.plotting.plot_swapping_epsilon",
                "invariantdp.plotting.plot_swapping_mape",
                "invariantdp.plotting.plot_eblup",
                "invariantdp.plotting.plot_shrinkage",
            ],
        },
    },
    "census": {
        "title": "Census",
        "intro": (
            "The Census Bureau's noisy measurement files: read them, simulate them, "
            "and turn them into estimates with exact standard errors; and the privacy "
            "accounting of the 2020 US Census products."
        ),
        "modules": ["invariantdp.census"],
        "sections": {
            "Noisy measurements": [
                "invariantdp.census.Schema",
                "invariantdp.census.PL94",
                "invariantdp.census.PL94_UNITS",
                "invariantdp.census.PL94_2020_STRATEGY",
                "invariantdp.census.CensusStrategy",
                "invariantdp.census.ReleaseStrategy",
                "invariantdp.census.Geography",
                "invariantdp.census.NoisyMeasurements",
                "invariantdp.census.CensusPrivacy",
                "invariantdp.census.measure",
                "invariantdp.census.read_nmf",
                "invariantdp.census.NMFParts",
            ],
            "Estimates (generalised least squares under the invariants)": [
                "invariantdp.census.gls",
                "invariantdp.census.GLSEstimate",
                "invariantdp.census.PartsEstimate",
            ],
            "Published counts (TopDown-like post-processing)": [
                "invariantdp.census.topdown_postprocess",
                "invariantdp.census.TopDownHistograms",
                "invariantdp.census.MAX_COUPLED_CELLS",
            ],
            "Accounting of the 2020 Census": [
                "invariantdp.census.topdown_privacy_accounting",
                "invariantdp.census.TopDownAccounting",
                "invariantdp.census.TOPDOWN_RHO",
                "invariantdp.census.census_semi_dp_analysis",
                "invariantdp.census.CensusSemiDPAnalysis",
            ],
        },
    },
    "noise-laws": {
        "title": "Noise laws",
        "intro": (
            "The noise distributions of the mechanisms, in ``scipy.stats`` style, "
            "with exact samplers and closed forms."
        ),
        "modules": ["invariantdp.distributions"],
        "sections": {
            "Tulap, the canonical noise of (epsilon, delta)-DP": [
                "invariantdp.distributions.tulap",
                "invariantdp.distributions.tulap_gen",
                "invariantdp.distributions.tulap_from_privacy",
                "invariantdp.distributions.tulap_params",
                "invariantdp.distributions.tulap_privacy",
                "invariantdp.distributions.tulap_privacy_gen",
            ],
            "Discrete Laplace and discrete Gaussian": [
                "invariantdp.distributions.discrete_laplace",
                "invariantdp.distributions.discrete_laplace_gen",
                "invariantdp.distributions.discrete_gaussian",
                "invariantdp.distributions.discrete_gaussian_gen",
                "invariantdp.distributions.sample_discrete_laplace_exact",
                "invariantdp.distributions.sample_discrete_gaussian_exact",
            ],
            "Canonical noise of any tradeoff function": [
                "invariantdp.distributions.canonical_noise",
                "invariantdp.distributions.CanonicalNoise",
            ],
            "K-norm and subspace noise": [
                "invariantdp.distributions.KNormNoise",
                "invariantdp.distributions.LPHullNorm",
                "invariantdp.distributions.MAX_POLAR_DIM",
                "invariantdp.distributions.SubspaceNoise",
            ],
        },
    },
    "data": {
        "title": "Data",
        "intro": "The data sets bundled with the package, used by the examples and vignettes.",
        "modules": ["invariantdp.datasets"],
        "sections": {
            "Bundled data": [
                "invariantdp.datasets.aspirin_myocardial_infarction",
                "invariantdp.datasets.berkeley_admissions",
                "invariantdp.datasets.fisher_tea_tasting",
                "invariantdp.datasets.congenial_sex_by_age",
                "invariantdp.datasets.massachusetts_1940_ownership",
                "invariantdp.datasets.list_datasets",
                "invariantdp.datasets.load_csv",
                "invariantdp.datasets.data_path",
            ],
        },
    },
    "errors": {
        "title": "Errors and warnings",
        "intro": "What the package raises and warns.",
        "modules": ["invariantdp.exceptions"],
        "sections": {
            "Errors and warnings": [
                "invariantdp.exceptions.InvariantDPError",
                "invariantdp.exceptions.SimulationWarning",
                "invariantdp.exceptions.ConvergenceWarning",
            ],
        },
    },
    "command-line": {
        "title": "Command line",
        "intro": (
            "The ``invariantdp`` command; ``invariantdp COMMAND --help`` documents "
            "each sub-command's options."
        ),
        "modules": [
            "invariantdp.cli",
            "invariantdp.cli.release",
            "invariantdp.cli.odds_ratio",
            "invariantdp.cli.binomial",
            "invariantdp.cli.fit",
            "invariantdp.cli.account",
            "invariantdp.cli.swap",
        ],
        "sections": {
            "Entry points": [
                "invariantdp.cli.main",
                "invariantdp.cli.build_parser",
            ],
        },
    },
}

#: Public by ``__all__`` but not API a user calls, each with the reason it is
#: left out of the reference (the check counts these as listed).
NOT_IN_REFERENCE: dict[str, list[str]] = {}
