"""The built-in demo: a few objects made in code, checked at many poses."""

from __future__ import annotations

import time

import numpy as np

from .bvh import bvh_of
from .constants import PARALLEL_MIN_POSES
from .geometry.primitives import box_mesh, torus_mesh, uv_sphere_mesh
from .geometry.transforms import random_poses
from .query.pair import contacts, intersects
from .runtime import threading_layer


def run(n_poses: int = 100_000, seed: int = 7, out=print) -> dict[str, int]:
    """Check a ring, a ball and a plate against each other at ``n_poses`` random poses."""
    ring = torus_mesh(1.0, 0.2, rings=96, segments=32, name="ring")
    ball = uv_sphere_mesh(0.5, rings=48, segments=96, name="ball")
    plate = box_mesh([2.0, 2.0, 0.1], name="plate")
    objects = [ring, ball, plate]
    out(f"collisionkit demo: {', '.join(f'{m.name} ({m.n_faces} triangles)' for m in objects)}")
    t0 = time.perf_counter()
    for m in objects:
        bvh_of(m)
    out(f"  trees built in {time.perf_counter() - t0:.2f} s (the first run also compiles the kernels)")
    # warm the compiled kernels once so the timings below are steady-state
    # (enough poses for the parallel entry too: small batches run serially)
    warm = random_poses(4 * PARALLEL_MIN_POSES, 1.0, seed=0)
    intersects(ring, ball, None, warm)
    contacts(ring, ball, None, warm)

    summary: dict[str, int] = {}
    for a, b, radius in [(ring, ball, 1.6), (ring, plate, 1.8), (ball, plate, 1.0)]:
        poses = random_poses(n_poses, radius, seed=seed)
        t = time.perf_counter()
        hit = np.asarray(intersects(a, b, None, poses))  # a batch: one bool per pose
        t_bool = time.perf_counter() - t
        # All triangle pairs of the first poses (a full contact list of 100k poses
        # of curved parts is tens of millions of rows).
        n_pairs_poses = min(n_poses, 2_000)
        t = time.perf_counter()
        c = contacts(a, b, None, poses[:n_pairs_poses])
        t_pairs = time.perf_counter() - t
        n_hit = int(hit.sum())
        summary[f"{a.name}-{b.name}"] = n_hit
        out(
            f"  {a.name:>5} vs {b.name:<5}: {n_hit:>6} of {n_poses} poses collide "
            f"(intersects {t_bool * 1e3:6.1f} ms, {t_bool / n_poses * 1e6:.2f} us/pose); "
            f"all pairs of {n_pairs_poses} poses: {len(c):>7} triangle pairs in {t_pairs * 1e3:6.1f} ms"
        )
        assert np.array_equal(hit[:n_pairs_poses], c.counts > 0)
    # One pose, one call: what a planner's inner loop sees.
    pose = random_poses(1, 1.6, seed=1)[0]
    intersects(ring, ball, None, pose)
    reps = 20_000
    t = time.perf_counter()
    for _ in range(reps):
        intersects(ring, ball, None, pose)
    out(f"  single-pose call: {(time.perf_counter() - t) / reps * 1e6:.2f} us (ring vs ball)")
    out(f"  threading layer: {threading_layer()}")
    return summary
