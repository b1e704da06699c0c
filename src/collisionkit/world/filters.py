"""Pair filtering as data: collision groups and masks, and excluded pairs.

A pair (a, b) is tested only when ``group[a] & mask[b]`` and
``group[b] & mask[a]`` are both nonzero (Box2D's category and mask bits) and
the pair is not excluded (an allowed-collision matrix as in MoveIt: an entry
set means "this pair may touch, do not report it", e.g. adjacent robot links).
Every World query applies the filter (inside ``kernels.broadphase.common.finish_pairs``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

_I64 = np.int64


def as_bits(value: object, what: str) -> int:
    """A group or mask as a signed int64 bit pattern (ints in [-2**63, 2**64))."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{what} must be an int bit mask, got {value!r}")
    v = int(value)
    if v >= 2**63:
        v -= 2**64
    if not -(2**63) <= v < 2**63:
        raise ValueError(f"{what} {value!r} does not fit in 64 bits")
    return v


def pair_key(a: int, b: int) -> int:
    """Key of the unordered slot pair {a, b}."""
    return (min(a, b) << 32) + max(a, b)


class PairFilter:
    """Excluded slot pairs, with the sorted key array the kernels read."""

    def __init__(self) -> None:
        self._keys: set[int] = set()
        self._array: NDArray[np.int64] | None = None

    def exclude(self, a: int, b: int) -> None:
        self._keys.add(pair_key(a, b))
        self._array = None

    def include(self, a: int, b: int) -> None:
        self._keys.discard(pair_key(a, b))
        self._array = None

    def drop_slot(self, s: int) -> None:
        """Forget every exclusion naming slot ``s`` (its object was removed)."""
        mask = (1 << 32) - 1
        gone = {k for k in self._keys if (k >> 32) == s or (k & mask) == s}
        if gone:
            self._keys -= gone
            self._array = None

    def slot_pairs(self) -> list[tuple[int, int]]:
        mask = (1 << 32) - 1
        return [(k >> 32, k & mask) for k in sorted(self._keys)]

    def clear(self) -> None:
        self._keys.clear()
        self._array = None

    @property
    def array(self) -> NDArray[np.int64]:
        if self._array is None:
            self._array = np.array(sorted(self._keys), dtype=_I64)
        return self._array

    def __len__(self) -> int:
        return len(self._keys)
