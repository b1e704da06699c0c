"""Shape-pair handlers: how a query answers pairs that are not two meshes.

The built-in path is mesh-mesh (``query.engine``). A module that adds a shape
kind (convex polyhedra, primitives) registers a handler per pair of types::

    dispatch.register(Convex, Convex, gjk_handler)   # also serves (Convex, Convex) subclasses

A handler takes a ``query.engine.BatchRequest`` (poses validated and
broadcast) and returns a ``query.engine.BatchResult``. Lookup is by
``isinstance`` in registration order; the first match wins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_HANDLERS: list[tuple[type, type, Callable[[Any], Any]]] = []


def register(type_a: type, type_b: type, handler: Callable[[Any], Any]) -> None:
    """Answer queries on (type_a, type_b) pairs with ``handler(request) -> BatchResult``."""
    _HANDLERS.append((type_a, type_b, handler))


def handler_for(a: Any, b: Any) -> Callable[[Any], Any] | None:
    """The handler registered for the types of ``a`` and ``b``; None if there is none."""
    for ta, tb, handler in _HANDLERS:
        if isinstance(a, ta) and isinstance(b, tb):
            return handler
    return None


#: Per-call boolean fast paths, keyed by the exact (type(a), type(b)): a
#: callable ``(a, b, Ta, Tb) -> int`` on two validated-shape (4, 4) float64
#: poses, returning 1 / 0, or a negative pose code as
#: ``kernels.traverse.descent.intersect_one`` does. Only the default strategy uses them.
SINGLE_BOOL: dict[tuple[type, type], Callable[[Any, Any, Any, Any], int]] = {}


def register_single_bool(type_a: type, type_b: type, fn: Callable[[Any, Any, Any, Any], int]) -> None:
    """Answer ``intersects(a, b, Ta, Tb)`` on one pose pair of exactly these types with ``fn``."""
    SINGLE_BOOL[(type_a, type_b)] = fn
