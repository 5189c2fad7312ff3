"""Argument parsing helpers shared by the sub-commands."""

from __future__ import annotations

import argparse
import json

import numpy as np


def int_list(text: str) -> list[int]:
    """Parse ``"1,2,3"`` into integers (whole numbers only)."""
    try:
        vals = [float(v) for v in text.replace(" ", "").split(",") if v != ""]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None
    if not vals or any(v != np.round(v) or not np.isfinite(v) for v in vals):
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")
    return [int(v) for v in vals]


def add_privacy_args(p: argparse.ArgumentParser, *, required_epsilon: bool = False) -> None:
    p.add_argument("--epsilon", type=float, required=required_epsilon, help="privacy loss, > 0")
    p.add_argument("--delta", type=float, default=0.0, help="in [0, 1) (default 0)")


def print_json(obj) -> None:
    print(json.dumps(obj, indent=2, default=float))
