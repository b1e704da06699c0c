"""Allowed self-collision pairs from a MoveIt SRDF file.

MoveIt's Semantic Robot Description Format lists link pairs its collision
checker skips (its "allowed collision matrix"):

* ``<disable_collisions link1="a" link2="b" reason="Adjacent"/>``: the pair (a, b);
* ``<disable_default_collisions link="a"/>``: every pair with a;
* ``<enable_collisions link1="a" link2="b"/>``: the pair (a, b) is checked
  after all (it overrides the two above, as in MoveIt, where a pair entry
  overrides a link's default).

Only those direct children of the root ``<robot>`` element are read. The file
is data: it is parsed with the standard library's expat parser, a DOCTYPE is
refused (SRDF files have none; refusing it rules out entity expansion and
external entities), and files beyond ``MAX_SRDF_BYTES`` are refused unread.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any
from xml.parsers import expat

from ..errors import InvalidRobotError

#: Largest SRDF read (bytes). MoveIt's SRDFs of real robots are tens of kilobytes.
MAX_SRDF_BYTES = 16 * 2**20


class _Refused(Exception):
    """Raised from an expat handler to stop the parse."""


def read_allowed_pairs(
    path: str | os.PathLike[str], links: Sequence[str], robot: str = ""
) -> frozenset[tuple[str, str]]:
    """The link pairs an SRDF file allows to touch.

    Parameters
    ----------
    path : SRDF file.
    links : the robot's link names (every name in the file must be one of them).
    robot : the robot's name, for messages.

    Returns
    -------
    frozenset of (str, str) pairs, each sorted by name.

    Raises
    ------
    InvalidRobotError
        Missing, oversized or malformed file, a DOCTYPE, an element missing
        its link attributes, a link paired with itself, or an unknown link:
        each names the file and line.
    """
    p = os.fspath(path)
    data = read_xml_file(p, "SRDF", MAX_SRDF_BYTES)
    known = set(links)
    disabled: set[tuple[str, str]] = set()
    enabled: set[tuple[str, str]] = set()
    default_off: set[str] = set()
    depth = [0]
    parser = expat.ParserCreate()

    def where() -> str:
        return f"{p}:{parser.CurrentLineNumber}"

    def link(attrs: dict[str, str], key: str, tag: str) -> str:
        name = attrs.get(key)
        if name is None:
            raise _Refused(f"{where()}: <{tag}> has no {key} attribute")
        if name not in known:
            raise _Refused(f"{where()}: <{tag}> names {key}={name!r}, but robot {robot!r} has no such link")
        return name

    def start(tag: str, attrs: dict[str, str]) -> None:
        depth[0] += 1
        if depth[0] == 1:
            if tag != "robot":
                raise _Refused(f"{where()}: the root element is <{tag}>; an SRDF's is <robot>")
            return
        if depth[0] != 2:
            return
        if tag in ("disable_collisions", "enable_collisions"):
            a, b = link(attrs, "link1", tag), link(attrs, "link2", tag)
            if a == b:
                raise _Refused(f"{where()}: <{tag}> pairs link {a!r} with itself")
            (disabled if tag == "disable_collisions" else enabled).add((a, b) if a <= b else (b, a))
        elif tag == "disable_default_collisions":
            default_off.add(link(attrs, "link", tag))

    def end(tag: str) -> None:
        depth[0] -= 1

    parse_xml(data, p, "SRDF", parser, start, end)
    for name in default_off:
        disabled.update((name, o) if name <= o else (o, name) for o in known if o != name)
    return frozenset(disabled - enabled)


def _article(kind: str) -> str:
    """"an SRDF", "a URDF": by the sound of the first letter."""
    return "an" if kind[:1] in set("AEIOFHLMNRSX") else "a"


def read_xml_file(p: str, kind: str, max_bytes: int) -> bytes:
    """The bytes of the XML file ``p`` (a URDF or an SRDF), read only when it is a regular
    file of at most ``max_bytes`` (bounded memory: a huge file is refused unread)."""
    if not os.path.isfile(p):
        raise InvalidRobotError(f"{p}: no such file ({kind})")
    size = os.path.getsize(p)
    if size > max_bytes:
        raise InvalidRobotError(f"{p}: {size} bytes; {_article(kind)} {kind} may hold at most {max_bytes}")
    with open(p, "rb") as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew while we read it
        raise InvalidRobotError(f"{p}: more than {max_bytes} bytes; a {kind} may hold at most {max_bytes}")
    return data


def parse_xml(
    data: bytes, p: str, kind: str, parser: Any = None, start: Any = None, end: Any = None
) -> None:
    """Parse ``data`` strictly with expat (the rules every robot XML file is read by).

    Refuses a DOCTYPE or an entity declaration (robot files have none; refusing them
    rules out entity expansion and external entities), malformed XML (no recovering
    parser guesses a robot from the pieces) and a root element other than ``<robot>``.
    ``start``/``end`` are the caller's element handlers (``parser`` their expat parser);
    an ``_Refused`` they raise becomes the error. InvalidRobotError naming the file
    and line otherwise.
    """
    parser = parser or expat.ParserCreate()
    depth = [0]

    def where() -> str:
        return f"{p}:{parser.CurrentLineNumber}"

    def on_start(tag: str, attrs: dict[str, str]) -> None:
        depth[0] += 1
        if depth[0] == 1 and tag != "robot":
            raise _Refused(f"{where()}: the root element is <{tag}>; {_article(kind)} {kind}'s is <robot>")
        if start is not None:
            start(tag, attrs)

    def on_end(tag: str) -> None:
        depth[0] -= 1
        if end is not None:
            end(tag)

    def doctype(*_: object) -> None:
        raise _Refused(f"{where()}: a DOCTYPE is not allowed in {_article(kind)} {kind} (files are data: no entities)")

    parser.StartElementHandler = on_start
    parser.EndElementHandler = on_end
    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = doctype
    try:
        parser.Parse(data, True)
    except _Refused as exc:
        raise InvalidRobotError(str(exc)) from None
    except expat.ExpatError as exc:
        raise InvalidRobotError(f"{p}:{exc.lineno}: cannot read {kind} ({expat.errors.messages[exc.code]})") from None
    except RecursionError:  # pragma: no cover - expat does not recurse; a handler might
        raise InvalidRobotError(f"{p}: cannot read {kind} (nesting too deep)") from None


__all__ = ["MAX_SRDF_BYTES", "parse_xml", "read_allowed_pairs", "read_xml_file"]
