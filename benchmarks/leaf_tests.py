"""The triangle tests of the traversal's leaves on named scenes (issue 15, item 3).

Usage::

    python -m benchmarks.leaf_tests record [--scenes a,b] [--poses N]   # pairs -> .npz
    python -m benchmarks.leaf_tests classify                            # who decides what
    python -m benchmarks.leaf_tests time [--rounds R]                   # leaf test, ns/pair

``record`` collects, per scene and pose, every triangle pair whose boxes overlap, in the
frame and the arithmetic of the traversal (b's triangles mapped by ``map_triangle``
under the ``relative_pose`` of the pose pair; box rejection by exact comparisons, as in
``kernels/traverse/descent.py``): the pairs that reach ``tri_tri_intersect_tuples`` in an
all-pairs query, whatever the hierarchy. They are written to ``$LEAF_DIR`` (default
``/tmp/leaf_pairs``), nothing under ``benchmarks/results``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from numba import njit

from collisionkit.constants import BV_AABB, BV_OBB, BV_SAABB, LEAF_FLAG
from collisionkit.kernels.core.layout import META_NODE_OFF, META_TRI_OFF
from collisionkit.kernels.core.linalg import map_triangle, relative_pose
from collisionkit.kernels.traverse.descent import _aabb_overlap, _obb_overlap
from collisionkit.kernels.volumes.dispatch import overlap_other, size_other

LEAF_DIR = os.environ.get("LEAF_DIR", "/tmp/leaf_pairs")
HARD = ["gears-15k", "flange", "press-fit", "thin-links"]
TUNED = ["env-rob", "bunny-bunny", "duck-shelf", "soccer-soccer", "assembly-near-contacts"]
CAP = 200_000  # pairs kept per scene (a seeded sample beyond)


@njit(cache=True)
def _map_all(tris_b, Ta, Tb):
    R, t = relative_pose(Ta, Tb)
    out = np.empty_like(tris_b)
    for j in range(tris_b.shape[0]):
        B = map_triangle(
            R, t,
            tris_b[j, 0, 0], tris_b[j, 0, 1], tris_b[j, 0, 2],
            tris_b[j, 1, 0], tris_b[j, 1, 1], tris_b[j, 1, 2],
            tris_b[j, 2, 0], tris_b[j, 2, 1], tris_b[j, 2, 2],
        )  # fmt: skip
        for k in range(9):
            out[j, k // 3, k % 3] = B[k]
    return out


@njit(cache=True)
def _box_pairs(ta, tb):
    """(i, j) of every pair whose closed boxes overlap (sweep along x)."""
    lo_a = np.empty((ta.shape[0], 3))
    hi_a = np.empty((ta.shape[0], 3))
    lo_b = np.empty((tb.shape[0], 3))
    hi_b = np.empty((tb.shape[0], 3))
    for i in range(ta.shape[0]):
        for d in range(3):
            lo_a[i, d] = min(ta[i, 0, d], min(ta[i, 1, d], ta[i, 2, d]))
            hi_a[i, d] = max(ta[i, 0, d], max(ta[i, 1, d], ta[i, 2, d]))
    for j in range(tb.shape[0]):
        for d in range(3):
            lo_b[j, d] = min(tb[j, 0, d], min(tb[j, 1, d], tb[j, 2, d]))
            hi_b[j, d] = max(tb[j, 0, d], max(tb[j, 1, d], tb[j, 2, d]))
    oa = np.argsort(lo_a[:, 0])
    ob = np.argsort(lo_b[:, 0])
    out = []
    for ii in range(oa.shape[0]):
        i = oa[ii]
        for jj in range(ob.shape[0]):
            j = ob[jj]
            if lo_b[j, 0] > hi_a[i, 0]:
                break
            if hi_b[j, 0] < lo_a[i, 0]:
                continue
            if hi_a[i, 1] < lo_b[j, 1] or lo_a[i, 1] > hi_b[j, 1]:
                continue
            if hi_a[i, 2] < lo_b[j, 2] or lo_a[i, 2] > hi_b[j, 2]:
                continue
            out.append((i, j))
    res = np.empty((len(out), 2), np.int64)
    for k in range(len(out)):
        res[k, 0] = out[k][0]
        res[k, 1] = out[k][1]
    return res


def _scene(name: str, poses: int):
    if name in HARD:
        from .hard_scenes import make_hard_scene

        return make_hard_scene(name, n=poses)
    from .scenes import make_scene

    return make_scene(name, n=poses)


def record(names: list[str], poses: int) -> None:
    os.makedirs(LEAF_DIR, exist_ok=True)
    for name in names:
        t0 = time.perf_counter()
        s = _scene(name, poses)
        ta = np.ascontiguousarray(s.mesh_a.vertices[s.mesh_a.faces], dtype=np.float64)
        tb0 = np.ascontiguousarray(s.mesh_b.vertices[s.mesh_b.faces], dtype=np.float64)
        A, B, P = [], [], []
        for k in range(s.n):
            tb = _map_all(tb0, np.ascontiguousarray(s.pose_a), np.ascontiguousarray(s.poses_b[k]))
            ij = _box_pairs(ta, tb)
            A.append(ta[ij[:, 0]])
            B.append(tb[ij[:, 1]])
            P.append(np.full(len(ij), k))
        A, B, P = np.concatenate(A), np.concatenate(B), np.concatenate(P)
        total = len(A)
        if total > CAP:
            keep = np.sort(np.random.default_rng(0).choice(total, CAP, replace=False))
            A, B, P = A[keep], B[keep], P[keep]
        np.savez(os.path.join(LEAF_DIR, f"{name}.npz"), a=A, b=B, pose=P, total=total, poses=s.n)
        print(
            f"{name}: {s.n} poses, {total} box-overlapping pairs ({total / s.n:.0f}/pose), kept {len(A)}, "
            f"{time.perf_counter() - t0:.1f} s",
            flush=True,
        )


@njit(cache=True)
def _descent_pairs(topo_a, bv_a, tris_a, meta_a, scale_a, Ta, topo_b, bv_b, tris_b, meta_b, scale_b, Tb, bv_kind):
    """(ja, jb) of every triangle test an all-pairs ``collide_task`` makes (tree 0 of each
    pool): the same descent, node tests, leaf box rejections and order, recording instead
    of testing. b's triangles are returned mapped (the coordinates the test sees)."""
    if bv_kind == BV_SAABB:
        bv_kind = BV_AABB
    R, t = relative_pose(Ta, Tb)
    AbsR = (abs(R[0]), abs(R[1]), abs(R[2]), abs(R[3]), abs(R[4]), abs(R[5]), abs(R[6]), abs(R[7]), abs(R[8]))
    slack = 64.0 * 2.0**-53 * (scale_a[0] + scale_b[0] + abs(t[0]) + abs(t[1]) + abs(t[2]))
    is_obb = bv_kind == BV_OBB
    is_aabb = bv_kind == BV_AABB
    size_col = 12 if is_obb else (3 if is_aabb else -1)
    na0 = meta_a[0, META_NODE_OFF]
    ta0 = meta_a[0, META_TRI_OFF]
    nb0 = meta_b[0, META_NODE_OFF]
    tb0 = meta_b[0, META_TRI_OFF]
    stack = np.empty((100_000, 2), np.int64)
    stack[0, 0] = 0
    stack[0, 1] = 0
    top = 1
    out = []
    mapped = np.empty((tris_b.shape[0], 3, 3))
    while top > 0:
        top -= 1
        ia = na0 + stack[top, 0]
        ib = nb0 + stack[top, 1]
        if is_aabb:
            hit = _aabb_overlap(R, AbsR, t, bv_a, ia, bv_b, ib, slack)
        elif is_obb:
            hit = _obb_overlap(R, t, bv_a, ia, bv_b, ib, slack)
        else:
            hit, upd = overlap_other(bv_kind, R, t, bv_a, ia, bv_b, ib, slack)
        if not hit:
            continue
        leaf_a = (topo_a[ia, 2] & LEAF_FLAG) != 0
        leaf_b = (topo_b[ib, 2] & LEAF_FLAG) != 0
        if leaf_a and leaf_b:
            fa0 = ta0 + topo_a[ia, 0]
            fa1 = fa0 + topo_a[ia, 1]
            fb0 = tb0 + topo_b[ib, 0]
            fb1 = fb0 + topo_b[ib, 1]
            for jb in range(fb0, fb1):
                B = map_triangle(
                    R, t,
                    tris_b[jb, 0, 0], tris_b[jb, 0, 1], tris_b[jb, 0, 2],
                    tris_b[jb, 1, 0], tris_b[jb, 1, 1], tris_b[jb, 1, 2],
                    tris_b[jb, 2, 0], tris_b[jb, 2, 1], tris_b[jb, 2, 2],
                )  # fmt: skip
                for k in range(9):
                    mapped[jb, k // 3, k % 3] = B[k]
                blox = min(B[0], min(B[3], B[6]))
                bhix = max(B[0], max(B[3], B[6]))
                bloy = min(B[1], min(B[4], B[7]))
                bhiy = max(B[1], max(B[4], B[7]))
                bloz = min(B[2], min(B[5], B[8]))
                bhiz = max(B[2], max(B[5], B[8]))
                if is_aabb and (
                    blox > bv_a[ia, 0] + bv_a[ia, 3] + slack
                    or bhix < bv_a[ia, 0] - bv_a[ia, 3] - slack
                    or bloy > bv_a[ia, 1] + bv_a[ia, 4] + slack
                    or bhiy < bv_a[ia, 1] - bv_a[ia, 4] - slack
                    or bloz > bv_a[ia, 2] + bv_a[ia, 5] + slack
                    or bhiz < bv_a[ia, 2] - bv_a[ia, 5] - slack
                ):
                    continue
                for ja in range(fa0, fa1):
                    ax = (tris_a[ja, 0, 0], tris_a[ja, 1, 0], tris_a[ja, 2, 0])
                    ay = (tris_a[ja, 0, 1], tris_a[ja, 1, 1], tris_a[ja, 2, 1])
                    az = (tris_a[ja, 0, 2], tris_a[ja, 1, 2], tris_a[ja, 2, 2])
                    if max(ax[0], max(ax[1], ax[2])) < blox or min(ax[0], min(ax[1], ax[2])) > bhix:
                        continue
                    if max(ay[0], max(ay[1], ay[2])) < bloy or min(ay[0], min(ay[1], ay[2])) > bhiy:
                        continue
                    if max(az[0], max(az[1], az[2])) < bloz or min(az[0], min(az[1], az[2])) > bhiz:
                        continue
                    out.append((ja, jb))
            continue
        if leaf_b or (
            not leaf_a
            and (
                bv_a[ia, size_col] + bv_a[ia, size_col + 1] + bv_a[ia, size_col + 2]
                >= bv_b[ib, size_col] + bv_b[ib, size_col + 1] + bv_b[ib, size_col + 2]
                if size_col >= 0
                else size_other(bv_kind, bv_a, ia) >= size_other(bv_kind, bv_b, ib)
            )
        ):
            c0 = topo_a[ia, 0]
            c = c0 + topo_a[ia, 1] - 1
            while c >= c0:
                stack[top, 0] = c
                stack[top, 1] = ib - nb0
                top += 1
                c -= 1
        else:
            c0 = topo_b[ib, 0]
            c = c0 + topo_b[ib, 1] - 1
            while c >= c0:
                stack[top, 0] = ia - na0
                stack[top, 1] = c
                top += 1
                c -= 1
    res = np.empty((len(out), 2), np.int64)
    for k in range(len(out)):
        res[k, 0] = out[k][0]
        res[k, 1] = out[k][1]
    return res, mapped


def record_traversal(names: list[str], poses: int) -> None:
    """Like ``record``, but the pairs the default hierarchy's all-pairs descent tests."""
    import collisionkit as ck
    from collisionkit.bvh import pair_trees as trees

    os.makedirs(LEAF_DIR, exist_ok=True)
    for name in names:
        t0 = time.perf_counter()
        s = _scene(name, poses)
        a = ck.Mesh(s.mesh_a.vertices, s.mesh_a.faces)
        b = ck.Mesh(s.mesh_b.vertices, s.mesh_b.faces)
        tra, trb = trees(a, b)
        A, B, P = [], [], []
        for k in range(s.n):
            ij, mapped = _descent_pairs(
                *tra.descent_args, np.ascontiguousarray(s.pose_a),
                *trb.descent_args, np.ascontiguousarray(s.poses_b[k]), np.int64(tra.bv_code),
            )  # fmt: skip
            A.append(tra.arrays.tris[ij[:, 0]])
            B.append(mapped[ij[:, 1]])
            P.append(np.full(len(ij), k))
        A, B, P = np.concatenate(A), np.concatenate(B), np.concatenate(P)
        total = len(A)
        if total > CAP:
            keep = np.sort(np.random.default_rng(0).choice(total, CAP, replace=False))
            A, B, P = A[keep], B[keep], P[keep]
        np.savez(os.path.join(LEAF_DIR, f"{name}.npz"), a=A, b=B, pose=P, total=total, poses=s.n)
        kind = tra.options.bv if hasattr(tra.options, "bv") else "?"
        print(
            f"{name}: {s.n} poses, bv {kind}, {total} triangle tests ({total / s.n:.0f}/pose), kept {len(A)}, "
            f"{time.perf_counter() - t0:.1f} s",
            flush=True,
        )


def load(name: str):
    z = np.load(os.path.join(LEAF_DIR, f"{name}.npz"))
    return np.ascontiguousarray(z["a"]), np.ascontiguousarray(z["b"]), int(z["total"]), int(z["poses"])

    main()


# --------------------------------------------------------------------------- profile

from collisionkit.kernels.core.predicates import _O3D_ERRBOUND_A, _PERM_MIN  # noqa: E402
from collisionkit.kernels.triangle import tri_tri as _tt  # noqa: E402

PATHS = ["disjoint@1", "coplanar", "degenerate", "disjoint@2", "a-degenerate", "final-miss", "final-hit"]


@njit(cache=True)
def _o3_certain(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz):
    """Does orient3d's float filter decide this call (no exact fallback)?"""
    ux = bx - ax
    uy = by - ay
    uz = bz - az
    vx = cx - ax
    vy = cy - ay
    vz = cz - az
    wx = dx - ax
    wy = dy - ay
    wz = dz - az
    m1 = uy * vz
    m2 = uz * vy
    m3 = uz * vx
    m4 = ux * vz
    m5 = ux * vy
    m6 = uy * vx
    det = wx * (m1 - m2) + wy * (m3 - m4) + wz * (m5 - m6)
    perm = abs(wx) * (abs(m1) + abs(m2)) + abs(wy) * (abs(m3) + abs(m4)) + abs(wz) * (abs(m5) + abs(m6))
    if perm >= _PERM_MIN and perm < np.inf:
        bound = _O3D_ERRBOUND_A * perm
        return det > bound or -det > bound
    return False


@njit(cache=True)
def _sides_uncertain(T, P):
    n = 0
    for i in range(3):
        if not _o3_certain(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], P[3 * i], P[3 * i + 1], P[3 * i + 2]):
            n += 1
    return n


@njit(cache=True)
def classify(ta, tb):
    """Per pair: (path code into PATHS, orient3d calls, of which the float filter left undecided)."""
    out = np.zeros((ta.shape[0], 3), np.int64)
    for k in range(ta.shape[0]):
        A = _tt._load(ta[k])
        B = _tt._load(tb[k])
        a0, a1, a2 = _tt.orient3d_sides(B, A)
        s0 = _tt._sgn(a0)
        s1 = _tt._sgn(a1)
        s2 = _tt._sgn(a2)
        calls = 3
        unc = _sides_uncertain(B, A)
        if s0 == s1 and s1 == s2:
            if s0 != 0:
                code = 0
            elif _tt._injective_axis(B) < 0 or _tt._injective_axis(A) < 0:
                code = 2
            else:
                code = 1
        else:
            b0, b1, b2 = _tt.orient3d_sides(A, B)
            calls += 3
            unc += _sides_uncertain(A, B)
            r0 = _tt._sgn(b0)
            r1 = _tt._sgn(b1)
            r2 = _tt._sgn(b2)
            if r0 == r1 and r1 == r2:
                code = 3 if r0 != 0 else 4
            else:
                ia, fb = _tt._lone(s0, s1, s2)
                ib, fa = _tt._lone(r0, r1, r2)
                qa = (ia + 1) % 3 if fa > 0 else (ia + 2) % 3
                ra = (ia + 2) % 3 if fa > 0 else (ia + 1) % 3
                qb = (ib + 1) % 3 if fb > 0 else (ib + 2) % 3
                rb = (ib + 2) % 3 if fb > 0 else (ib + 1) % 3
                calls += 1
                if not _o3_certain(
                    A[3 * ia],
                    A[3 * ia + 1],
                    A[3 * ia + 2],
                    A[3 * qa],
                    A[3 * qa + 1],
                    A[3 * qa + 2],
                    B[3 * ib],
                    B[3 * ib + 1],
                    B[3 * ib + 2],
                    B[3 * qb],
                    B[3 * qb + 1],
                    B[3 * qb + 2],
                ):
                    unc += 1
                if _tt._o3(A, ia, A, qa, B, ib, B, qb) > 0.0:
                    code = 5
                else:
                    calls += 1
                    if not _o3_certain(
                        A[3 * ia],
                        A[3 * ia + 1],
                        A[3 * ia + 2],
                        A[3 * ra],
                        A[3 * ra + 1],
                        A[3 * ra + 2],
                        B[3 * ib],
                        B[3 * ib + 1],
                        B[3 * ib + 2],
                        B[3 * rb],
                        B[3 * rb + 1],
                        B[3 * rb + 2],
                    ):
                        unc += 1
                    code = 6 if _tt._o3(A, ia, A, ra, B, ib, B, rb) >= 0.0 else 5
        out[k, 0] = code
        out[k, 1] = calls
        out[k, 2] = unc
    return out


def _time_loop(fn, *args, reps=3, rounds=5):
    ts = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn(*args, reps)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) / reps


def profile(names: list[str]) -> None:
    from collisionkit.constants import TRI_TEST_GUIGUE
    from collisionkit.kernels.traverse.unit_costs import tri_tests_loop

    g = np.int64(TRI_TEST_GUIGUE)
    for name in names:
        ta, tb, total, poses = load(name)
        c = classify(ta, tb)
        n = len(ta)
        t_all = _time_loop(tri_tests_loop, ta, tb, g) / n * 1e9
        print(
            f"\n{name}: {n} pairs, {t_all:.1f} ns/pair (guigue), exact fallbacks in {np.mean(c[:, 2] > 0):.1%} of pairs"
        )
        for code, label in enumerate(PATHS):
            m = c[:, 0] == code
            if not m.any():
                continue
            sa, sb = np.ascontiguousarray(ta[m]), np.ascontiguousarray(tb[m])
            t = _time_loop(tri_tests_loop, sa, sb, g) / m.sum() * 1e9
            print(
                f"  {label:13s} {m.mean():6.1%}  {t:8.1f} ns/pair  share of time {t * m.sum() / (t_all * n):6.1%}"
                f"  exact calls/pair {c[m, 2].mean():.2f}  pairs with exact {np.mean(c[m, 2] > 0):.1%}"
            )


def _base_loop():
    """The leaf-test loop of a reference copy of the package importable as ``collisionkit_base``
    (e.g. ``git archive <commit> src/collisionkit`` renamed, on PYTHONPATH), or None."""
    try:
        from collisionkit_base.kernels.traverse.unit_costs import tri_tests_loop
    except ImportError:
        return None
    return tri_tests_loop


def compare(names: list[str], rounds: int) -> None:
    """Leaf test per pair, this tree against ``collisionkit_base``, interleaved (medians)."""
    from collisionkit.constants import TRI_TEST_GUIGUE
    from collisionkit.kernels.traverse.unit_costs import tri_tests_loop

    base = _base_loop()
    if base is None:
        raise SystemExit("collisionkit_base is not importable")
    g = np.int64(TRI_TEST_GUIGUE)
    print(f"{'scene':28s} {'pairs':>7s} {'before ns':>10s} {'after ns':>9s} {'speed-up':>8s}")
    for name in names:
        z = np.load(os.path.join(LEAF_DIR, f"{name}.npz"))
        ta, tb, pose = z["a"], z["b"], z["pose"]
        for label, m in ((name, np.ones(len(ta), bool)), (name + " pose 0", pose == 0)):
            if not m.any() or (label.endswith("pose 0") and m.all()):
                continue
            sa, sb = np.ascontiguousarray(ta[m]), np.ascontiguousarray(tb[m])
            reps = max(1, 400_000 // len(sa))
            if base(sa, sb, g, 1) != tri_tests_loop(sa, sb, g, 1):
                raise SystemExit(f"{label}: hit counts differ")
            tb_, ta_ = [], []
            for _ in range(rounds):
                t0 = time.perf_counter()
                base(sa, sb, g, reps)
                t1 = time.perf_counter()
                tri_tests_loop(sa, sb, g, reps)
                t2 = time.perf_counter()
                tb_.append(t1 - t0)
                ta_.append(t2 - t1)
            nb = statistics.median(tb_) / reps / len(sa) * 1e9
            na = statistics.median(ta_) / reps / len(sa) * 1e9
            print(f"{label:28s} {len(sa):7d} {nb:10.1f} {na:9.1f} {nb / na:7.2f}x", flush=True)


def shares(names: list[str]) -> None:
    """Share of the leaf tests the float stage decides: certainly disjoint, certainly crossing,
    passed on to an exact path (and of those, the coplanar axis-aligned fast path)."""
    from collisionkit.kernels.triangle.tri_tri import _common_axis_plane

    @njit(cache=True)
    def _coplanar_fast(ta, tb):
        out = np.zeros(ta.shape[0], np.bool_)
        for k in range(ta.shape[0]):
            out[k] = _common_axis_plane(_tt._load(ta[k]), _tt._load(tb[k])) >= 0
        return out

    print(
        f"{'scene':30s} {'pairs/pose':>10s} {'disjoint':>8s} {'crossing':>8s} {'passed on':>9s} {'(coplanar fast)':>15s}"
    )
    for name in names:
        z = np.load(os.path.join(LEAF_DIR, f"{name}.npz"))
        ta, tb, pose = z["a"], z["b"], z["pose"]
        for label, m in ((name, np.ones(len(ta), bool)), (name + " pose 0", pose == 0)):
            if not m.any() or (label.endswith("pose 0") and m.all()):
                continue
            sa, sb = np.ascontiguousarray(ta[m]), np.ascontiguousarray(tb[m])
            c = classify(sa, sb)
            decided = (c[:, 2] == 0) & np.isin(c[:, 0], [0, 3, 5, 6])
            dis = decided & (c[:, 0] != 6)
            cross = decided & (c[:, 0] == 6)
            fast = ~decided & _coplanar_fast(sa, sb)
            per_pose = int(z["total"]) / int(z["poses"]) if label == name else m.sum() * int(z["total"]) / len(ta)
            print(
                f"{label:30s} {per_pose:10.0f} {dis.mean():8.1%} {cross.mean():8.1%} {1 - decided.mean():9.1%} {fast.mean():15.1%}"
            )


def _libs():
    import collisionkit

    try:
        import collisionkit_base
    except ImportError:
        raise SystemExit("collisionkit_base is not importable") from None
    return {"before": collisionkit_base, "after": collisionkit}


def _run(lib, a, b, Ta, Pa, Pb, what):
    """One timed unit of ``queries``; returns the answers (compared before/after)."""
    if what == "intersects call":
        return [bool(lib.intersects(a, b, Ta, T)) for T in Pb]
    if what == "contacts call":
        return [len(lib.contacts(a, b, Ta, T, mode="all").face_a) for T in Pb]
    if what == "intersects batch":
        return lib.intersects(a, b, Pa, Pb, threads=1).tolist()
    c = lib.contacts(a, b, Pa, Pb, mode="all", threads=1)
    return np.stack([c.pose_index, c.face_a, c.face_b]).tolist()


def queries(names: list[str], rounds: int, poses: int) -> None:
    """Whole queries before/after, in one process, interleaved; medians over rounds.

    Per call: one ``intersects`` / ``contacts(mode="all")`` call per pose (the mean over the
    poses); batched: one call on all poses, ``threads=1``. Answers must be equal.
    """
    libs = _libs()
    print(f"{'scene':24s} {'query':18s} {'before us':>10s} {'after us':>9s} {'speed-up':>8s}", flush=True)
    for name in names:
        s = _scene(name, poses)
        Ta = np.ascontiguousarray(s.pose_a)
        Pb = np.ascontiguousarray(s.poses_b)
        Pa = np.ascontiguousarray(np.broadcast_to(Ta, Pb.shape))
        meshes = {}
        for key, lib in libs.items():
            a = lib.Mesh(s.mesh_a.vertices, s.mesh_a.faces)
            b = lib.Mesh(s.mesh_b.vertices, s.mesh_b.faces)
            lib.contacts(a, b, Ta, Pb[0], mode="all")  # trees built and kernels loaded
            lib.intersects(a, b, Pa, Pb, threads=1)
            meshes[key] = (a, b)

        for what in ("intersects call", "contacts call", "intersects batch", "contacts batch"):
            args = (Ta, Pa, Pb, what)
            t0 = time.perf_counter()
            same = _run(libs["before"], *meshes["before"], *args) == _run(libs["after"], *meshes["after"], *args)
            if not same:
                raise SystemExit(f"{name} {what}: answers differ")
            # each timed unit repeats the query so that it lasts >= ~0.1 s (scheduler noise)
            reps = max(1, int(0.2 / max(time.perf_counter() - t0, 1e-6)))
            t = {"before": [], "after": []}
            for r in range(rounds):
                for key in ("before", "after") if r % 2 == 0 else ("after", "before"):
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        _run(libs[key], *meshes[key], *args)
                    t[key].append((time.perf_counter() - t0) / reps)
            nb = statistics.median(t["before"]) / len(Pb) * 1e6
            na = statistics.median(t["after"]) / len(Pb) * 1e6
            print(f"{name:24s} {what:18s} {nb:10.1f} {na:9.1f} {nb / na:7.2f}x", flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["record", "record-boxes", "profile", "compare", "shares", "queries"])
    ap.add_argument("--scenes", default=",".join(HARD + TUNED))
    ap.add_argument("--poses", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    names = args.scenes.split(",")
    if args.what == "record":
        record_traversal(names, args.poses)
    elif args.what == "record-boxes":
        record(names, args.poses)
    elif args.what == "profile":
        profile(names)
    elif args.what == "compare":
        compare(names, args.rounds)
    elif args.what == "shares":
        shares(names)
    elif args.what == "queries":
        queries(names, args.rounds, args.poses)


if __name__ == "__main__":
    main()
