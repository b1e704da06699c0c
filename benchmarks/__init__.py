"""Benchmarks of collisionkit against its peers (Coal, python-fcl, trueform).

Run ``python -m benchmarks.pairs --help``; see ``benchmarks/README.md``.
"""
