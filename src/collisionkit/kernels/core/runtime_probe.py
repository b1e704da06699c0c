"""A trivial parallel kernel that starts numba's threading layer on demand."""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def probe(n):
    out = np.zeros(n)
    for i in prange(n):
        out[i] = i
    return out.sum()
