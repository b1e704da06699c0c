"""A trivial parallel kernel that starts numba's threading layer on demand."""

from __future__ import annotations

import numpy as np
from numba import prange

from .jit import njit


# nogil as every parallel kernel (kernels/core/lazy.py)
@njit(cache=True, parallel=True, nogil=True)
def probe(n):
    out = np.zeros(n)
    for i in prange(n):
        out[i] = i
    return out.sum()
