"""The band of scales the proximity kernels take as given (``constants.SCALE_BAND_EXP``).

Entries that take one pose pair check it (a few comparisons, no work done
outside it) and return ``OUT_OF_BAND`` so that the caller prescales the pair
by a power of two (``query/scaling.py``) and calls again. Batch callers check
the band per pose pair in NumPy before the call.
"""

from __future__ import annotations

import math

from ...constants import SCALE_BAND_EXP
from .jit import njit_internal

#: Return code of per-call entries: the pair lies outside the band; prescale it.
OUT_OF_BAND = 1
#: The band's bounds as floats (exact powers of two).
BAND_LO = math.ldexp(1.0, -SCALE_BAND_EXP)
BAND_HI = math.ldexp(1.0, SCALE_BAND_EXP)


@njit_internal(nogil=True)
def in_band(scale, Ta, Tb):
    """Whether the extent max(scale, |translations of Ta and Tb|) is 0 or inside the band.

    ``scale``: the meshes' (or hulls') largest absolute coordinates, summed.
    """
    e = scale
    for i in range(3):
        e = max(e, max(abs(Ta[i, 3]), abs(Tb[i, 3])))
    return e == 0.0 or BAND_LO <= e <= BAND_HI
