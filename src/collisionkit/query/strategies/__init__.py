"""Strategies: how a question walks the two shapes, each declaring what it serves.

A strategy is a frozen record (``collisionkit.strategies``: ``Descent`` built in, the others
here) and a runner. Each record type declares its ``Capabilities`` once with ``declare``:
what it walks (triangle surfaces, or convex solids), which pair kinds it answers, which
questions it serves, and its optional extras (native surface pairs, visit counters).
Questions choose by reading the declarations (``capabilities``, ``walk``), never by
testing record types.

Modules: ``descent`` (the default: simultaneous depth-first descent), ``bfs``
(breadth-first, seed 002), ``oaabb`` (overlap box over R-trees, seed 000),
``double_box`` (inner and outer boxes, seed 003), ``gjk`` (GJK on convex solids).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...errors import UnsupportedOptionError

#: Pair kinds: two meshes; a convex shape and a mesh (either order); two convex shapes;
#: two convex polyhedra (``Convex``, ``Box``).
PAIR_KINDS = ("mesh", "convex-mesh", "convex", "polyhedra")


@dataclass(frozen=True)
class Capabilities:
    """What a strategy serves.

    walks : {"surfaces", "solids"}
        "surfaces": triangle meshes (a convex shape as its surface ``.mesh``);
        "solids": convex shapes as solids.
    pairs : frozenset of PAIR_KINDS
        The pair kinds it answers.
    questions : frozenset of str
        The questions it serves.
    on_solids : str or None
        The strategy (by name) it hands two convex solids to, where it does not walk them.
    surface_pairs : bool
        It finds surface pairs natively (``record.surface_rows(request)``).
    counts_visits : bool
        It counts visits per node (``record.visits(request)``, ``node_visits``).
    """

    walks: str
    pairs: frozenset[str]
    questions: frozenset[str]
    on_solids: str | None = None
    surface_pairs: bool = False
    counts_visits: bool = False


_CAPS: dict[type, Capabilities] = {}
#: record type -> ``runner(request, record) -> BatchResult``
RUNNERS: dict[type, Callable[[Any, Any], Any]] = {}


def _own_run(req: Any, record: Any) -> Any:
    return record.run(req)


def declare(record_type: type, caps: Capabilities, run: Callable[[Any, Any], Any] | None = None) -> None:
    """Declare what ``record_type`` serves; ``run(request, record) -> BatchResult`` answers a
    traversal request (default: the record's own ``run(request)``)."""
    unknown = caps.pairs - set(PAIR_KINDS)
    if unknown or caps.walks not in ("surfaces", "solids"):
        raise ValueError(f"unknown pair kinds {sorted(unknown)} or walk {caps.walks!r}")
    _CAPS[record_type] = caps
    RUNNERS[record_type] = _own_run if run is None else run


def capabilities(record: Any) -> Capabilities:
    """The declared capabilities of a strategy record."""
    try:
        return _CAPS[type(record)]
    except KeyError:
        raise TypeError(f"strategy record {type(record).__name__} declares no capabilities") from None


def walk(req: Any, record: Any = None) -> Any:
    """Answer a traversal request with ``record`` (default: the request's strategy)."""
    record = req.strategy if record is None else record
    return RUNNERS[type(record)](req, record)


def refuse(req: Any, why: str) -> UnsupportedOptionError:
    """The error for a strategy that does not serve this request, naming it."""
    return UnsupportedOptionError(
        f"{req.query} on {type(req.a).__name__} and {type(req.b).__name__}: option "
        f"strategy={req.options.get('strategy')!r} {why}"
    )


__all__ = ["PAIR_KINDS", "RUNNERS", "Capabilities", "capabilities", "declare", "refuse", "walk"]
