"""The benchmarks' referee (``benchmarks/referee.py``) and the peers' settings (issue #20).

The referee must be able to fail: a wrong pair is caught, a pair within a documented
tolerance is explained, collisionkit's a-frame rounding is explained only when true. The
peers asked for ids only must report the same pairs as with contact geometry on.
"""

from __future__ import annotations

import numpy as np
import pytest
from benchmarks import referee as R

import collisionkit as ck


def _scene():
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    Pa = np.stack([np.eye(4), np.eye(4)])
    Pb = np.stack([ck.translation([0.9, 0.1, 0.05]), ck.translation([3.0, 0.0, 0.0])])
    c = ck.contacts(box, box, Pa[0], Pb[0])
    pairs0 = set(zip(c.face_a.tolist(), c.face_b.tolist(), strict=True))
    return box, Pa, Pb, pairs0


def test_referee_passes_right_answers_and_fails_wrong_ones():
    box, Pa, Pb, pairs0 = _scene()
    assert R.exact_world(box, box, Pa[0], Pb[0], sorted(pairs0)) == [True] * len(pairs0)
    good = {"collisionkit": [pairs0, set()], "fcl": [set(pairs0), set()]}
    out = R.referee_pairs(box, box, Pa, Pb, good, sample=50)
    assert {e: v["status"] for e, v in out["engines"].items()} == {"collisionkit": "exact", "fcl": "exact"}
    assert out["truth_colliding"] == [True, False]
    # fcl misses one true pair and adds a far one: both unexplained
    some = sorted(pairs0)[0]
    bad = {"collisionkit": [pairs0, set()], "fcl": [pairs0 - {some}, {(0, 0)}]}
    out = R.referee_pairs(box, box, Pa, Pb, bad, sample=50)
    assert out["engines"]["collisionkit"]["status"] == "exact"
    v = out["engines"]["fcl"]
    assert v["status"] == "FAIL" and v["wrong"] == 2 and len(v["unexplained"]) == 2
    assert R.verdict_text(v).startswith("FAIL")


def test_coal_tolerance_explains_near_pairs_only():
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    Pa = np.eye(4)[None]
    for gap, status in ((5e-7, "explained"), (1e-3, "FAIL")):
        Pb = ck.translation([1.0 + gap, 0.0, 0.0])[None]
        c = ck.contacts(box, box, Pa[0], ck.translation([1.0, 0.0, 0.0]))
        touching = set(zip(c.face_a.tolist(), c.face_b.tolist(), strict=True))
        out = R.referee_pairs(box, box, Pa, Pb, {"coal-obbrss": [touching], "collisionkit": [set()]}, sample=0)
        assert out["engines"]["collisionkit"]["status"] == "exact"
        assert out["engines"]["coal-obbrss"]["status"] == status, out["engines"]["coal-obbrss"]


def test_triangle_distance_and_boxes():
    P = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    assert R.triangle_distance(P, P + [0, 0, 2.0]) == pytest.approx(2.0)
    assert R.triangle_distance(P, np.array([[2.0, 2, 0], [3, 2, 0], [2, 3, 0]])) == pytest.approx(np.sqrt(4.5))
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    assert R.boxes_apart(box, box, np.eye(4), ck.translation([1.5, 0, 0]))
    assert not R.boxes_apart(box, box, np.eye(4), ck.translation([1.0, 0, 0]))


def test_peers_ids_only_equal_ids_with_contact_geometry():
    """Coal NO_REQUEST and FCL enable_contact=False (what benchmarks/peers.py times) report
    the same (b1, b2) pairs as with contact geometry on."""
    coal = pytest.importorskip("coal")
    fcl = pytest.importorskip("fcl")
    from benchmarks import peers as P

    a = ck.primitives.uv_sphere_mesh(0.6, 8, 12)
    b = ck.primitives.box_mesh([1.0, 0.5, 0.8])
    poses = ck.random_poses(20, radius=1.6, seed=4)
    engines = {cls.name: cls() for cls in (P.CoalOBBRSS, P.FCL)}
    for e in engines.values():
        e.setup(a, b)
    full_coal = coal.CollisionRequest(coal.CollisionRequestFlag.CONTACT, P.BIG)
    full_fcl = fcl.CollisionRequest(num_max_contacts=P.BIG, enable_contact=True)
    hits = 0
    for T in poses:
        c = ck.contacts(a, b, np.eye(4), T)
        ours = set(zip(c.face_a.tolist(), c.face_b.tolist(), strict=True))
        hits += bool(ours)
        for name, e in engines.items():
            ids = e.all_pairs_raw(np.eye(4), T)
            assert ids.dtype == np.int64 and ids.ndim == 2 and ids.shape[1] == 2
            if name == "fcl":
                res = fcl.CollisionResult()
                fcl.collide(e.oa, e.ob, full_fcl, res)
                full = {(x.b1, x.b2) for x in res.contacts}
            else:
                res = coal.CollisionResult()
                e.functor(e.ta, e.tb, full_coal, res)
                full = {(x.b1, x.b2) for x in res.getContacts()}
            assert e.pairs_from_raw(ids) == full
            assert full == ours  # generic poses: no near-touching pairs here
    assert 0 < hits < len(poses)


# --- the queries benchmark's references (distance, convex depth, values) --------------------


def test_brute_distance_is_exhaustive_and_exact_at_contact():
    """The pruned brute force equals the unpruned one (tests/distance_oracle.py) and the
    closed forms; 0 exactly when the meshes meet."""
    from tests.distance_oracle import brute_distance as unpruned

    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    d, scale = R.brute_distance(box, box, np.eye(4), ck.translation([1.25, 0.0, 0.0]))
    assert d == pytest.approx(0.25, abs=1e-12) and scale == pytest.approx(1.75)
    assert R.brute_distance(box, box, np.eye(4), ck.translation([1.0, 0.3, 0.0]))[0] == 0.0  # touching
    a = ck.primitives.uv_sphere_mesh(0.5, 8, 12)
    b = ck.primitives.torus_mesh(0.6, 0.15, 16, 8)
    for T in ck.random_poses(6, radius=1.2, seed=3):
        want = unpruned(a, b, np.eye(4), T)[0]
        assert R.brute_distance(a, b, np.eye(4), T)[0] == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_convex_depth_by_separating_axes():
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    d, _ = R.convex_depth(box, box, np.eye(4), ck.translation([0.8, 0.1, 0.05]))
    assert d == pytest.approx(0.2, abs=1e-12)
    assert R.convex_depth(box, box, np.eye(4), ck.translation([1.5, 0.0, 0.0]))[0] == 0.0
    # rotated 45 degrees about z, centred 1.2 away: the corner sinks 0.5 + sqrt(0.5) - 1.2
    T = ck.translation([1.2, 0.0, 0.0]) @ ck.rotation([0, 0, 1], np.pi / 4)
    assert R.convex_depth(box, box, np.eye(4), T)[0] == pytest.approx(0.5 + np.sqrt(0.5) - 1.2, abs=1e-12)


def test_referee_values_fails_a_wrong_zero_and_explains_a_tolerance():
    ref, scale = np.array([0.0, 0.5, 1e-3]), np.full(3, 2.0)
    assert R.referee_values(ref + [0, 1e-12, 0], ref, scale)["status"] == "agrees"
    wrong = R.referee_values(np.array([0.0, 0.0, 1e-3]), ref, scale)  # a wrong 0
    assert wrong["status"] == "FAIL" and wrong["unexplained"][0]["pose"] == 1
    assert R.referee_values(np.array([0.0, 0.5, 1e-3]), ref, scale)["status"] == "agrees"
    near = R.referee_values(ref + [5e-7, 0, 0], ref, scale, tolerance=1e-6)
    assert near["status"] == "explained" and near["explained"] == {"tolerance 1e-06": 1}
    assert R.referee_values(ref + [5e-7, 0, 0], ref, scale)["status"] == "FAIL"
    assert R.referee_values(np.array([np.nan, 0.5, 1e-3]), ref, scale)["status"] == "FAIL"
    assert R.verdict_text(near).startswith("ok: tolerance")


def test_figure_blocks_match_their_results_files():
    """README.md and docs/ quote benchmark figures only inside generated blocks, and each
    block is what ``python -m benchmarks.regenerate --docs-only`` writes from the results
    files now (a hand edit, or results rerun without rewriting the docs, fails here)."""
    from benchmarks import regenerate as G

    texts = {p: p.read_text(encoding="utf-8") for p in G.doc_paths()}
    names = {m.group(2) for t in texts.values() for m in G.BLOCK.finditer(t)}
    assert {
        "pairs",
        "pairs-overhead",
        "queries",
        "broadphase",
        "obb_tests",
        "seed000-table1",
        "seed000-table2",
        "seed000-table3",
        "seed000-node-capacity",
        "seed002-table1",
        "seed002-table2",
        "seed002-speedup",
        "seed002-contacts",
        "seed002-counters",
        "seed003-table2",
        "seed003-table3",
        "bv-kinds-bunny",
        "bv-kinds-kuka-shelf",
        "bv-builds-monastery-kuka",
        "bv-splits",
        "bv-coal",
        "dask-runs",
        "dask-bytes",
        "dask-overhead",
        "dask-projection",
        "hard-cases",
        "cold-start",
        "compile-times",
    } <= names
    assert names <= set(G.BLOCKS)
    changed, _stale = G.rewrite(list(texts), check=True)
    assert changed == [], f"rerun `python -m benchmarks.regenerate --docs-only`: {changed}"


def test_regenerate_rewrites_blocks_and_marks_stale_ones(tmp_path, monkeypatch):
    from benchmarks import regenerate as G

    doc = tmp_path / "doc.md"
    doc.write_text("intro\n<!-- bench:x -->\nold figures\n<!-- /bench:x -->\nend\n", encoding="utf-8")
    monkeypatch.setattr(G, "ROOT", tmp_path)
    now = G.current_hash()
    monkeypatch.setitem(G.BLOCKS, "x", lambda: f"fresh, kernel-source hash `{now}`")
    changed, stale = G.rewrite([doc], check=True)
    assert changed == ["doc.md:x"] and stale == [] and "old figures" in doc.read_text()  # --check writes nothing
    G.rewrite([doc])
    assert doc.read_text() == f"intro\n<!-- bench:x -->\nfresh, kernel-source hash `{now}`\n<!-- /bench:x -->\nend\n"
    assert G.rewrite([doc], check=True) == ([], [])
    monkeypatch.setitem(G.BLOCKS, "x", lambda: "measured at kernel-source hash `0123456789abcdef`")
    changed, stale = G.rewrite([doc])
    assert (
        stale == ["doc.md:x (0123456789abcdef)"] and "**STALE: measured at kernels 0123456789abcdef" in doc.read_text()
    )


def test_subsection_blocks_follow_the_results_files_format(tmp_path, monkeypatch):
    """The renderers over ``###`` subsections and the bounding-volume report read a results
    file of the writers' format, with or without its provenance line."""
    from benchmarks import regenerate as G

    monkeypatch.setattr(G, "RESULTS", tmp_path)
    table = "| engine | t |\n|---|---|\n| GJK | 1.0 |\n"
    body = f"## Table 3 analogue: x\n\n### cube-cube, 25% space\n\n{table}\n### cube-cube, 75% space\n\n{table}\n"
    (tmp_path / "seed003.md").write_text("# Seed 003\n\nMachine: vm.\n\n" + body, encoding="utf-8")
    old = G.BLOCKS["seed003-table3"]()
    assert "provenance not recorded" in old and G.block_hashes(old) == set()
    assert old.count("#### cube-cube") == 2 and old.count("| GJK | 1.0 |") == 2
    pv = "Provenance: commit abc, kernel-source hash 0123456789abcdef, date 2026-11-25, command `x`."
    (tmp_path / "seed003.md").write_text(f"# Seed 003\n\n{pv}\n\n" + body + "\n## Later\n\n" + table, encoding="utf-8")
    new = G.BLOCKS["seed003-table3"]()
    assert G.block_hashes(new) == {"0123456789abcdef"} and new.count("| GJK | 1.0 |") == 2
    row = "| aabb | sah | topdown | 0.5 | 2035 | 591 | 11 | 0.61 | 0.383 | 4.4 | 93 | 12 | 0 | 1.9 | 79.3 | 835 | 335 | 0 | 26.5 | 2.7 | 83.7 |"
    scene = (
        "## bunny\n\n" + pv + "\n\na = bunny.obj (902 triangles), b = bunny.obj (902); 200 poses.\n\n"
        "| bv | split | build |" + " x |" * 18 + "\n|---|\n" + row + "\n\nAgainst Coal:\n\n"
        "| engine | boolean us/pose |\n|---|---|\n| coal-obb 3.0.3 | 1234.5 |\n"
    )
    (tmp_path / "bv_report.md").write_text("# BV\n\n" + pv + "\n\n" + scene, encoding="utf-8")
    kinds = G.BLOCKS["bv-kinds-bunny"]()
    assert "| aabb | 2,035 | 0.383 | 93 / 12 | 4.4 | 835 / 335 / 0 | 2.7 | 83.7 |" in kinds
    assert "| bunny | 93 | - |" in G.BLOCKS["bv-splits"]()
    assert "| bunny | coal-obb 3.0.3 | 1,234 |" in G.BLOCKS["bv-coal"]()


def test_gap_profile_splits_a_call_and_checks_its_answers():
    """benchmarks/gap_profile.py: both queries split into their parts, answers checked first."""
    pytest.importorskip("fcl")
    import os

    from benchmarks import gap_profile as GP
    from benchmarks import scenes as S

    if not os.path.exists(os.path.join(S.DATA_DIR, "env.obj")):
        pytest.skip("../shared/data (env.obj) is not beside the checkout")
    s = GP.profile_scene("env-rob", 4, 1)
    for q in ("bool", "pairs"):
        r = s[q]
        assert r["peer"] in ("fcl", "coal-obbrss", "coal-obb", "trueform")
        parts = r["dispatch_us"] + r["traversal_us"] + r["leaves_us"]
        api = r["api_us"] if q == "bool" else r["api1_us"]  # what the wrapper is measured from
        assert abs(parts + r["wrapper_us"] - api) < 1e-6 * max(1.0, api)
        assert r["n_p"] >= 0 and r["leaves_us"] >= 0 and r["ratio"] > 0
    assert s["unit_costs_ns"]["c_p"] > 0
    text = GP.render({"provenance": "Provenance: test.", "machine": {}, "rounds": 1, "poses": 4, "scenes": [s]})
    assert text.count("| env-rob (") == 2
