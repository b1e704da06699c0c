"""``collisionkit.trimesh``: trimesh's CollisionManager interface, refereed exactly.

Every method and return form is compared with trimesh's own FCL-backed manager
(python-fcl, a test extra) on the same scenes. Where the answers differ on
purpose (module notes of ``collisionkit.trimesh``), the difference is refereed:
triangle contacts by the exact rational oracle (``tests.brute``), distances by
the brute-force triangle distance (``tests.distance_oracle``), containment by
trimesh's own ray test (``Trimesh.contains``), depths by the certified bracket
of ``collisionkit.penetration(method="bounds")``.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import trimesh
from tests.brute import brute_colliding, rational_pairs
from tests.distance_oracle import brute_distance

import collisionkit as ck
from collisionkit.trimesh import CollisionManager, ManagedObject, as_mesh, scene_to_collision

fcl = pytest.importorskip("fcl")
from trimesh import collision as tc  # noqa: E402 - after the python-fcl check

METHODS = [
    "add_object", "remove_object", "set_transform", "in_collision_single", "in_collision_internal",
    "in_collision_other", "min_distance_single", "min_distance_internal", "min_distance_other",
]  # fmt: skip


def T(x=0.0, y=0.0, z=0.0, R=None):
    m = trimesh.transformations.translation_matrix([x, y, z])
    if R is not None:
        m[:3, :3] = R
    return m


BOX = trimesh.creation.box([1, 1, 1])
SPHERE = trimesh.creation.icosphere(1, 0.5)
RING = trimesh.creation.annulus(0.5, 1.0, 1.0, sections=16)  # closed, not convex
TORUS = trimesh.creation.torus(1.0, 0.2, major_sections=16, minor_sections=8)


OTHER = object()  # stands for the other manager in a call list


def pair(build):
    """The same scene in trimesh's manager and in ours."""
    f, c = tc.CollisionManager(), CollisionManager()
    build(f)
    build(c)
    return f, c


def form(x):
    """The shape of a return value: types, tuple lengths, element types."""
    if isinstance(x, tuple):
        return ("tuple", *(form(e) for e in x))
    if isinstance(x, (list, set)):
        return (type(x).__name__, *sorted({form(e) for e in x}, key=str))
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, (float, np.floating)):
        return "float"
    return type(x).__name__


def rounded(t):
    return np.asarray(t, np.float32).astype(np.float64)


def test_signatures_match_trimesh():
    for name in METHODS:
        ours = inspect.signature(getattr(CollisionManager, name)).parameters
        theirs = inspect.signature(getattr(tc.CollisionManager, name)).parameters
        assert [(p.name, p.default, p.kind) for p in ours.values()] == [
            (p.name, p.default, p.kind) for p in theirs.values()
        ], name
    ours = inspect.signature(scene_to_collision).parameters
    assert list(ours) == list(inspect.signature(tc.scene_to_collision).parameters)


def test_return_forms_match_trimesh():
    def build(m):
        m.add_object("a", BOX)
        m.add_object("b", BOX, T(0.8, 0.1))
        m.add_object("s", SPHERE, T(0, 4))

    f, c = pair(build)
    g, d = pair(lambda m: m.add_object("x", SPHERE, T(0.3, 0.4, 0.9)))
    probe = T(0.2, 0.6, 0.1)
    calls = []
    for rn in (False, True):
        for rd in (False, True):
            calls += [
                ("in_collision_internal", (), {"return_names": rn, "return_data": rd}),
                ("in_collision_single", (BOX, probe), {"return_names": rn, "return_data": rd}),
                ("in_collision_other", (OTHER,), {"return_names": rn, "return_data": rd}),
                ("min_distance_internal", (), {"return_names": rn, "return_data": rd}),
                ("min_distance_internal", ("s",), {"return_names": rn, "return_data": rd}),
                ("min_distance_single", (BOX, T(0, 6)), {"return_name": rn, "return_data": rd}),
                ("min_distance_other", (OTHER,), {"return_names": rn, "return_data": rd}),
            ]
    for name, args, kw in calls:
        want = getattr(f, name)(*[g if a is OTHER else a for a in args], **kw)
        got = getattr(c, name)(*[d if a is OTHER else a for a in args], **kw)
        assert form(got) == form(want), (name, kw)
        w0, g0 = (want[0], got[0]) if isinstance(want, tuple) else (want, got)
        if isinstance(w0, bool):
            assert g0 is w0, (name, kw)
        else:
            assert g0 == pytest.approx(w0, abs=1e-6), (name, kw)
        if isinstance(want, tuple) and (kw.get("return_names") or kw.get("return_name")):
            assert got[1] == want[1], (name, kw)
    # the records are trimesh's own classes, read through their own accessors
    _, contacts = c.in_collision_internal(return_data=True)
    assert contacts and all(type(x) is tc.ContactData for x in contacts)
    for x in contacts:
        assert x.names == {"a", "b"}
        assert 0 <= x.index("a") < 12 and 0 <= x.index("b") < 12
        assert x.point.shape == (3,) and x.normal.shape == (3,)
        assert x.depth == pytest.approx(0.2, abs=1e-6)  # two cubes: the pair's exact depth
    dist, data = c.min_distance_single(BOX, T(0, 6), return_data=True)
    assert type(data) is tc.DistanceData and data.names == {"s", "__external"}
    assert data.distance == dist == pytest.approx(1.0, rel=1e-12)  # the sphere's pole vertex to the cube's face
    assert np.linalg.norm(data.point("s") - data.point("__external")) == pytest.approx(dist, rel=1e-12)


def random_convex_scene(seed, n=12, spread=3.0):
    """Cubes and spheres at random poses, no pair within 1e-3 of touching (FCL's tolerances)."""
    rng = np.random.default_rng(seed)
    shapes = [BOX, SPHERE]
    while True:
        objs = []
        for k in range(n):
            R = trimesh.transformations.random_rotation_matrix(rng.random(3))[:3, :3]
            objs.append((f"o{k}", shapes[k % 2], rounded(T(*rng.uniform(-spread, spread, 3), R=R))))
        ok = True
        for i in range(n):
            for j in range(i + 1, n):
                a, b = as_mesh(objs[i][1]), as_mesh(objs[j][1])
                d = float(ck.distance(a, b, objs[i][2], objs[j][2]).distance)
                if 0.0 < d < 1e-3 or (d == 0.0 and float(ck.penetration(a, b, objs[i][2], objs[j][2]).depth) < 1e-3):
                    ok = False
        if ok:
            return objs
        seed += 1000
        rng = np.random.default_rng(seed)


def signed_ref(a, Ta, b, Tb) -> float:
    """Signed distance of one pair by the oracles: minus the exact convex depth when the
    solids overlap (surfaces meet by the exact test, or one holds the other), else the
    brute-force triangle distance."""
    cls = ck.classify(a, b, Ta, Tb).labels
    if cls in ("penetrating", "contained"):
        return -float(ck.penetration(a, b, Ta, Tb, method="convex").depth)
    if cls == "touching":
        return 0.0
    return brute_distance(a, b, Ta, Tb)[0]


def check_distance(got, want, pairs):
    """Our (distance, names) against FCL's, refereed where they differ.

    ``pairs`` maps a names tuple to its signed distance by the oracles. Ours must be
    the least over all pairs (up to float rounding). FCL's value must be the oracle's
    for the pair FCL names (its broad phase stops at the first overlapping pair, and
    its GJK on two fcl.Convex can stop short of the minimum: then FCL's is larger).
    """
    best = min(pairs.values())
    assert got[0] == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert pairs[got[1]] == pytest.approx(got[0], rel=1e-9, abs=1e-12)
    if want[0] == pytest.approx(got[0], abs=1e-5):
        return "equal"
    assert want[0] > got[0]
    fcl_pair = pairs.get(want[1], pairs.get(tuple(reversed(want[1]))))
    assert want[0] == pytest.approx(fcl_pair, abs=1e-5) or want[0] > fcl_pair
    return "refereed"


@pytest.mark.parametrize("seed", [1, 2])
def test_convex_scene_equals_fcl(seed, require_overlap=True):
    objs = random_convex_scene(seed)

    def build(m):
        for name, mesh, pose in objs:
            m.add_object(name, mesh, pose)

    f, c = pair(build)
    hit, names = c.in_collision_internal(return_names=True)
    assert (hit, names) == f.in_collision_internal(return_names=True)
    assert names or not require_overlap  # the scene has overlaps
    objs = [(n, m, c._objs[n].transform) for n, m, _ in objs]  # the oracles at the poses stored
    ref = {}
    for i, (na, ma, Ta) in enumerate(objs):
        for nb, mb, Tb in objs[i + 1 :]:
            ref[tuple(sorted((na, nb)))] = signed_ref(as_mesh(ma), Ta, as_mesh(mb), Tb)
    assert names == {p for p, v in ref.items() if v <= 0}
    check_distance(c.min_distance_internal(return_names=True), f.min_distance_internal(return_names=True), ref)
    for name, _, _ in objs[:4]:
        mine = {p: v for p, v in ref.items() if name in p}
        check_distance(c.min_distance_internal(name, return_names=True), f.min_distance_internal(name, return_names=True), mine)
    g, h = pair(lambda m: m.add_object("far", SPHERE, T(10, 0, 0)))
    other = {(n, "far"): signed_ref(as_mesh(m), P, as_mesh(SPHERE), T(10, 0, 0)) for n, m, P in objs}
    check_distance(c.min_distance_other(h, return_names=True), f.min_distance_other(g, return_names=True), other)
    assert c.in_collision_other(h, return_names=True) == f.in_collision_other(g, return_names=True) == (False, set())
    # a probe moved through the scene: same names, distances equal or refereed at every stop
    for x in np.linspace(-3, 3, 7):
        probe = T(x, 0.3, -0.2)
        assert c.in_collision_single(BOX, probe, return_names=True) == f.in_collision_single(BOX, probe, return_names=True)
        got, want = c.min_distance_single(SPHERE, probe, return_name=True), f.min_distance_single(SPHERE, probe, return_name=True)
        single = {n: signed_ref(as_mesh(m), P, as_mesh(SPHERE), probe) for n, m, P in objs}
        if min(abs(v) for v in single.values()) > 1e-3:
            check_distance(got, want, single)


def test_fcl_convex_distance_error_refereed():
    # two icospheres 2 apart (pole vertices 1.0 apart): FCL's GJK on two fcl.Convex stops at 1.26
    f, c = pair(lambda m: m.add_object("s", SPHERE, T(0, 4)))
    want, got = f.min_distance_single(SPHERE, T(0, 6)), c.min_distance_single(SPHERE, T(0, 6))
    ref = brute_distance(as_mesh(SPHERE), as_mesh(SPHERE), T(0, 4), T(0, 6))[0]
    assert got == ref == pytest.approx(1.0, abs=1e-15)
    assert want > ref + 0.2  # FCL's answer, refereed wrong by the brute-force oracle


def test_nonconvex_distances_equal_fcl_and_brute_force():
    # a chain of interlocked tori: boxes overlap, surfaces never meet
    Rx = trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0])[:3, :3]

    def build(m):
        for k in range(5):
            m.add_object(f"link{k}", TORUS, rounded(T(1.55 * k, 0, 0, R=Rx if k % 2 else None)))

    f, c = pair(build)
    assert c.in_collision_internal(return_names=True) == f.in_collision_internal(return_names=True) == (False, set())
    d, nn, data = c.min_distance_internal(return_names=True, return_data=True)
    fd, fnn = f.min_distance_internal(return_names=True)
    assert d == pytest.approx(fd, rel=1e-9) and nn == fnn
    # the brute-force oracle on the pair reported, at the stored (float32-rounded) poses
    a, b = nn
    oa, ob = c.world.shape(c._key[a]), c.world.shape(c._key[b])
    ref, fa, fb = brute_distance(oa, ob, c._objs[a].transform, c._objs[b].transform)
    assert d == pytest.approx(ref, rel=1e-12)
    assert data.index(a) >= 0 and np.linalg.norm(data.point(a) - data.point(b)) == pytest.approx(d, rel=1e-12)
    for k in range(5):
        got, want = c.min_distance_internal(f"link{k}"), f.min_distance_internal(f"link{k}")
        assert got == pytest.approx(want, rel=1e-9)


def test_exact_touching_is_a_collision_refereed():
    # face to face at x = 1: FCL's GJK (two fcl.Convex) calls it no collision
    f, c = pair(lambda m: (m.add_object("a", BOX), m.add_object("b", BOX, T(1.0))))
    assert c.in_collision_internal(return_names=True) == (True, {("a", "b")})
    assert c.min_distance_internal() == 0.0
    assert f.in_collision_internal() is False
    a, b = c._objs["a"], c._objs["b"]
    assert len(rational_pairs(a.mesh, b.mesh, a.transform, b.transform)) > 0  # exact: they share points
    # 2**-30 apart: no collision, and the distance is the brute-force one
    gap = 2.0**-30
    c.set_transform("b", T(1.0 + gap))
    assert c.in_collision_internal() is False
    b = c._objs["b"]
    assert len(rational_pairs(a.mesh, b.mesh, a.transform, b.transform)) == 0
    assert c.min_distance_internal() == pytest.approx(brute_distance(a.mesh, b.mesh, a.transform, b.transform)[0], rel=1e-9)
    assert c.min_distance_internal() == pytest.approx(gap, rel=1e-6)


@pytest.mark.parametrize("shape", ["ring", "box"])
def test_near_touching_edge_on_face_refereed(shape):
    # a bar turned 45 degrees about x, its lowest edge (0.4 long) at `gap` above the top face
    # of a ring's wall (FCL: a BVH) or of a cube (FCL: two fcl.Convex)
    mesh, x = {"ring": (RING, 0.75), "box": (BOX, 0.0)}[shape]
    bar = trimesh.creation.box([0.4, 1, 1])
    R = trimesh.transformations.rotation_matrix(np.pi / 4, [1, 0, 0])[:3, :3]
    f, c = pair(lambda m: m.add_object("m", mesh))
    a = c._objs["m"].mesh
    for gap in (1e-6, 1e-9, 1e-12, 0.0, -1e-9):
        P = T(x, 0, 0.5 + np.sqrt(0.5) + gap, R=R)
        hit = c.in_collision_single(bar, P)
        assert hit == bool(brute_colliding(a, as_mesh(bar), np.eye(4), P)[0]), gap  # the exact oracle
        d = c.min_distance_single(bar, P)
        if not hit:
            assert d == pytest.approx(brute_distance(a, as_mesh(bar), np.eye(4), P)[0], rel=1e-9, abs=1e-15)
            assert f.in_collision_single(bar, P) is False and f.min_distance_single(bar, P) == pytest.approx(d, rel=1e-3)
        elif gap == 0.0:
            assert d == 0.0  # touching: no overlap
            assert f.in_collision_single(bar, P) is (shape == "ring")  # FCL's GJK misses the touching convex pair
        else:
            p = ck.penetration(a, as_mesh(bar), np.eye(4), P, method="bounds", refine=True)
            # (the default's lower end lies below the true 1e-9 by its rounding allowance, 2**-40
            # of the coordinates)
            assert p.depth_lower <= -d <= p.depth_upper and -d == pytest.approx(-gap, rel=1e-3, abs=1e-11)
            fd = f.min_distance_single(bar, P)
            if shape == "box":
                assert fd == pytest.approx(d, rel=1e-3)
            else:  # FCL's depth for a BVH and an fcl.Convex (7.1e-10 here): below the certified lower bound
                assert -fd < p.depth_lower


def test_mesh_inside_a_closed_mesh_collides_refereed():
    # a small sphere inside the ring's wall: FCL (fcl.Convex vs a BVH) sees no collision
    small = trimesh.creation.icosphere(1, 0.1)
    where = T(0.75, 0, 0)
    f, c = pair(lambda m: m.add_object("ring", RING))
    assert f.in_collision_single(small, where) is False and f.min_distance_single(small, where) > 0
    hit, names = c.in_collision_single(small, where, return_names=True)
    assert (hit, names) == (True, {"ring"})
    # referee: the surfaces are apart (exact), and every vertex is inside by trimesh's ray test
    ring, sph = c._objs["ring"].mesh, as_mesh(small)
    assert not brute_colliding(ring, sph, np.eye(4), where)[0]
    assert RING.contains(small.vertices + [0.75, 0, 0]).all()
    d, data = c.min_distance_single(small, where, return_data=True)
    p = ck.penetration(ring, sph, np.eye(4), where, method="bounds", refine=True)
    q = ck.penetration(ring, sph, np.eye(4), where, method="bounds")  # the default: its lower end
    assert d == -q.depth_lower and -d <= p.depth_lower <= p.depth_upper and d < -0.2
    # one contact, faces -1 (no triangle pair meets)
    _, contacts = c.in_collision_single(small, where, return_data=True)
    assert len(contacts) == 1 and contacts[0].index("ring") == -1 and contacts[0].depth == -d
    # and inside a manager: the same pair internally
    c.add_object("ball", small, where)
    assert c.in_collision_internal(return_names=True) == (True, {("ball", "ring")})
    assert c.min_distance_internal("ball") == d


def test_nonconvex_signed_distance_refereed():
    # the ring sinks 1/64 into a plate: exact overlap, true depth 1/64 (lift the ring)
    plate = trimesh.creation.box([4, 4, 0.5])
    sink = 1.0 / 64
    f, c = pair(lambda m: (m.add_object("plate", plate), m.add_object("ring", RING, T(0, 0, 0.75 - sink))))
    assert c.in_collision_internal() is True and f.in_collision_internal() is True
    d = c.min_distance_internal()
    pl, ring = c._objs["plate"], c._objs["ring"]
    assert ck.classify(pl.mesh, ring.mesh, pl.transform, ring.transform).labels == "penetrating"
    p = ck.penetration(pl.mesh, ring.mesh, pl.transform, ring.transform, method="bounds")
    assert p.depth_lower <= -d <= p.depth_upper
    assert -d == pytest.approx(sink, rel=1e-6)
    # depth="bounds": the unrefined bracket's upper end, still a certified upper bound
    loose = CollisionManager(depth="bounds")
    loose.add_object("plate", plate)
    loose.add_object("ring", RING, T(0, 0, 0.75 - sink))
    q = ck.penetration(pl.mesh, ring.mesh, pl.transform, ring.transform, method="bounds")
    assert loose.min_distance_internal() == -q.depth_upper and q.depth_lower <= sink <= q.depth_upper
    with pytest.raises(ValueError, match="depth must be one of"):
        CollisionManager(depth="exact")
    # FCL (an fcl.Convex plate, a BVH ring) finds the same depth: inside our certified bracket
    assert p.depth_lower - 1e-9 <= -f.min_distance_internal() <= p.depth_upper + 1e-9
    # two rings (two BVHs): FCL gives no depth, 0.0; ours (default) is the refined bracket's
    # lower end, depth="refined" its upper end
    g, h = pair(lambda m: (m.add_object("r0", RING), m.add_object("r1", RING, T(0.75))))
    assert g.min_distance_internal() == 0.0
    d = h.min_distance_internal()
    r0, r1 = h._objs["r0"], h._objs["r1"]
    p = ck.penetration(r0.mesh, r1.mesh, r0.transform, r1.transform, method="bounds", refine=True)
    q = ck.penetration(r0.mesh, r1.mesh, r0.transform, r1.transform, method="bounds")
    assert q.depth_lower == 0.0 and d == -p.depth_lower and -d > 0.19  # no vertex inside: centroids are
    tight = CollisionManager(depth="refined")
    tight.add_object("r0", RING)
    tight.add_object("r1", RING, T(0.75))
    assert tight.min_distance_internal() == -p.depth_upper <= d


def pegboard(n=4):
    """An assembly: a plate, n x n rings resting 1/64 into it, a peg through each ring's hole
    (through the plate, never touching the ring), and a row of n balls on the plate, each
    1/16 into it and 1/8 into the next."""
    plate = trimesh.creation.box([2.5 * n, 2.5 * n + 4, 0.5])
    peg = trimesh.creation.box([0.2, 0.2, 2.0])
    parts = [("plate", plate, np.eye(4))]
    for i in range(n):
        for j in range(n):
            x, y = 2.5 * (i - (n - 1) / 2), 2.5 * (j - (n - 1) / 2)
            parts.append((f"ring{i}{j}", RING, T(x, y, 0.75 - 1 / 64)))
            parts.append((f"peg{i}{j}", peg, T(x, y, 0.5)))
    for k in range(n):
        parts.append((f"ball{k}", SPHERE, T(0.875 * k, 1.25 * n + 1, 0.75 - 1 / 16)))
    return parts


def test_assembly_in_contact_equals_fcl_or_refereed():
    parts = pegboard()

    def build(m):
        for name, mesh, pose in parts:
            m.add_object(name, mesh, pose)

    f, c = pair(build)
    hit, names = c.in_collision_internal(return_names=True)
    fhit, fnames = f.in_collision_internal(return_names=True)
    assert hit and fhit
    # every pair by the exact oracle (surfaces; no part lies inside another here)
    objs = c._objs
    exact = set()
    for i, (a, _, _) in enumerate(parts):
        for b, _, _ in parts[i + 1 :]:
            oa, ob = objs[a], objs[b]
            if brute_colliding(oa.mesh, ob.mesh, oa.transform, ob.transform)[0]:
                exact.add(tuple(sorted((a, b))))
    assert names == exact == fnames  # every contact here overlaps: FCL finds them all
    assert len(names) == 16 * 2 + 3 + 4  # ring-plate, peg-plate, ball-ball, ball-plate
    # signed distance: the deepest pair (a peg 0.75 through the plate: exact convex depth),
    # where FCL returns the first overlapping pair its broad phase meets
    d, nn = c.min_distance_internal(return_names=True)
    assert d == pytest.approx(-0.75, abs=1e-12) and nn[0].startswith("peg") and nn[1] == "plate"
    fd, fnn = f.min_distance_internal(return_names=True)
    assert fd >= d - 1e-6 and fnn in names
    # per part: a ring's depth (in the certified bracket), equal to FCL's
    ring = c.min_distance_internal("ring00")
    pl, r = objs["plate"], objs["ring00"]
    p = ck.penetration(pl.mesh, r.mesh, pl.transform, r.transform, method="bounds")
    assert p.depth_lower <= -ring <= p.depth_upper and ring == pytest.approx(-1 / 64, rel=1e-6)
    assert f.min_distance_internal("ring00") == pytest.approx(ring, rel=1e-6)
    # a ball: its deepest neighbour, exact and equal to FCL's EPA (both convex)
    got, want = c.min_distance_internal("ball0", return_names=True), f.min_distance_internal("ball0", return_names=True)
    b0, b1 = objs["ball0"], objs["ball1"]
    exact = float(ck.penetration(b0.mesh, b1.mesh, b0.transform, b1.transform, method="convex").depth)
    assert got[1] == ("ball0", "ball1") and got[0] == -exact and 0.1 < exact <= 0.125
    assert want[0] >= got[0] - 1e-6
    if want[1] == got[1]:
        assert want[0] == pytest.approx(got[0], abs=1e-6)


def test_touching_assembly_refereed():
    # 3 x 3 x 2 unit cubes on the integer grid: faces, edges and corners touch exactly
    cells = [(x, y, z) for x in range(3) for y in range(3) for z in range(2)]
    f, c = pair(lambda m: [m.add_object(f"c{x}{y}{z}", BOX, T(x, y, z)) for x, y, z in cells])
    _, names = c.in_collision_internal(return_names=True)
    want = {
        tuple(sorted((f"c{x}{y}{z}", f"c{u}{v}{w}")))
        for (x, y, z) in cells
        for (u, v, w) in cells
        if (x, y, z) != (u, v, w) and max(abs(x - u), abs(y - v), abs(z - w)) == 1
    }
    assert names == want  # every face, edge and corner neighbour
    a, b = c._objs["c000"], c._objs["c111"]  # a corner contact, by the rational oracle
    assert len(rational_pairs(a.mesh, b.mesh, a.transform, b.transform)) > 0
    _, fnames = f.in_collision_internal(return_names=True)
    assert fnames < names  # FCL's GJK misses touching convex pairs
    assert c.min_distance_internal() == 0.0  # touching, no overlap: classify says so
    assert ck.classify(a.mesh, b.mesh, a.transform, b.transform).labels == "touching"


def test_scene_to_collision_shares_trees_and_equals_trimesh():
    scene = trimesh.Scene()
    scene.add_geometry(RING, node_name="r0", geom_name="ring")
    scene.add_geometry(RING, node_name="r1", geom_name="ring", transform=T(1.2, 0, 0.2))
    scene.add_geometry(RING, node_name="r2", geom_name="ring", transform=T(4.0, 0, 0))
    scene.add_geometry(BOX, node_name="b0", geom_name="box", transform=T(0, 3, 0))
    manager, objects = scene_to_collision(scene)
    fm, fobjects = tc.scene_to_collision(scene)
    assert set(objects) == set(fobjects) == {"r0", "r1", "r2", "b0"}
    assert all(isinstance(o, ManagedObject) for o in objects.values())
    assert objects["r0"].mesh is objects["r1"].mesh is objects["r2"].mesh
    assert ck.bvh_of(objects["r0"].mesh) is ck.bvh_of(objects["r2"].mesh)
    assert manager.in_collision_internal(return_names=True) == fm.in_collision_internal(return_names=True)
    got, want = manager.min_distance_internal("b0", return_names=True), fm.min_distance_internal("b0", return_names=True)
    assert got[0] == pytest.approx(want[0], rel=1e-9) and got[1] == want[1]
    with pytest.raises(TypeError, match="trimesh.Scene"):
        scene_to_collision(BOX)


def test_errors_and_bookkeeping():
    c = CollisionManager()
    f = tc.CollisionManager()
    for m in (c, f):
        for method, args in (("remove_object", ()), ("set_transform", (np.eye(4),)), ("min_distance_internal", ())):
            with pytest.raises(ValueError, match="nope not in collision manager"):
                getattr(m, method)("nope", *args)
    with pytest.raises(ValueError, match=r"\(4, 4\)"):
        c.add_object("a", BOX, np.eye(3))
    with pytest.raises(ValueError, match=r"\(4, 4\)"):
        c.in_collision_single(BOX, np.eye(4)[:3])
    with pytest.raises(ValueError):
        c.add_object("a", BOX, np.diag([2.0, 1, 1, 1]))  # not rigid (InvalidPoseError)
    with pytest.raises(TypeError, match="trimesh.Trimesh"):
        c.add_object("a", "box.stl")
    assert len(c) == 0
    # empty: no collision, no pair to measure
    assert c.in_collision_internal(return_names=True, return_data=True) == (False, set(), [])
    assert c.min_distance_internal(return_names=True, return_data=True) == (math.inf, None, None)
    assert c.min_distance_single(BOX, return_name=True, return_data=True) == (math.inf, None, None)
    # add_object rounds to float32 (like trimesh), set_transform keeps float64 (like trimesh 5.2)
    pose = T(0.1, 0.2, 1 / 3)
    obj = c.add_object("a", BOX, pose)
    assert np.array_equal(obj.transform, rounded(pose)) and not np.array_equal(obj.transform, pose)
    assert np.array_equal(c.world.pose(c._key["a"]), rounded(pose))
    c.set_transform("a", pose)
    assert np.array_equal(c.world.pose(c._key["a"]), pose)
    # a rotated pose: rounded to float32, then its rotation made orthogonal again
    turned = T(0.1, 0.2, 0.3, R=trimesh.transformations.rotation_matrix(0.7, [1, 2, 3])[:3, :3])
    R = c.add_object("r", BOX, turned).transform[:3, :3]
    assert np.abs(R.T @ R - np.eye(3)).max() < 1e-15 < np.abs(rounded(turned)[:3, :3].T @ rounded(turned)[:3, :3] - np.eye(3)).max()
    assert np.abs(R - rounded(turned)[:3, :3]).max() < 1e-7
    c.remove_object("r")
    with pytest.raises(ValueError, match=r"\(4, 4\)"):
        c.set_transform("a", np.eye(4).ravel())
    # replacing a name keeps one object, at the new pose and mesh
    c.add_object("b", BOX, T(0.5))
    assert c.in_collision_internal() is True
    c.add_object("b", SPHERE, T(5.0))
    assert len(c) == 2 and c.in_collision_internal() is False
    assert c.min_distance_internal() == pytest.approx(5.0 - 0.5 - 0.5 - 0.1, rel=1e-6)  # a sits at x = 0.1
    c.remove_object("b")
    assert len(c) == 1 and "b" not in c and c.min_distance_internal() == math.inf
    # non-str names work (trimesh takes any hashable)
    c.add_object(7, BOX, T(0.5))
    assert c.in_collision_internal(return_names=True) == (True, {("a", 7)})  # unlike types: sorted by repr


def test_batches_equal_single_calls():
    parts = pegboard(2)
    c = CollisionManager()
    for name, mesh, pose in parts:
        c.add_object(name, mesh, pose)
    rng = np.random.default_rng(3)
    poses = []
    for _ in range(30):
        R = trimesh.transformations.random_rotation_matrix(rng.random(3))[:3, :3]
        poses.append(T(*rng.uniform([-3, -3, -0.5], [3, 3, 2.5]), R=R))
    poses.append(T(-1.25 + 0.75, -1.25, 0.5))  # inside a ring's wall (contained)
    poses = np.array(poses)
    small = trimesh.creation.icosphere(1, 0.1)
    hit, names = c.in_collision_many(small, poses, return_names=True)
    dist, closest = c.min_distance_many(small, poses, return_names=True)
    assert hit.shape == dist.shape == (31,) and hit.dtype == bool
    for k, P in enumerate(poses):
        assert (bool(hit[k]), names[k]) == c.in_collision_single(small, P, return_names=True)
        d, name = c.min_distance_single(small, P, return_name=True)
        assert dist[k] == d and (closest[k] == name or d == dist[k])
    assert hit[-1] and dist[-1] < 0 and hit.sum() < 31 and (~hit).sum() > 5
    assert c.in_collision_many(small, poses[:0]).shape == (0,)
    with pytest.raises(ValueError, match=r"\(N, 4, 4\)"):
        c.in_collision_many(small, np.eye(4))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3, 13))
def test_convex_scenes_equal_fcl_sweep(seed):
    test_convex_scene_equals_fcl(seed, require_overlap=False)


@pytest.mark.parametrize(("depth", "scale"), [("lower", 1.0), ("bounds", 1.0), ("refined", 1.0), ("lower", 1e-6), ("lower", 1e6)])
def test_deepest_of_many_instances_batches_equal_one_call_a_pair(depth, scale, monkeypatch):
    """Many instances of one convex mesh through another (pegs through a plate, each turned
    about the plate's normal, at unit, tiny and huge scale, so every depth is a hair below its box bound and the search
    measures them all): ``_deepest`` measures runs of same-mesh pairs in batched calls; every
    signed depth it keeps equals ``_depth`` of the pair alone, bit for bit, and the answer
    is the deepest pair of that one-pair-a-call reference (first of equal depths in the
    search's order)."""
    from collisionkit.trimesh import _depth, _signed

    rng = np.random.default_rng(5)
    plate = trimesh.creation.box(np.array([12.0, 12.0, 0.5]) * scale)
    peg = trimesh.creation.box(np.array([0.2, 0.3, 2.0]) * scale)
    c = CollisionManager(depth=depth)
    c.add_object("plate", plate)
    for k in range(40):
        R = trimesh.transformations.rotation_matrix(rng.uniform(-3.0, 3.0), [0.0, 0.0, 1.0])[:3, :3]
        c.add_object(f"peg{k}", peg, T(*(rng.uniform(-5.0, 5.0, 2) * scale), 0.5 * scale, R=R))
    import collisionkit.trimesh as ckt

    calls = []
    monkeypatch.setattr(ckt, "penetration", lambda *a, **k: calls.append(1) or ck.penetration(*a, **k))
    s, names = c.min_distance_internal(return_names=True)
    monkeypatch.undo()
    memo = c._depths
    plate_pairs = [key for key in memo if "plate" in (key[0].name, key[1].name)]
    assert len(plate_pairs) > 8 and len(calls) < len(plate_pairs) / 3  # runs of pairs, one call each
    for a, b in memo:
        assert memo[(a, b)] == _signed(_depth(a.mesh, b.mesh, a.transform, b.transform, depth))
    want = min(memo.values())
    assert s == want < 0
    assert memo[tuple(c._objs[n] for n in sorted(names, key=lambda n: n != "plate"))] == want or memo[
        tuple(c._objs[n] for n in sorted(names, key=lambda n: n == "plate"))
    ] == want
