"""Privacy definitions and accounting: tradeoff functions and conversions."""

from . import tradeoff
from .tradeoff import TradeoffFunction, as_tradeoff, eps_delta, gaussian, group

__all__ = [
    "TradeoffFunction",
    "as_tradeoff",
    "eps_delta",
    "gaussian",
    "group",
    "tradeoff",
]
