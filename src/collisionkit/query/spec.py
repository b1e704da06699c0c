"""A question declared once, as data: its options (defaults, validation), result and exposure.

Every public question (``intersects``, ``distance``, ...) has one ``Spec`` here, in the
style of Coal's request records: the options with their defaults and their checks, the
result record, the names of its poses, whether a Dask input answers lazily, and the CLI
command that offers it. The driver (``query/driver.py``) validates a call against it,
the registry (``query/registry.py``) checks each handler's ``honours`` against it, and
the CLI generates a command's flags from the options marked ``cli=True``::

    DISTANCE = define(Spec("distance", {"upper_bound": Option(math.inf, check=positive_float),
                                        "threads": THREADS}, result=Distance, cli="distance"))

A new option is one ``spec.add("name", Option(...))``: it is validated, reaches the
handlers that honour it (``registry.register(..., honours=...)``), is refused with
``UnsupportedOptionError`` by the others, and is offered by the CLI command
(``tests/test_spec.py`` does exactly that).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import numpy as np

from ..constants import MODE_ALL, MODE_ANY, MODE_FIRST, MODE_SURFACE_PAIRS, MODES
from .batch import thread_count


@dataclass(frozen=True)
class Option:
    """One option of a question.

    ``default``: the value when the caller leaves it out (an option "is set" when its
    value is not the default). ``check(value) -> value``: validates (ValueError or
    TypeError with the reason) and normalises a value the caller gave. ``cli``: offered
    as ``--name`` by the question's CLI command, parsed by ``text(str) -> value``
    (ValueError with the reason), restricted to ``choices`` when given.
    """

    default: Any
    check: Callable[[Any], Any] | None = None
    help: str = ""
    cli: bool = False
    text: Callable[[str], Any] | None = None
    choices: tuple[Any, ...] | None = None

    def validated(self, value: Any) -> Any:
        return value if self.check is None else self.check(value)


@dataclass
class Spec:
    """A question: its name, its options, its result and how it is exposed.

    ``poses``: the names of its pose arguments after the two shapes. ``view(options)``
    gives the request's engine view ``(mode code, max_pairs, strategy)`` (default
    ``(MODE_ANY, -1, "descent")``). ``lazy``: a Dask input answers with a lazy record
    (``query/deferred.py``). ``cli``: the command of ``collisionkit`` that offers it.
    """

    name: str
    options: dict[str, Option]
    result: type | None = None
    poses: tuple[str, ...] = ("pose_a", "pose_b")
    view: Callable[[Mapping[str, Any]], tuple[int, int, Any]] | None = None
    lazy: bool = True
    cli: str | None = None
    _defaults: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._defaults = {k: o.default for k, o in self.options.items()}

    def defaults(self) -> dict[str, Any]:
        """Every option at its default (a fresh dict)."""
        return dict(self._defaults)

    def add(self, name: str, option: Option) -> Option:
        """Declare one more option (an extension, or a test): nothing else needs an edit."""
        if name in self.options:
            raise ValueError(f"{self.name} already has an option {name!r}")
        self.options[name] = option
        self._defaults[name] = option.default
        return option

    def remove(self, name: str) -> None:
        """Take an option back out (the inverse of ``add``)."""
        del self.options[name]
        del self._defaults[name]

    def validate(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every option of the question: the given ones checked and normalised, the rest
        at their defaults. An unknown name is a TypeError, as for a Python keyword."""
        out = dict(self._defaults)
        options = self.options
        for k, v in given.items():
            opt = options.get(k)
            if opt is None:
                raise TypeError(f"{self.name}() got an unexpected keyword argument {k!r}")
            check = opt.check
            # PERF: a default is valid by construction (most calls pass the defaults through)
            out[k] = v if check is None or v is opt.default else check(v)
        return out

    def engine_view(self, options: Mapping[str, Any]) -> tuple[int, int, Any]:
        return (MODE_ANY, -1, "descent") if self.view is None else self.view(options)

    def cli_options(self) -> Iterator[tuple[str, Option]]:
        """The options the CLI command offers, in declaration order."""
        return ((k, o) for k, o in self.options.items() if o.cli)


#: Every question by name (``define`` adds one).
SPECS: dict[str, Spec] = {}


def define(spec: Spec) -> Spec:
    SPECS[spec.name] = spec
    return spec


class _OptionDefaults(Mapping[str, dict[str, Any]]):
    """``QUERY_OPTIONS[question]`` -> {option: default}, read live from the specs."""

    def __getitem__(self, name: str) -> dict[str, Any]:
        return SPECS[name].defaults()

    def __iter__(self) -> Iterator[str]:
        return iter(SPECS)

    def __len__(self) -> int:
        return len(SPECS)


#: Every question and its options with their defaults (the public functions' keywords).
QUERY_OPTIONS: Mapping[str, dict[str, Any]] = _OptionDefaults()


# -- checks shared by the questions (each returns the normalised value) ------------------


def check_threads(threads: Any) -> Any:
    if threads is not None:
        thread_count(threads)  # raises on a bad count
    return threads


def max_pairs(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"max_pairs must be a positive int or None, got {value!r}")
    return value


def cap_of(value: int | None) -> int:
    """The engine's cap: -1 for none."""
    return -1 if value is None else int(value)


def positive_int(name: str) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
        return int(value)

    return check


def nonnegative_length(name: str) -> Callable[[Any], float]:
    def check(value: Any) -> float:
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a number >= 0, got {value!r}") from None
        if not (v >= 0.0 and math.isfinite(v)):
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        return v

    return check


def one_of(name: str, values: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not isinstance(value, str) or value not in values:
            quoted = ", ".join(repr(v) for v in values[:-1]) + f" or {values[-1]!r}" if len(values) > 1 else repr(values[0])
            raise ValueError(f"{name} must be {quoted}, got {value!r}")
        return value

    return check


def a_bool(name: str) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be a bool, got {value!r}")
        return bool(value)

    return check


# -- CLI text parsers (ValueError with the reason; the CLI names the flag) ----------------


def int_text(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise ValueError(f"expected an integer, got {text[:40]!r}") from None
        if v < low:
            raise ValueError(f"must be >= {low}, got {v}")
        return v

    return parse


def length_text(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"expected a number, got {text[:40]!r}") from None
    if not (math.isfinite(v) and v >= 0.0):
        raise ValueError(f"must be a finite number >= 0, got {text[:40]!r}")
    return v


#: The ``threads`` option every question takes.
THREADS = Option(None, check_threads, "threads (default: all cores); 1 runs the serial path")


def strategy_option(default: str) -> Option:
    return Option(default, None, "how the shapes are walked: a strategy name or record")


def traversal_view(options: Mapping[str, Any]) -> tuple[int, int, Any]:
    """(mode, cap, strategy) of ``intersects``, ``contacts`` and ``query_stats``."""
    mode = options.get("mode", "any")
    return MODES[mode], cap_of(options.get("max_pairs")), options["strategy"]


#: The one ``mode`` vocabulary (Jolt's collectors): "any" answers the boolean (stop at the
#: first intersecting pair, report none), "first" reports one pair per colliding pose, "all"
#: every pair. A question takes the subset that fits it (``mode_option``).
MODE_NAMES = ("any", "first", "all")
#: ``mode`` as types: every value, and the row questions' ("any" is ``intersects``)
Mode: TypeAlias = Literal["any", "first", "all"]
RowMode: TypeAlias = Literal["first", "all"]


def mode_option(default: str, values: tuple[str, ...], help: str) -> Option:
    """The ``mode`` option of a question that takes ``values`` (a subset of ``MODE_NAMES``,
    in its order)."""
    if any(v not in MODE_NAMES for v in values):
        raise ValueError(f"mode values {values} are not in the vocabulary {MODE_NAMES}")
    return Option(default, one_of("mode", tuple(v for v in MODE_NAMES if v in values)), help)


def surface_view(mode: str, surfaces: bool, strategy: Any) -> tuple[int, int, Any]:
    """(mode code, cap, strategy) of a walk over surface pairs: ``surfaces`` with mode "all"
    is the overlap box's surface-pair walk (``MODE_SURFACE_PAIRS``); "any" and "first" stop
    at the first triangle pair, which is the first surface pair too."""
    return (MODE_SURFACE_PAIRS if surfaces and mode == "all" else MODES[mode]), -1, strategy

__all__ = [
    "MODE_ALL", "MODE_ANY", "MODE_FIRST", "MODE_NAMES", "Mode", "RowMode", "QUERY_OPTIONS", "SPECS", "THREADS", "Option", "Spec",
    "a_bool", "cap_of", "check_threads", "define", "int_text", "length_text", "max_pairs", "mode_option",
    "nonnegative_length", "one_of", "positive_int", "strategy_option", "surface_view", "traversal_view",
]  # fmt: skip
