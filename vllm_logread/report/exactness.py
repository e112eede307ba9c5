"""Whether the model's KV layout is known well enough for exact users.

Two ways a layout is assumed rather than known (README.md, "Exact or not"):

* the model's config was found but its architecture is not verified (no
  hand-worked test, or fields the tool does not read): kv/architectures.py;
* no config was found and the log names the model only by a path, a served
  name, or a name whose family is a hybrid one: the log's pool line cannot tell
  plain attention from a hybrid (vLLM prints a hybrid's pool as concurrency x
  max len, which plain attention at the same block size reproduces), so "970
  users, exact" for a gated-delta-net hybrid served from /models/my-qwen3-next
  would be a wrong exact number.

The log settles it when it states its KV cache groups ("kv cache group sizes
(...)", vLLM 0.31+) as one group, or when no group can exist (V0, or V1 before
the hybrid manager): then the pool is one full-attention group and the users
follow from its blocks alone.
"""

from __future__ import annotations

from typing import Any

from ..boots import Boot
from ..kv.architectures import family_of_name
from .model import Unknown

SETTLE = (
    "pass --config PATH to the model's config.json (an architecture the tool has verified "
    "gives exact users), or a log that states its KV cache groups (vLLM 0.31+ prints "
    "'kv cache group sizes (...)')"
)


def _one_group_stated(boot: Boot) -> bool:
    groups = boot.last("num_kv_cache_groups")
    return groups is not None and int(groups.value) == 1


def layout_unknown(
    boot: Boot, spec: Any, model: str | None, *, can_be_hybrid: bool, users: str
) -> Unknown | None:
    """An Unknown when the users rest on a layout the tool assumed, else None.

    ``users`` is the figure the assumed layout gives ("970"), for the candidates.
    """
    if not can_be_hybrid or _one_group_stated(boot):
        return None
    if spec is not None:
        if bool(getattr(spec, "is_verified", True)):
            return None
        arch = getattr(spec, "architecture", None) or "this model"
        why = str(getattr(spec, "architecture_note", None) or f"{arch} is not verified")
        return Unknown(
            name="architecture",
            candidates=(f"{users} users if the tool's reading of {arch} is vLLM's", "other"),
            why=why,
            settle="a log that states its KV cache groups and block count; the tool has "
            f"no hand-worked check of {arch} (vllm-logread kv --list-architectures)",
        )
    if not model:
        return None  # no name at all: the report already says the shape is unknown
    found = family_of_name(model)
    if found is not None and found[1]:
        return None
    if found is None:
        why = (
            f"the log names the model only as {model!r}, which names no family the tool "
            "knows, and its pool line reads the same for plain attention and for a hybrid "
            "(sliding-window, Mamba or linear-attention layers)"
        )
    else:
        why = (
            f"the model's name {model!r} says {found[0]}, whose KV cache groups the log's "
            "pool line does not settle without its config"
        )
    return Unknown(
        name="attention_layout",
        candidates=(f"plain full attention: {users} users", "a hybrid: other users"),
        why=why,
        settle=SETTLE,
    )
