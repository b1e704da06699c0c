"""Two meshes, one pose each: do they touch, and where?

Run: python examples/pair_check.py
"""

import collisionkit as ck

ring = ck.primitives.torus_mesh(1.0, 0.2)  # or ck.load_mesh("part.stl")
plate = ck.primitives.box_mesh([2.0, 2.0, 0.1])

lifted = ck.translation([0.0, 0.0, 0.3])  # world-from-plate pose
print("identity:", ck.intersects(ring, plate))  # True: the plate cuts the ring
print("lifted:  ", ck.intersects(ring, plate, None, lifted))  # False: 0.3 > 0.2 + 0.05

c = ck.contacts(ring, plate)  # every intersecting triangle pair
print(f"{len(c)} triangle pairs, first: ring face {c.face_a[0]} / plate face {c.face_b[0]}")
assert ck.intersects(ring, plate) and not ck.intersects(ring, plate, None, lifted)
