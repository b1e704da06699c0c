"""The one rule for the form of a query's answer: per pose, a scalar or an (N,) array.

A query called with single (4, 4) poses answers with scalars; called with a batch
((N, 4, 4) on either side, even N = 1) with arrays over the batch. Result records
name their per-pose fields in ``PER_POSE``; every other field is per row ((M,)
arrays with ``pose_index``, the same in both forms) or about the whole call.

Handlers compute every per-pose field as a column over the batch ((N,) or
(N, k, ...)) and build the record here, so that all records take one form:

* ``record(cls, batched, **fields)`` builds a record from columns;
* ``in_form(rec, batched)`` turns a record in batch form (a query run internally
  on the stacked poses) into the caller's form;
* ``per_pose(column, batched)`` is the rule for one column (``intersects``,
  ``Robot.check``).

For a single pose, row 0 of a column becomes a Python scalar (``bool``, ``int``,
``float``, ``str``) when the row is one value, an array when the row is an array
((3,) points and directions, (4, 4) poses; the records make it read-only, as their
batch arrays), and a dict of columns the dict of its values' rows. ``None`` stays
``None``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import numpy as np

R = TypeVar("R")


def per_pose(column: Any, batched: bool) -> Any:
    """``column`` (over the batch) in the caller's form: itself for a batch, its row 0 for one pose."""
    if batched or column is None:
        return column
    if isinstance(column, dict):
        return {k: per_pose(v, False) for k, v in column.items()}
    if column.ndim == 1:
        return column.item(0)  # PERF: the Python scalar in one call (an object array's object)
    return column[0]  # a view; the records make their arrays read-only


def record(cls: type[R], batched: bool, /, **fields: Any) -> R:
    """A ``cls`` record from per-pose columns (and per-row fields), in the caller's form."""
    if not batched:
        for name in cls.PER_POSE:  # type: ignore[attr-defined]
            column = fields.get(name)
            if type(column) is np.ndarray:  # PER_POSE: per_pose inlined (the per-call paths)
                fields[name] = column.item(0) if column.ndim == 1 else column[0]
            elif column is not None:
                fields[name] = per_pose(column, False)
    return cls(**fields)


def in_form(rec: R, batched: bool) -> R:
    """``rec``, a record in batch form over one pose, in the caller's form."""
    if batched:
        return rec
    names = type(rec).PER_POSE  # type: ignore[attr-defined]
    return dataclasses.replace(rec, **{n: per_pose(getattr(rec, n), False) for n in names})  # type: ignore[type-var]


__all__ = ["in_form", "per_pose", "record"]
