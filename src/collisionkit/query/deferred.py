"""Lazy (Dask) inputs at the public API: the hand-off to ``collisionkit.distributed``.

Every batched query takes a ``dask.array.Array`` of poses (or configurations, or
frames) where it takes a numpy batch, and answers with the same record holding
Dask arrays (issue 17). The query layer cannot import the layer that builds the
task graphs (``collisionkit.distributed`` sits above the world and the robot), so
that module registers itself here when it is imported (``collisionkit/__init__.py``
imports it; it imports dask only when a lazy input arrives).

A value is lazy when it is a Dask collection (it has ``__dask_graph__``); numpy
arrays, lists and None never are, and the per-call paths never reach this check.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, cast

import numpy as np


class Runner(Protocol):
    """What ``collisionkit.distributed`` provides (``register``)."""

    def run(self, query: str, args: tuple, kwargs: dict) -> Any: ...

    def compute(self, record: Any, kwargs: dict) -> Any: ...

    def to_dataframe(self, record: Any, columns: Sequence[str]) -> Any: ...


_RUNNER: Runner | None = None


def register(runner: Runner) -> None:
    """Make ``runner`` answer every query given a lazy input."""
    global _RUNNER
    _RUNNER = runner


def is_lazy(*values: Any) -> bool:
    """Whether any of ``values`` is a Dask collection."""
    for v in values:
        if v is not None and type(v) is not np.ndarray and hasattr(v, "__dask_graph__"):
            return True
    return False


def _runner() -> Runner:
    if _RUNNER is None:  # pragma: no cover - collisionkit/__init__.py registers it
        raise RuntimeError("lazy inputs need collisionkit.distributed (import collisionkit)")
    return _RUNNER


def run(query: str, *args: Any, **kwargs: Any) -> Any:
    """``query(*args, **kwargs)`` with some lazy argument: the same record, with Dask arrays."""
    return _runner().run(query, args, kwargs)


def lazy_fields(record: Any) -> bool:
    """Whether a record holds any Dask array."""
    return is_lazy(*vars(record).values())


def compute(record: Any, **kwargs: Any) -> Any:
    """``record`` with every Dask field computed in one pass (``record`` itself when none is lazy)."""
    if not lazy_fields(record):
        return record
    return _runner().compute(record, kwargs)


def to_dataframe(record: Any, columns: Sequence[str]) -> Any:
    """The per-row ``columns`` of ``record`` as a pandas DataFrame, or a Dask DataFrame when lazy."""
    if lazy_fields(record):
        return _runner().to_dataframe(record, columns)
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas comes with the dask extra
        raise ImportError("to_dataframe needs pandas: pip install pandas (or collisionkit[dask])") from None
    return pd.DataFrame({c: np.asarray(getattr(record, c)) for c in columns})


class Computable:
    """Mixin of the result records: ``compute()`` (and ``lazy``) for records of lazy queries."""

    __slots__ = ()

    @property
    def lazy(self) -> bool:
        """True when the fields are Dask arrays (the query was given a Dask array)."""
        return lazy_fields(self)

    def compute(self, **kwargs: Any) -> Any:
        """The record with numpy fields: every Dask field computed in one pass over the data
        (itself when none is lazy). ``kwargs`` go to ``dask.compute`` (``scheduler=...``)."""
        return compute(self, **kwargs)

    def __repr__(self) -> str:
        """``Name(poses=N, lazy)`` for a lazy record (nothing is computed), else
        ``Name(poses=N, <_summary()>)``: the repr of the records that define ``_summary``
        and let it stand (``@dataclass(repr=False)``)."""
        return f"{type(self).__name__}({self._count()}, {'lazy' if self.lazy else self._summary()})"

    def _count(self) -> str:
        return f"poses={cast(Any, self).n_poses}"

    def _summary(self) -> str:
        raise NotImplementedError(f"{type(self).__name__} defines no repr summary")


__all__ = ["Computable", "compute", "is_lazy", "lazy_fields", "register", "run", "to_dataframe"]
