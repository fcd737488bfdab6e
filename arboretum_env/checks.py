"""Argument checks shared by the envs: plain ints from numpy integers, seeds, integer index
arrays. Bad input is refused by name (``ValueError`` / ``TypeError``), never rounded, wrapped or
replaced."""

from __future__ import annotations

import operator

import numpy as np

SEED_LIMIT = 2**63  # VectorEnv keeps game seeds in int64


def plain_int(value):
    """``value`` as a Python int when it is an integer of any kind (numpy included, bools not);
    anything else unchanged, for the caller's own check to refuse by name."""
    if isinstance(value, (bool, np.bool_, int)) or not hasattr(type(value), "__index__"):
        return value
    try:
        return operator.index(value)
    except TypeError:  # e.g. a float array: left for the caller to refuse by name
        return value


def seed_value(seed, int64: bool = False, what: str = "reset: seed"):
    """``seed`` as a Python int: an integer >= 0 (and below ``SEED_LIMIT`` = 2**63 if ``int64``);
    ``TypeError`` / ``ValueError`` naming it otherwise."""
    below = " below 2**63" if int64 else ""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{what} must be an int (a non-negative integer{below}) or None, got "
                        f"{seed!r} ({type(seed).__name__})")
    seed = int(seed)
    if seed < 0 or (int64 and seed >= SEED_LIMIT):
        raise ValueError(f"{what} must be a non-negative integer{below} (or None), got {seed}")
    return seed


def index_array(values, name: str, upper: int, what: str) -> np.ndarray:
    """``values`` as a 1-d int64 array of indexes in ``0..upper-1`` (``what`` says what they
    index); floats and bools are refused, not truncated; negative values do not count from the
    end."""
    a = np.asarray(values)
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of {what}, got shape {a.shape}")
    if a.size == 0:
        return a.astype(np.int64)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers ({what} in 0..{upper - 1}), got {a.dtype}: "
                        f"{a[:4].tolist()}")
    bad = (a < 0) | (a >= upper)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{k}] = {a[k].item()}: {what} must be in 0..{upper - 1}")
    return a.astype(np.int64, copy=False)
