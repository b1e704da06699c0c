"""One adapter per engine, with one interface, for the side-by-side benchmark.

Every adapter does what a user does per call, in the fastest correct way we found
for that engine (see README.md, "Peer adapters"):

``setup(mesh_a, mesh_b)``
    Build the engine's hierarchy for both meshes (not timed by ``pairs.py``).
``intersects_one(T_a, T_b) -> bool``
    Set both objects' transforms from numpy ``(4, 4)`` world-from-object poses and run the
    boolean query.
``all_pairs_raw(T_a, T_b) -> (k, 2) int64 array``
    The same, for all intersecting triangle pairs (face_a, face_b): this is what ``pairs.py``
    times. SAME WORK FOR EVERY ENGINE (issue #20): every engine is asked for triangle ids
    only (no contact points, normals or depths: collisionkit computes none), its request,
    result and transform objects are built once in ``setup`` (outside the timed region)
    where the engine allows reuse, and every timed call ends with the same answer form, a
    ``(k, 2)`` int64 array (collisionkit's record is converted too). Table of settings:
    benchmarks/README.md, "Same work for every engine".
``pairs_from_raw(raw) -> set[(face_a, face_b)]`` and ``all_pairs_one = pairs_from_raw o
all_pairs_raw``
    For verification only (not timed).
``intersects_batch(P_a, P_b) -> (n,) bool`` / ``all_pairs_batch(P_a, P_b) -> list[raw]``
    A Python loop over the poses (the peers have no batch call); collisionkit's adapters
    make one batched call.
``build(mesh)``
    Build a fresh hierarchy for one mesh (timed by the build benchmark).

Peers' tolerances are recorded here, not hidden: Coal reports a triangle pair as colliding
when its GJK distance is within ``security_margin`` (0) plus the GJK tolerance (1e-6,
absolute, on the *distance*), so with near contacts it reports pairs that are disjoint but
1e-6-close (every such extra pair we audited was within 1e-6 and none within 1e-9).
python-fcl 0.7 and trueform 0.10 agreed with each other pair for pair on every scene.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

import numpy as np

BIG = 1 << 22  # "all contacts" for engines that need a maximum


def _version(mod: str) -> str:
    try:
        m = importlib.import_module(mod)
    except Exception:  # noqa: BLE001 - absent or broken engine
        return "unavailable"
    for attr in ("__version__", "version"):
        v = getattr(m, attr, None)
        if isinstance(v, str):
            return v
        if v is not None and hasattr(v, "__version__"):
            return str(v.__version__)
    try:
        from importlib.metadata import version

        return version({"fcl": "python-fcl"}.get(mod, mod))
    except Exception:  # noqa: BLE001
        return "unknown"



def coal_bvh(m, bv_class: str = "BVHModelOBBRSS"):
    """Coal's BVH model of a collisionkit Mesh's triangles (built outside any timed region)."""
    import coal

    g = getattr(coal, bv_class)()
    g.beginModel(m.n_faces, m.n_vertices)
    g.addVertices(np.ascontiguousarray(m.vertices, dtype=np.float64))
    g.addTriangles(np.ascontiguousarray(m.faces, dtype=np.int64))
    g.endModel()
    return g


def fcl_bvh(m):
    """python-fcl's BVH model (OBBRSS) of a collisionkit Mesh's triangles."""
    import fcl

    g = fcl.BVHModel()
    g.beginModel(m.n_vertices, m.n_faces)
    g.addSubModel(np.ascontiguousarray(m.vertices, dtype=np.float64), np.ascontiguousarray(m.faces, dtype=np.int32))
    g.endModel()
    return g

def _ids(rows) -> np.ndarray:
    """(k, 2) int64 array of (face_a, face_b): the one answer form of every timed pairs call."""
    return np.asarray(rows, dtype=np.int64).reshape(-1, 2)


def _ids_columns(fa, fb) -> np.ndarray:
    out = np.empty((len(fa), 2), np.int64)
    out[:, 0] = fa
    out[:, 1] = fb
    return out


def _stack(P: np.ndarray) -> np.ndarray:
    P = np.asarray(P, dtype=np.float64)
    return P[None] if P.ndim == 2 else P


class Engine:
    """Base adapter. Subclasses set ``name``, ``module`` and implement the hooks."""

    name = "engine"
    module = ""
    batch_native = False  # True when intersects_batch is one call, not a Python loop
    can_pairs = True
    can_build = True
    note = ""

    @classmethod
    def available(cls) -> bool:
        try:
            importlib.import_module(cls.module)
            return True
        except Exception:  # noqa: BLE001
            return False

    @classmethod
    def version(cls) -> str:
        return _version(cls.module)

    # --- hooks
    def setup(self, mesh_a, mesh_b) -> None:
        raise NotImplementedError

    def intersects_one(self, T_a: np.ndarray, T_b: np.ndarray) -> bool:
        raise NotImplementedError

    def all_pairs_raw(self, T_a: np.ndarray, T_b: np.ndarray) -> Any:
        raise NotImplementedError

    def pairs_from_raw(self, raw: Any) -> set[tuple[int, int]]:
        return set(map(tuple, np.asarray(raw, dtype=np.int64).reshape(-1, 2).tolist()))

    def build(self, mesh) -> Any:
        raise NotImplementedError

    # --- derived
    def all_pairs_one(self, T_a: np.ndarray, T_b: np.ndarray) -> set[tuple[int, int]]:
        return self.pairs_from_raw(self.all_pairs_raw(T_a, T_b))

    def intersects_batch(self, P_a: np.ndarray, P_b: np.ndarray) -> np.ndarray:
        f = self.intersects_one
        return np.fromiter((f(a, b) for a, b in zip(P_a, P_b, strict=True)), dtype=bool, count=len(P_b))

    def all_pairs_batch(self, P_a: np.ndarray, P_b: np.ndarray) -> list:
        f = self.all_pairs_raw
        return [f(a, b) for a, b in zip(P_a, P_b, strict=True)]

    def batch_pairs_to_list(self, raw_batch: Any, n: int) -> list[set[tuple[int, int]]]:
        """Per-pose pair sets from ``all_pairs_batch``'s result (verification only)."""
        return [self.pairs_from_raw(r) for r in raw_batch]


# --------------------------------------------------------------------------- Coal


class _Coal(Engine):
    module = "coal"
    bv_class = "BVHModelOBBRSS"
    note = (
        "ComputeCollision functor reused, Transform3s reused (setRotation/setTranslation), "
        "request/result reused (result.clear()); pairs: CollisionRequest(NO_REQUEST, 2**22) "
        "(ids only, no contact geometry), Contact.b1/b2 -> (k,2) int64"
    )

    def _model(self, m):
        return coal_bvh(m, self.bv_class)

    def setup(self, mesh_a, mesh_b) -> None:
        import coal

        self.ga, self.gb = self._model(mesh_a), self._model(mesh_b)
        self.functor = coal.ComputeCollision(self.ga, self.gb)
        self.req_bool = coal.CollisionRequest()  # num_max_contacts=1: stops at the first pair
        # ids only: NO_REQUEST still records every colliding pair's (b1, b2), without the
        # contact points / normals / depths the CONTACT flag adds (checked equal in tests)
        self.req_all = coal.CollisionRequest(coal.CollisionRequestFlag.NO_REQUEST, BIG)
        self.res = coal.CollisionResult()
        self.ta, self.tb = coal.Transform3s(), coal.Transform3s()

    def _set(self, T_a, T_b) -> None:
        ta, tb = self.ta, self.tb
        ta.setRotation(T_a[:3, :3])
        ta.setTranslation(T_a[:3, 3])
        tb.setRotation(T_b[:3, :3])
        tb.setTranslation(T_b[:3, 3])

    def intersects_one(self, T_a, T_b) -> bool:
        self._set(T_a, T_b)
        res = self.res
        res.clear()
        return self.functor(self.ta, self.tb, self.req_bool, res) > 0

    def all_pairs_raw(self, T_a, T_b):
        self._set(T_a, T_b)
        res = self.res
        res.clear()
        self.functor(self.ta, self.tb, self.req_all, res)
        return _ids([(c.b1, c.b2) for c in res.getContacts()])

    def build(self, mesh):
        return self._model(mesh)


class CoalOBBRSS(_Coal):
    name = "coal-obbrss"
    bv_class = "BVHModelOBBRSS"


class CoalOBB(_Coal):
    name = "coal-obb"
    bv_class = "BVHModelOBB"


# --------------------------------------------------------------------------- python-fcl


class FCL(Engine):
    name = "fcl"
    module = "fcl"
    note = (
        "CollisionObject.setRotation/setTranslation (no Transform object), collide() return "
        "value; pairs: CollisionRequest(num_max_contacts=2**22, enable_contact=False) (ids "
        "only), a fresh CollisionResult per call (python-fcl's accumulates and has no clear()), "
        "Contact.b1/b2 -> (k,2) int64 (OBBRSS BVHModel)"
    )

    @classmethod
    def version(cls) -> str:
        try:
            from importlib.metadata import version

            return version("python-fcl")
        except Exception:  # noqa: BLE001
            return _version("fcl")

    def _model(self, m):
        return fcl_bvh(m)

    def setup(self, mesh_a, mesh_b) -> None:
        import fcl

        self.fcl = fcl
        self.ga, self.gb = self._model(mesh_a), self._model(mesh_b)
        self.oa = fcl.CollisionObject(self.ga, fcl.Transform())
        self.ob = fcl.CollisionObject(self.gb, fcl.Transform())
        self.req_bool = fcl.CollisionRequest()
        # ids only: without enable_contact FCL still reports each pair's (b1, b2)
        self.req_all = fcl.CollisionRequest(num_max_contacts=BIG, enable_contact=False)

    def _set(self, T_a, T_b) -> None:
        oa, ob = self.oa, self.ob
        oa.setRotation(T_a[:3, :3])
        oa.setTranslation(T_a[:3, 3])
        ob.setRotation(T_b[:3, :3])
        ob.setTranslation(T_b[:3, 3])

    def intersects_one(self, T_a, T_b) -> bool:
        self._set(T_a, T_b)
        return self.fcl.collide(self.oa, self.ob, self.req_bool) > 0

    def all_pairs_raw(self, T_a, T_b):
        self._set(T_a, T_b)
        # NOTE: python-fcl's CollisionResult accumulates across calls; a fresh one each call.
        res = self.fcl.CollisionResult()
        self.fcl.collide(self.oa, self.ob, self.req_all, res)
        return _ids([(c.b1, c.b2) for c in res.contacts])

    def build(self, mesh):
        return self._model(mesh)


# --------------------------------------------------------------------------- trueform


class Trueform(Engine):
    """trueform 0.10: ``tf.Mesh.transformation`` (a 4x4 per mesh) makes mesh-mesh queries
    posed; ``tf.intersects(mesh, mesh)`` is the boolean, ``tf.gather_intersecting_ids(mesh,
    mesh)`` the ``(k, 2)`` array of intersecting (face_a, face_b) pairs. We resolve the
    nanobind functions those dispatch to once (``intersects_mesh_mesh_<suffix>``,
    ``gather_ids_mesh_mesh_<suffix>``) and set the transforms on the wrappers: same
    results as the public calls (checked in ``setup``), about half the per-call overhead.
    NOTE: trueform runs its queries on a TBB pool: cpu/wall is about 2 on 2 cores.
    """

    name = "trueform"
    module = "trueform"
    note = (
        "tf.Mesh(float64, int32) + .transformation; boolean tf.intersects(mesh, mesh), pairs "
        "tf.gather_intersecting_ids(mesh, mesh) -> (k,2); called through the resolved "
        "nanobind functions (public API as fallback); TBB-parallel inside"
    )

    def __init__(self, direct: bool = True):
        self.direct = direct

    def _mesh(self, m):
        import trueform as tf

        # NOTE: nanobind refuses read-only arrays: trueform gets writable copies.
        tm = tf.Mesh(np.array(m.faces, dtype=np.int32), np.array(m.vertices, dtype=np.float64))
        tm.build_tree()
        return tm

    def setup(self, mesh_a, mesh_b) -> None:
        import trueform as tf

        self.tf = tf
        self.ma, self.mb = self._mesh(mesh_a), self._mesh(mesh_b)
        self._fi = self._fg = None
        if self.direct:
            try:
                from trueform import _trueform
                from trueform._dispatch import build_suffix_pair, extract_meta
                from trueform._spatial._dispatch import (
                    GATHER_IDS_FORM_FORM,
                    INTERSECTS_FORM_FORM,
                )

                suffix = build_suffix_pair(extract_meta(self.ma), extract_meta(self.mb))
                ti, swap_i = INTERSECTS_FORM_FORM[(tf.Mesh, tf.Mesh)]
                tg, swap_g = GATHER_IDS_FORM_FORM[(tf.Mesh, tf.Mesh)]
                if swap_i or swap_g:
                    raise LookupError("swapped dispatch")
                self._fi = getattr(_trueform.spatial, ti.format(suffix))
                self._fg = getattr(_trueform.spatial, tg.format(suffix))
                self._wa, self._wb = self.ma._wrapper, self.mb._wrapper
                self._self_check()
            except Exception:  # noqa: BLE001 - private layout changed: use the public API
                self._fi = self._fg = None
        self.path = "direct" if self._fi is not None else "public"

    def _self_check(self) -> None:
        """The direct path must agree with the public API on a few poses."""
        tf = self.tf
        rng = np.random.default_rng(0)
        eye = np.eye(4)
        for _ in range(4):
            T = np.eye(4)
            T[:3, 3] = rng.normal(scale=0.05, size=3) * np.ptp(self.mb.points, axis=0)
            self.ma.transformation, self.mb.transformation = eye, T
            want_b, want_p = bool(tf.intersects(self.ma, self.mb)), tf.gather_intersecting_ids(self.ma, self.mb)
            got_b, got_p = self.intersects_one(eye, T), self.all_pairs_raw(eye, T)
            # NOTE: the pair order is not deterministic (TBB): compare as sets.
            if got_b != want_b or self.pairs_from_raw(got_p) != self.pairs_from_raw(want_p):
                raise AssertionError("trueform direct path disagrees with the public API")

    def intersects_one(self, T_a, T_b) -> bool:
        fi = self._fi
        if fi is not None:
            self._wa.set_transformation(T_a)
            self._wb.set_transformation(T_b)
            return bool(fi(self._wa, self._wb))
        self.ma.transformation = T_a
        self.mb.transformation = T_b
        return bool(self.tf.intersects(self.ma, self.mb))

    def all_pairs_raw(self, T_a, T_b):
        fg = self._fg
        if fg is not None:
            self._wa.set_transformation(T_a)
            self._wb.set_transformation(T_b)
            return _ids(fg(self._wa, self._wb, "intersects", None))
        self.ma.transformation = T_a
        self.mb.transformation = T_b
        return _ids(self.tf.gather_intersecting_ids(self.ma, self.mb))

    def build(self, mesh):
        return self._mesh(mesh)


# --------------------------------------------------------------------------- collisionkit


class Collisionkit(Engine):
    """collisionkit's public API (imported lazily, so the peers run without it).

    ``threads`` is passed to the batched calls (None = numba's default thread count,
    1 = serial); per-call queries use the API's default.
    """

    name = "collisionkit"
    module = "collisionkit"
    batch_native = True
    note = "ck.Mesh + ck.intersects / ck.contacts(mode='all'); batches in one call"

    def __init__(self, threads: int | None = None, options: Any = None, label: str | None = None):
        self.threads = threads
        self.options = options
        if label:
            self.name = label

    def setup(self, mesh_a, mesh_b) -> None:
        import collisionkit as ck

        self.ck = ck
        self.a = ck.Mesh(np.asarray(mesh_a.vertices), np.asarray(mesh_a.faces))
        self.b = ck.Mesh(np.asarray(mesh_b.vertices), np.asarray(mesh_b.faces))
        if self.options is not None:
            self.a = self.a.with_options(self.options)
            self.b = self.b.with_options(self.options)
        # Trees are built lazily on the first query: build them here, untimed, like the peers.
        eye = np.eye(4)
        self.ck.intersects(self.a, self.b, eye, eye)

    def intersects_one(self, T_a, T_b) -> bool:
        return bool(self.ck.intersects(self.a, self.b, T_a, T_b))

    def all_pairs_raw(self, T_a, T_b):
        c = self.ck.contacts(self.a, self.b, T_a, T_b, mode="all")
        return _ids_columns(c.face_a, c.face_b)

    def intersects_batch(self, P_a, P_b) -> np.ndarray:
        return np.asarray(
            self.ck.intersects(self.a, self.b, _stack(P_a), _stack(P_b), threads=self.threads),
            dtype=bool,
        )

    def all_pairs_batch(self, P_a, P_b):
        return self.ck.contacts(self.a, self.b, _stack(P_a), _stack(P_b), mode="all", threads=self.threads)

    def batch_pairs_to_list(self, raw_batch, n: int) -> list[set[tuple[int, int]]]:
        pi = np.asarray(raw_batch.pose_index)
        fa = np.asarray(raw_batch.face_a)
        fb = np.asarray(raw_batch.face_b)
        out: list[set[tuple[int, int]]] = [set() for _ in range(n)]
        for p, i, j in zip(pi.tolist(), fa.tolist(), fb.tolist(), strict=True):
            out[p].add((i, j))
        return out

    def build(self, mesh):
        ck = self.ck
        m = ck.Mesh(np.asarray(mesh.vertices), np.asarray(mesh.faces))
        return ck.build_bvh(m, self.options)


def record_is_sorted(rec) -> bool:
    """collisionkit's contacts record must be sorted by (pose, face_a, face_b)."""
    keys = np.stack([np.asarray(rec.pose_index), np.asarray(rec.face_a), np.asarray(rec.face_b)], axis=1).astype(
        np.int64
    )
    if len(keys) < 2:
        return True
    d = np.diff(keys, axis=0)
    first_nonzero = np.where(d != 0, d, 0)
    # lexicographic non-decreasing: the first non-zero component of each row diff is > 0
    idx = np.argmax(first_nonzero != 0, axis=1)
    lead = first_nonzero[np.arange(len(d)), idx]
    return bool(np.all(lead >= 0))


PEERS: list[type[Engine]] = [CoalOBBRSS, CoalOBB, FCL, Trueform]


def available_peers(names: Iterable[str] | None = None) -> list[Engine]:
    """Instances of the peers that import, optionally filtered by name."""
    out = []
    for cls in PEERS:
        if names is not None and cls.name not in names:
            continue
        if cls.available():
            out.append(cls())
    return out


def versions() -> dict[str, str]:
    v = {cls.name.split("-")[0]: cls.version() for cls in PEERS}
    v["collisionkit"] = Collisionkit.version()
    return v
