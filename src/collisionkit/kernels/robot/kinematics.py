"""Forward kinematics of a joint tree for a batch of configurations, in one pass.

Layout (built once per robot by ``robot.Robot``): the joints in topological order
(parents before children) as steps; per step the parent and child link, the joint
kind and a (3, 10) motion matrix ``H`` of constants:

* fixed (``JOINT_FIXED``): columns 0-2 the origin's rotation Ro, column 3 its translation to;
* prismatic (``JOINT_PRISMATIC``): as fixed, plus column 4 = Ro a (a: the unit axis), the
  slide direction in the parent link's frame;
* revolute (``JOINT_REVOLUTE``, continuous too): column 3 = to, and Ro rot(a, v) =
  A + cos(v) B + sin(v) D with A = Ro a a^T (columns 0-2), B = Ro (I - a a^T)
  (columns 4-6), D = Ro [a]x (columns 7-9): Rodrigues' formula with the constant
  products folded in, so a step costs two 3x3 products and one cosine and sine.

The child's pose is parent @ [M | m] with M the step's rotation and m its translation
(to, plus v Ro a for a prismatic joint). Joint values (mimic joints resolved) come in
as ``values[step, configuration]``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ..broadphase.common import padded_box
from ..core.jit import njit

JOINT_FIXED = 0
JOINT_PRISMATIC = 1
JOINT_REVOLUTE = 2


@njit(cache=True, nogil=True)
def _configuration(k, parents, children, kinds, H, values, out):
    """Every link pose of configuration k (the base link's pose is ``base``)."""
    for s in range(parents.shape[0]):
        p = parents[s]
        c = children[s]
        v = values[s, k]
        kind = kinds[s]
        if kind == JOINT_REVOLUTE:
            cv = math.cos(v)
            sv = math.sin(v)
            M = (
                H[s, 0, 0] + cv * H[s, 0, 4] + sv * H[s, 0, 7],
                H[s, 0, 1] + cv * H[s, 0, 5] + sv * H[s, 0, 8],
                H[s, 0, 2] + cv * H[s, 0, 6] + sv * H[s, 0, 9],
                H[s, 1, 0] + cv * H[s, 1, 4] + sv * H[s, 1, 7],
                H[s, 1, 1] + cv * H[s, 1, 5] + sv * H[s, 1, 8],
                H[s, 1, 2] + cv * H[s, 1, 6] + sv * H[s, 1, 9],
                H[s, 2, 0] + cv * H[s, 2, 4] + sv * H[s, 2, 7],
                H[s, 2, 1] + cv * H[s, 2, 5] + sv * H[s, 2, 8],
                H[s, 2, 2] + cv * H[s, 2, 6] + sv * H[s, 2, 9],
            )
        else:
            M = (
                H[s, 0, 0], H[s, 0, 1], H[s, 0, 2],
                H[s, 1, 0], H[s, 1, 1], H[s, 1, 2],
                H[s, 2, 0], H[s, 2, 1], H[s, 2, 2],
            )  # fmt: skip
        m0 = H[s, 0, 3]
        m1 = H[s, 1, 3]
        m2 = H[s, 2, 3]
        if kind == JOINT_PRISMATIC:
            m0 += v * H[s, 0, 4]
            m1 += v * H[s, 1, 4]
            m2 += v * H[s, 2, 4]
        for i in range(3):
            r0 = out[p, k, i, 0]
            r1 = out[p, k, i, 1]
            r2 = out[p, k, i, 2]
            out[c, k, i, 0] = r0 * M[0] + r1 * M[3] + r2 * M[6]
            out[c, k, i, 1] = r0 * M[1] + r1 * M[4] + r2 * M[7]
            out[c, k, i, 2] = r0 * M[2] + r1 * M[5] + r2 * M[8]
            out[c, k, i, 3] = r0 * m0 + r1 * m1 + r2 * m2 + out[p, k, i, 3]
        out[c, k, 3, 0] = 0.0
        out[c, k, 3, 1] = 0.0
        out[c, k, 3, 2] = 0.0
        out[c, k, 3, 3] = 1.0


@njit(cache=True, nogil=True)
def _configurations(k0, k1, base_link, base, parents, children, kinds, H, values, local, boxed, slack, out, box):
    """Configurations k0 .. k1 - 1: poses, then the padded world box of each link in ``boxed``."""
    for k in range(k0, k1):
        for i in range(4):
            for j in range(4):
                out[base_link, k, i, j] = base[i, j]
        _configuration(k, parents, children, kinds, H, values, out)
        for m in range(boxed.shape[0]):
            c = boxed[m]
            box[m, 0, k], box[m, 1, k], box[m, 2, k], box[m, 3, k], box[m, 4, k], box[m, 5, k] = padded_box(
                local, m, out[c], k, slack
            )


@njit(cache=True, nogil=True)
def chain_poses(base_link, base, parents, children, kinds, H, values, local, boxed, slack, out, box, nchunks):
    """Fill ``out`` (L, N, 4, 4) with every link's world pose in each of N configurations, and
    ``box`` (M, 6, N) with the world boxes (rows lo xyz, hi xyz) of links ``boxed`` (M,).

    base_link : index of the root link, whose pose is ``base`` (4, 4) in every configuration
    parents, children, kinds : (S,) int64 per joint step, in topological order
    H : (S, 3, 10) float64 motion matrices (module notes); values : (S, N) float64 joint values
    local : (M, 6) local boxes (min xyz, max xyz) of the links ``boxed``, padded by the
        relative ``slack`` as ``broadphase.common.world_boxes`` pads (the same function)
    nchunks : the chunks ``chain_poses_parallel`` would use (the same split, run in order)
    """
    n = out.shape[1]
    for c in range(nchunks):
        _configurations(
            c * n // nchunks, (c + 1) * n // nchunks,
            base_link, base, parents, children, kinds, H, values, local, boxed, slack, out, box,
        )  # fmt: skip


@njit(cache=True, nogil=True, parallel=True)
def chain_poses_parallel(base_link, base, parents, children, kinds, H, values, local, boxed, slack, out, box, nchunks):
    """``chain_poses`` over numba threads, one chunk of configurations per prange step."""
    n = out.shape[1]
    for c in prange(nchunks):
        c = np.int64(c)  # prange's index is unsigned: keep the chunk bounds int64
        _configurations(
            c * n // nchunks, (c + 1) * n // nchunks,
            base_link, base, parents, children, kinds, H, values, local, boxed, slack, out, box,
        )  # fmt: skip
