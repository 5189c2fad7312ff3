"""The old import paths of modules that moved, kept for one release (issue 21).

``import invariantdp.mechanisms.additive`` (and every other old path below)
still works: it warns (``DeprecationWarning``) and gives the module at its new
path, so pickles that name an old path load too.  The public home of every
name is its subpackage (``from invariantdp.mechanisms import laplace_mechanism``);
the modules are private and named for what they hold.
"""

from ._deprecation import moved_modules

moved_modules(
    {
        "invariantdp._published": "invariantdp.release._published_fields",
        "invariantdp._validation._messages": "invariantdp._validation._format",
        "invariantdp.audit._lattice": "invariantdp.audit._bit_lattice",
        "invariantdp.distributions._exact": "invariantdp.distributions._exact_samplers",
        "invariantdp.distributions.cnd": "invariantdp.distributions._cnd",
        "invariantdp.distributions.discrete": "invariantdp.distributions._discrete_laws",
        "invariantdp.distributions.knorm": "invariantdp.distributions._knorm_law",
        "invariantdp.distributions.polar": "invariantdp.distributions._polar_sampler",
        "invariantdp.distributions.subspace": "invariantdp.distributions._subspace_laws",
        "invariantdp.distributions.tulap": "invariantdp.distributions._tulap",
        "invariantdp.distributions.tulap_forms": "invariantdp.distributions._tulap_forms",
        "invariantdp.families._builtin": "invariantdp.families._builtin_families",
        "invariantdp.families._core": "invariantdp.families._family",
        "invariantdp.guarantee": "invariantdp.release._guarantee",
        "invariantdp.inference._lattice": "invariantdp.inference._logconcave_sums",
        "invariantdp.inference.bayes.distributions": (
            "invariantdp.inference.bayes._pymc_likelihoods"
        ),
        "invariantdp.inference.bayes.models": "invariantdp.inference.bayes._model_builders",
        "invariantdp.inference.bayes.sampler": "invariantdp.inference.bayes._latent_samplers",
        "invariantdp.inference.binomial": "invariantdp.inference._binomial_test",
        "invariantdp.inference.likelihood": "invariantdp.inference._invariant_likelihoods",
        "invariantdp.inference.models": "invariantdp.inference._likelihood_models",
        "invariantdp.inference.odds_ratio": "invariantdp.inference._odds_ratio_test",
        "invariantdp.inference.power": "invariantdp.inference._test_power",
        "invariantdp.invariants._core": "invariantdp.invariants._invariants",
        "invariantdp.mechanisms._secure": "invariantdp.mechanisms._side_channels",
        "invariantdp.mechanisms.additive": "invariantdp.mechanisms._additive",
        "invariantdp.mechanisms.congenial": "invariantdp.mechanisms._congenial",
        "invariantdp.mechanisms.congenial._conditional": (
            "invariantdp.mechanisms._congenial._conditional"
        ),
        "invariantdp.mechanisms.congenial._diagnostics": (
            "invariantdp.mechanisms._congenial._diagnostics"
        ),
        "invariantdp.mechanisms.congenial._exact": (
            "invariantdp.mechanisms._congenial._exact_conditional"
        ),
        "invariantdp.mechanisms.congenial._mcmc": "invariantdp.mechanisms._congenial._mcmc",
        "invariantdp.mechanisms.congenial._postprocess": (
            "invariantdp.mechanisms._congenial._postprocess"
        ),
        "invariantdp.mechanisms.congenial._targets": "invariantdp.mechanisms._congenial._targets",
        "invariantdp.mechanisms.discrete": "invariantdp.mechanisms._integer_noise",
        "invariantdp.mechanisms.knorm": "invariantdp.mechanisms._knorm_mechanisms",
        "invariantdp.mechanisms.odds_ratio": "invariantdp.mechanisms._odds_ratio_release",
        "invariantdp.mechanisms.semi_dp": "invariantdp.mechanisms._semi_dp",
        "invariantdp.mechanisms.subspace": "invariantdp.mechanisms._subspace_mechanisms",
        "invariantdp.mechanisms.swapping": "invariantdp.mechanisms._permutation_swap",
        "invariantdp.plotting._common": "invariantdp.plotting._axes",
        "invariantdp.plotting.congenial": "invariantdp.plotting._congenial_draws",
        "invariantdp.plotting.power": "invariantdp.plotting._power_curves",
        "invariantdp.plotting.simulation": "invariantdp.plotting._simulation_plots",
        "invariantdp.plotting.swapping": "invariantdp.plotting._swap_rates",
        "invariantdp.privacy.accounting": "invariantdp.privacy",
        "invariantdp.privacy.approximate_dp": "invariantdp.privacy._approximate_dp",
        "invariantdp.privacy.census": "invariantdp.census._topdown_accounting",
        "invariantdp.privacy.gdp": "invariantdp.privacy._gdp",
        "invariantdp.privacy.semi_adjacent": "invariantdp.privacy._semi_adjacent",
        "invariantdp.privacy.swapping": "invariantdp.privacy._swapping_epsilon",
        "invariantdp.privacy.tradeoff": "invariantdp.privacy._tradeoff",
        "invariantdp.privacy.zcdp": "invariantdp.privacy._zcdp",
    }
)
