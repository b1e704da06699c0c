"""Shared convex test material: the seed 003 polyhedra, random hulls, and the exact
oracle for two closed convex solids (brute-force triangle pairs + rational containment).

The oracle is independent of the library's convex code: surface hits come from
``tests.brute`` (every triangle pair, the library's exact triangle test on the
library's mapped coordinates), containment from ``tests.oracles.orient3d_rational``.
"""

from __future__ import annotations

import numpy as np
from tests.brute import broadcast, brute_colliding, mapped_triangles
from tests.oracles import orient3d_rational

import collisionkit as ck

PHI = (1.0 + 5.0**0.5) / 2.0


def cube() -> ck.Convex:
    return ck.Convex.from_points(
        [[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)], name="cube"
    )


def octahedron(r: float = 0.75) -> ck.Convex:
    return ck.Convex.from_points(np.vstack([np.eye(3), -np.eye(3)]) * r, name="octahedron")


def dodecahedron(r: float = 0.75) -> ck.Convex:
    p = [[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    for s1 in (-1, 1):
        for s2 in (-1, 1):
            p += [[0, s1 / PHI, s2 * PHI], [s1 / PHI, s2 * PHI, 0], [s1 * PHI, 0, s2 / PHI]]
    p = np.array(p, dtype=np.float64)
    return ck.Convex.from_points(p * (r / np.sqrt(3.0)), name="dodecahedron")


def prism(n: int = 9, radius: float = 0.5, height: float = 1.0) -> ck.Convex:
    a = 2 * np.pi * np.arange(n) / n
    ring = np.stack([radius * np.cos(a), radius * np.sin(a)], axis=1)
    p = np.vstack([np.column_stack([ring, np.full(n, -height / 2)]), np.column_stack([ring, np.full(n, height / 2)])])
    return ck.Convex.from_points(p, name=f"prism{n}")


def random_hull(seed: int, n: int = 12) -> ck.Convex:
    rng = np.random.default_rng(seed)
    p = rng.normal(size=(n, 3)) * rng.uniform(0.2, 0.8, size=3)
    return ck.Convex.from_points(p, name=f"hull{seed}")


def _vertex_inside(tris, point) -> bool:
    p = tuple(float(x) for x in point)
    return all(orient3d_rational(*[tuple(map(float, v)) for v in tri], p) <= 0 for tri in tris)


def exact_colliding(a: ck.ConvexShape, b: ck.ConvexShape, pose_a, pose_b) -> np.ndarray:
    """(N,) exact booleans for two closed convex solids (their ``.mesh`` surfaces)."""
    surf = brute_colliding(a.mesh, b.mesh, pose_a, pose_b)
    pa, pb, ia, ib = broadcast(pose_a, pose_b)
    out = surf.copy()
    for k in np.flatnonzero(~surf):
        Ta, Tb = pa[ia[k]], pb[ib[k]]
        mb = mapped_triangles(b.mesh, Ta, Tb)
        ta = np.asarray(a.mesh.triangles)
        # no surface contact: either disjoint or one contains the other entirely
        out[k] = _vertex_inside(mb, ta[0, 0]) or _vertex_inside(ta, mb[0, 0])
    return out


def seed_shapes() -> dict[str, ck.Convex]:
    return {"cube": cube(), "octahedron": octahedron(), "dodecahedron": dodecahedron(), "prism9": prism()}
