"""Time of impact by conservative advancement over the BVHs (Mirtich 1996,
"Impulse-based dynamic simulation of rigid body systems", ch. 2; Zhang, Lee,
Kim 2006, "Interactive continuous collision detection for non-convex
polyhedra", for meshes).

Each object moves as T(t) = T0 * M(t), t in [0, 1], with M(0) = I:

* linear (MOTION_LINEAR): the origin moves on a straight line, the
  orientation turns at constant rate about a fixed body axis:
  R(t) = R0 Rot(k, t theta), x(t) = x0 + t (x1 - x0);
* screw (MOTION_SCREW): the constant body twist, M(t) = exp(t xi) with
  exp(xi) = T0^-1 T1 (rotation about a fixed line plus a slide along it).

Speed bound. A point p of the object (object frame) moves in the world at
|R(t) (omega x p) + x'(t)| (linear) or |R(t) (omega x p + v)| (screw), both
at most mu = theta * r + |u| where r = max |p| over the vertices (the origin
is the rotation centre) and u = x1 - x0 (linear) or the twist's linear part
(screw). The distance between the two objects therefore shrinks at most at
mu_a + mu_b, and from a distance d at time t nothing can touch before
t + d / (mu_a + mu_b): advancing by that step can never pass the first
contact (never reports a later time, never tunnels). The loop stops when the
distance is at most ``tol`` (a hit at that t, whose closest triangle pair is
the first contacting pair) or when t reaches 1 with the distance above
``tol`` (no hit). Distances come from ``bvh_distance.distance_task`` (exact
intersection test: distance 0 exactly at contact), warm-started with the
previous closest pair, in relative-error mode (``shrink``) far from contact:
the step then uses the certified lower bound the traversal returns (the
smallest bound of anything it pruned), so it stays safe. The step is shortened by 1e-12 relative so rounding
of the distance cannot push it past the contact.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .bvh_distance import distance_task

MOTION_LINEAR = 0
MOTION_SCREW = 1

TOI_NO_HIT = 0
TOI_HIT = 1
TOI_CAP = 2  # iteration cap reached: t is still a safe lower bound


@njit(cache=True, nogil=True)
def pose_at(T0, k, theta, u, motion, t, out):
    """Write T(t) = T0 * M(t) into ``out`` (4, 4) (see the module notes).

    k: unit body rotation axis (3,), theta: total angle, u: (3,) linear part
    (world displacement x1 - x0 for linear, body twist linear part for screw).
    """
    phi = t * theta
    c = math.cos(phi)
    s = math.sin(phi)
    kx = k[0]
    ky = k[1]
    kz = k[2]
    # Rot(k, phi) = I + s K + (1 - c) K^2
    K = ((0.0, -kz, ky), (kz, 0.0, -kx), (-ky, kx, 0.0))
    M = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            k2 = K[i][0] * K[0][j] + K[i][1] * K[1][j] + K[i][2] * K[2][j]
            M[i, j] = (1.0 if i == j else 0.0) + s * K[i][j] + (1.0 - c) * k2
    for i in range(3):
        for j in range(3):
            out[i, j] = T0[i, 0] * M[0, j] + T0[i, 1] * M[1, j] + T0[i, 2] * M[2, j]
    if motion == MOTION_LINEAR:
        for i in range(3):
            out[i, 3] = T0[i, 3] + t * u[i]
    else:
        # translation of exp(t xi) in body frame: (t I + (1 - c)/theta K + (phi - s)/theta K^2) u
        if theta > 1e-12:
            a1 = (1.0 - c) / theta
            a2 = (phi - s) / theta
        else:
            a1 = 0.5 * t * phi
            a2 = t * phi * phi / 6.0
        g = np.empty(3)
        for i in range(3):
            acc = t * u[i]
            for j in range(3):
                k2 = K[i][0] * K[0][j] + K[i][1] * K[1][j] + K[i][2] * K[2][j]
                acc += (a1 * K[i][j] + a2 * k2) * u[j]
            g[i] = acc
        for i in range(3):
            out[i, 3] = T0[i, 0] * g[0] + T0[i, 1] * g[1] + T0[i, 2] * g[2] + T0[i, 3]
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit(cache=True, nogil=True)
def toi_advance(
    topo_a,
    bv_a,
    tris_a,
    T0a,
    ka,
    tha,
    ua,
    topo_b,
    bv_b,
    tris_b,
    T0b,
    kb,
    thb,
    ub,
    motion,
    mu,
    tol,
    shrink,
    max_iter,
    scale,
    bv_kind,
    stack,
    lbs,
    buf,
    out,
    stats,
    Ta,
    Tb,
):
    """Conservative advancement from t = 0. Returns (status, t, iterations).

    On return Ta, Tb hold the poses at t and out[0] the distance row at t
    (d2, closest points in a's frame, leaf-order triangles) as distance_task
    writes it.
    """
    t = 0.0
    it = np.int64(0)
    seed_a = np.int64(-1)
    seed_b = np.int64(-1)
    row = np.int64(0)
    tol2 = tol * tol
    inf = math.inf
    while True:
        pose_at(T0a, ka, tha, ua, motion, t, Ta)
        pose_at(T0b, kb, thb, ub, motion, t, Tb)
        d2 = distance_task(
            topo_a, bv_a, tris_a, Ta, topo_b, bv_b, tris_b, Tb,
            scale, bv_kind, inf, shrink, seed_a, seed_b, stack, lbs, buf, out, stats, row,
        )  # fmt: skip
        low = out[0, 11]
        if low <= 16.0 * tol2 and shrink < 1.0:
            # near contact: the exact distance decides the hit
            d2 = distance_task(
                topo_a, bv_a, tris_a, Ta, topo_b, bv_b, tris_b, Tb,
                scale, bv_kind, inf, 1.0, seed_a, seed_b, stack, lbs, buf, out, stats, row,
            )  # fmt: skip
            low = d2
        it += 1
        seed_a = np.int64(out[0, 7])
        seed_b = np.int64(out[0, 8])
        if d2 <= tol2:
            return TOI_HIT, t, it
        if t >= 1.0:
            return TOI_NO_HIT, 1.0, it
        if it >= max_iter:
            return TOI_CAP, t, it
        if mu <= 0.0:
            return TOI_NO_HIT, 1.0, it  # nothing moves relative to the other
        step = math.sqrt(low) * (1.0 - 1e-12) / mu
        t = t + step
        if t > 1.0:
            t = 1.0
