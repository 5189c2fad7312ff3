"""A module path of invariantdp 0.1.0, kept until the release its warning names.

Reading a name from here warns and gives it from its new home,
:mod:`invariantdp.mechanisms`.
"""

from .._deprecation import old_module

__getattr__, __dir__ = old_module(__name__, "invariantdp.mechanisms._knorm_mechanisms")
