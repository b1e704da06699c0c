"""The S-AABB hybrid volume of seed 002 (Zhao, Tan & Li 2008): a box AND a sphere per node.

Seed 002, s.3.1: every polygon gets a small "underlying sphere" (the paper uses
Ritter's bounding sphere, Graphics Gems 1990); every node of the hierarchy holds
the axis-aligned box and a bounding sphere of its polygons. During traversal the
node's sphere-to-box volume ratio, compared with a threshold of its tree level,
decides whether the box is worth testing after the sphere (s.3.2).

Node row layout (``constants.BV_SAABB``, 11 floats)::

    0..2  box centre      3..5  box half extents     (exactly a BV_AABB row)
    6..8  sphere centre   9     sphere radius
    10    q = (sphere volume / box volume) / (median of that ratio on the node's level)

The sphere of a triangle is its smallest enclosing sphere (exact construction:
the circumsphere of an acute triangle, else the sphere on its longest edge),
tighter than Ritter's approximation and as cheap. A node's sphere is the smaller
of Ritter's sphere of its vertices and the sphere about its box centre through
its farthest vertex. Every radius is the largest computed vertex distance,
padded by a few units of roundoff, so each sphere contains its triangles.

The per-triangle spheres are not part of the tree's arrays (``BVHArrays`` is the
same for every volume kind): ``triangle_spheres`` fills an (F, 4) array in leaf
order, which the breadth-first strategy caches on the mesh
(``query/bfs.py``) and uses as the seed's "pre-check aid" at the leaves.
"""

from __future__ import annotations

import numpy as np

from ...constants import LEAF_FLAG
from ..core.jit import njit, njit_internal
from .sphere import circumcentre_offset

_U = 2.0**-53


@njit_internal(nogil=True)
def triangle_sphere(ax, ay, az, bx, by, bz, cx, cy, cz):
    """Smallest enclosing sphere of triangle (a, b, c): (centre x, y, z, radius).

    The radius is the largest computed distance from the centre to a vertex,
    padded by roundoff, so the sphere contains the three stored vertices
    whatever the centre's rounding (degenerate triangles included).
    """
    abx = bx - ax
    aby = by - ay
    abz = bz - az
    acx = cx - ax
    acy = cy - ay
    acz = cz - az
    bcx = cx - bx
    bcy = cy - by
    bcz = cz - bz
    lab = abx * abx + aby * aby + abz * abz
    lac = acx * acx + acy * acy + acz * acz
    lbc = bcx * bcx + bcy * bcy + bcz * bcz
    # Midpoint of the longest edge: the answer for right, obtuse and degenerate triangles.
    if lab >= lac and lab >= lbc:
        ox = 0.5 * (ax + bx)
        oy = 0.5 * (ay + by)
        oz = 0.5 * (az + bz)
        longest = lab
        other = lac + lbc
    elif lac >= lbc:
        ox = 0.5 * (ax + cx)
        oy = 0.5 * (ay + cy)
        oz = 0.5 * (az + cz)
        longest = lac
        other = lab + lbc
    else:
        ox = 0.5 * (bx + cx)
        oy = 0.5 * (by + cy)
        oz = 0.5 * (bz + cz)
        longest = lbc
        other = lab + lac
    if longest < other:
        # Acute: the circumcentre, a + (|ac|^2 (n x ab) + |ab|^2 (ac x n)) / (2 |n|^2), n = ab x ac.
        nx = aby * acz - abz * acy
        ny = abz * acx - abx * acz
        nz = abx * acy - aby * acx
        nn = nx * nx + ny * ny + nz * nz
        if nn > 0.0:
            dx, dy, dz = circumcentre_offset(abx, aby, abz, acx, acy, acz, nx, ny, nz, lab, lac, nn)
            qx = ax + dx
            qy = ay + dy
            qz = az + dz
            ok = qx == qx and qy == qy and qz == qz and abs(qx) < np.inf and abs(qy) < np.inf and abs(qz) < np.inf
            if ok:
                ox = qx
                oy = qy
                oz = qz
    r2 = 0.0
    d = (ax - ox) ** 2 + (ay - oy) ** 2 + (az - oz) ** 2
    r2 = max(r2, d)
    d = (bx - ox) ** 2 + (by - oy) ** 2 + (bz - oz) ** 2
    r2 = max(r2, d)
    d = (cx - ox) ** 2 + (cy - oy) ** 2 + (cz - oz) ** 2
    r2 = max(r2, d)
    r = np.sqrt(r2)
    # EXACT: pad for the rounding of the differences, squares and square root.
    r += 8.0 * _U * (r + abs(ox) + abs(oy) + abs(oz))
    return ox, oy, oz, r


@njit(cache=True, nogil=True)
def triangle_spheres(tris, out):
    """Fill out (F, 4) with the smallest enclosing sphere (centre, radius) of each triangle."""
    for i in range(tris.shape[0]):
        s = triangle_sphere(
            tris[i, 0, 0], tris[i, 0, 1], tris[i, 0, 2],
            tris[i, 1, 0], tris[i, 1, 1], tris[i, 1, 2],
            tris[i, 2, 0], tris[i, 2, 1], tris[i, 2, 2],
        )
        out[i, 0] = s[0]
        out[i, 1] = s[1]
        out[i, 2] = s[2]
        out[i, 3] = s[3]


@njit_internal(nogil=True)
def _far_radius2(tris, lo, hi, ox, oy, oz):
    """Largest squared distance from (ox, oy, oz) to a vertex of tris[lo:hi]."""
    r2 = 0.0
    for i in range(lo, hi):
        for v in range(3):
            d = (tris[i, v, 0] - ox) ** 2 + (tris[i, v, 1] - oy) ** 2 + (tris[i, v, 2] - oz) ** 2
            r2 = max(r2, d)
    return r2


@njit_internal(nogil=True)
def _farthest(tris, lo, hi, px, py, pz):
    """(d2, x, y, z): the first vertex of tris[lo:hi] farthest from p, d2 its squared distance."""
    best = -1.0
    fx = px
    fy = py
    fz = pz
    for i in range(lo, hi):
        for v in range(3):
            d = (tris[i, v, 0] - px) ** 2 + (tris[i, v, 1] - py) ** 2 + (tris[i, v, 2] - pz) ** 2
            if d > best:
                best = d
                fx = tris[i, v, 0]
                fy = tris[i, v, 1]
                fz = tris[i, v, 2]
    return best, fx, fy, fz


@njit_internal(nogil=True)
def _node_sphere(tris, lo, hi, bx, by, bz):
    """Bounding sphere of the vertices of tris[lo:hi]: the smaller of Ritter's sphere
    (Ritter 1990: diameter between two far points, then grow over the rest) and the
    sphere about the box centre (bx, by, bz). Returns (cx, cy, cz, radius)."""
    # Ritter: from the first vertex find the farthest y, from y the farthest z.
    px = tris[lo, 0, 0]
    py = tris[lo, 0, 1]
    pz = tris[lo, 0, 2]
    _, yx, yy, yz = _farthest(tris, lo, hi, px, py, pz)
    best, zx, zy, zz = _farthest(tris, lo, hi, yx, yy, yz)
    cx = 0.5 * (yx + zx)
    cy = 0.5 * (yy + zy)
    cz = 0.5 * (yz + zz)
    r = 0.5 * np.sqrt(best)
    for i in range(lo, hi):
        for v in range(3):
            dx = tris[i, v, 0] - cx
            dy = tris[i, v, 1] - cy
            dz = tris[i, v, 2] - cz
            d = np.sqrt(dx * dx + dy * dy + dz * dz)
            if d > r:
                # Grow: the new sphere touches the old one's far side and this point.
                nr = 0.5 * (r + d)
                k = (nr - r) / d
                cx += k * dx
                cy += k * dy
                cz += k * dz
                r = nr
    # Radii from a final pass over the vertices (Ritter's growth rounds), padded.
    r_ritter = np.sqrt(_far_radius2(tris, lo, hi, cx, cy, cz))
    r_box = np.sqrt(_far_radius2(tris, lo, hi, bx, by, bz))
    if r_box <= r_ritter:
        cx = bx
        cy = by
        cz = bz
        r = r_box
    else:
        r = r_ritter
    r += 8.0 * _U * (r + abs(cx) + abs(cy) + abs(cz))
    return cx, cy, cz, r


@njit(cache=True, nogil=True)
def fit_saabb(topo, boxes, tris):
    """S-AABB rows (n, 11) for a tree whose AABB rows (n, 6) are ``boxes``.

    ``tris`` (F, 3, 3) are the triangles in leaf order (each subtree's triangles
    are contiguous there). Column 10 is the node's sphere-to-box volume ratio
    over the median ratio of its level (seed 002: "the threshold ... is
    associated with the level of current node ... determined in a statistical
    sense after all the volume ratios of its sibling nodes are taken into
    account"); a flat box (zero volume) has ratio inf, so its box is always
    respected; a point-sized sphere has ratio 0.
    """
    n = topo.shape[0]
    out = np.empty((n, 11))
    lo = np.zeros(n, np.int64)
    hi = np.zeros(n, np.int64)
    depth = np.zeros(n, np.int64)
    # Children are stored after their parent: depths top-down, ranges bottom-up.
    for i in range(n):
        if (topo[i, 2] & LEAF_FLAG) == 0:
            for c in range(topo[i, 0], topo[i, 0] + topo[i, 1]):
                depth[c] = depth[i] + 1
    for i in range(n - 1, -1, -1):
        if (topo[i, 2] & LEAF_FLAG) != 0:
            lo[i] = topo[i, 0]
            hi[i] = topo[i, 0] + topo[i, 1]
        else:
            f = topo[i, 0]
            lo[i] = lo[f]
            hi[i] = hi[f]
            for c in range(f, f + topo[i, 1]):
                lo[i] = min(lo[i], lo[c])
                hi[i] = max(hi[i], hi[c])
    ratio = np.empty(n)
    for i in range(n):
        for d in range(6):
            out[i, d] = boxes[i, d]
        s = _node_sphere(tris, lo[i], hi[i], boxes[i, 0], boxes[i, 1], boxes[i, 2])
        out[i, 6] = s[0]
        out[i, 7] = s[1]
        out[i, 8] = s[2]
        out[i, 9] = s[3]
        box_volume = 8.0 * boxes[i, 3] * boxes[i, 4] * boxes[i, 5]
        sphere_volume = 4.0 / 3.0 * np.pi * s[3] ** 3
        if sphere_volume == 0.0:
            ratio[i] = 0.0
        elif box_volume == 0.0:
            ratio[i] = np.inf
        else:
            ratio[i] = sphere_volume / box_volume
    max_depth = 0
    for i in range(n):
        max_depth = max(max_depth, depth[i])
    for level in range(max_depth + 1):
        m = 0
        for i in range(n):
            if depth[i] == level:
                m += 1
        vals = np.empty(m)
        m = 0
        for i in range(n):
            if depth[i] == level:
                vals[m] = ratio[i]
                m += 1
        med = np.median(vals)
        for i in range(n):
            if depth[i] == level:
                if ratio[i] == np.inf:
                    out[i, 10] = np.inf
                elif med == np.inf:
                    out[i, 10] = 0.0
                elif med == 0.0:
                    out[i, 10] = np.inf if ratio[i] > 0.0 else 1.0
                else:
                    out[i, 10] = ratio[i] / med
    return out
