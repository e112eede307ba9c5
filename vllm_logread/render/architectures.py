"""``vllm-logread kv --list-architectures``: vLLM's architectures and the tool's status."""

from __future__ import annotations

from ..jsontypes import JSONObject
from ..kv.architectures import ArchitectureInfo

_STATUS_WORDS = {
    "verified": "verified",
    "modelled": "modelled",
    "not verified": "not verified",
}


def architectures_text(archs: list[ArchitectureInfo], *, vllm_version: str) -> str:
    """One line per architecture: name, role, the tool's status, the attention kinds."""
    width = max((len(a.name) for a in archs), default=12)
    counts: dict[str, int] = {}
    for a in archs:
        counts[a.status] = counts.get(a.status, 0) + 1
    head = (
        f"vLLM {vllm_version}'s model registry: {len(archs)} architectures; "
        f"{counts.get('verified', 0)} verified (a hand-worked test), "
        f"{counts.get('modelled', 0)} modelled (a layout rule, no test), "
        f"{counts.get('not verified', 0)} not verified (read by their generic fields: never "
        "exact unless the log settles it)"
    )
    lines = [head, ""]
    lines.append(f"{'architecture':<{width}}  {'role':<15}  {'status':<12}  attention kinds")
    for a in archs:
        lines.append(
            f"{a.name:<{width}}  {a.role:<15}  {_STATUS_WORDS[a.status]:<12}  "
            + (", ".join(a.attention_kinds) or "-")
        )
    return "\n".join(lines)


def architectures_json(archs: list[ArchitectureInfo], *, vllm_version: str) -> JSONObject:
    """The same as JSON: one object per architecture."""
    return {
        "vllm_version": vllm_version,
        "architectures": [
            {
                "architecture": a.name,
                "role": a.role,
                "status": a.status,
                "verified_by": a.verified_by,
                "attention_kinds": list(a.attention_kinds),
                "kv_config_fields": list(a.kv_config_fields),
            }
            for a in archs
        ],
    }
