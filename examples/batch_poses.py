"""A planner's inner loop: 100,000 poses in one call, on all cores.

Run: python examples/batch_poses.py
"""

import time

import numpy as np

import collisionkit as ck

bunny_like = ck.primitives.uv_sphere_mesh(0.5, rings=48, segments=96)
ring = ck.primitives.torus_mesh(1.0, 0.2, rings=96, segments=32)
poses = ck.random_poses(100_000, radius=1.6, seed=3)  # (N, 4, 4) world-from-ball poses

ck.intersects(ring, bunny_like, pose_b=poses[:64])  # first call compiles (cached on disk afterwards)
t = time.perf_counter()
hits = ck.intersects(ring, bunny_like, pose_b=poses)  # (N,) bool
dt = time.perf_counter() - t
print(f"{hits.sum()} of {hits.size} poses collide; {dt / hits.size * 1e6:.2f} us per pose")

stats = ck.query_stats(ring, bunny_like, pose_b=poses[:1000])  # the work behind the answers
print(f"mean volume tests {stats.bv_tests.mean():.1f}, triangle tests {stats.tri_tests.mean():.1f} per pose")
assert np.array_equal(stats.colliding, hits[:1000])
