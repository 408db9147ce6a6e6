"""Argument parsing shared by the commands: one-line usage errors, and the types of the options' values."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import NoReturn

from ._output import EXIT_ERROR


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line (with a pointer to --help) instead of a usage dump."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value == 0 or value < -1:
        raise argparse.ArgumentTypeError(f"--n-jobs must be a positive integer or -1 (all cores), got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"--seed must be a non-negative integer, got {text!r}")
    return value


def _epsilons(text: str) -> list[float]:
    values = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        if part.lower() in ("inf", "infinity", "∞"):
            values.append(math.inf)
            continue
        try:
            value = float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"epsilon values must be numbers or 'inf', got {part!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"epsilon must be > 0 (or 'inf' for no privacy), got {part!r}")
        values.append(value)
    if not values:
        raise argparse.ArgumentTypeError("give at least one epsilon, e.g. --epsilons 0.5,1,2,inf")
    return values


def _numbers(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        values = []
    if not values:
        raise argparse.ArgumentTypeError(f"--replacements must be comma-separated numbers, e.g. 0,1; got {text!r}")
    return values


def _positive_float(name: str, *, upper: float = math.inf) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not (math.isfinite(value) and 0 < value < upper):
            bound = "" if upper == math.inf else f" and < {upper:g}"
            raise argparse.ArgumentTypeError(f"{name} must be > 0{bound}, got {text!r}")
        return value

    return parse


def _count(name: str, minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {text!r}")
        if maximum is not None and value > maximum:
            # A size the machine cannot hold would hang or exhaust memory instead of failing.
            raise argparse.ArgumentTypeError(f"{name} must be at most {maximum:.0e}, got {text!r}")
        return value

    return parse
