"""Numba kernels: plain functions over float64 arrays and scalars.

Every module here is ``@njit`` code that imports only from ``kernels`` and
``collisionkit.constants``. Import the module you need directly, e.g.
``from collisionkit.kernels.triangle.tri_tri import tri_tri_intersect``.
"""
