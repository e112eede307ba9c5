"""The types of a JSON document, for the code that builds or reads one.

``JSONValue`` is what ``json.loads`` gives and ``json.dumps`` takes. Its
containers are the read-only ``Mapping`` and ``Sequence`` so that a
``list[int]`` or a ``dict[str, str]`` is a ``JSONValue`` as it stands (the
mutable ``list`` and ``dict`` are invariant in their items); ``JSONObject``
is the mutable object a renderer fills in, key by key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JSONValue: TypeAlias = (
    "Mapping[str, JSONValue] | Sequence[JSONValue] | str | int | float | bool | None"
)
JSONObject: TypeAlias = "dict[str, JSONValue]"


def as_object(value: JSONValue) -> Mapping[str, JSONValue] | None:
    """``value`` when it is a JSON object, else None (a config.json field
    read where an object is expected)."""
    return value if isinstance(value, Mapping) else None
