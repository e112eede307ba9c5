"""The report stage: one boot's facts + the model's KV specs + a workload -> a Report.

Takes a ``Boot`` and ``Options``; gives the pool, the users that fit, the checks of
the log against the model, what-ifs and plans. ``build_report`` is the one entry:
vLLM's report or SGLang's, by the boot's engine.
"""

from __future__ import annotations

from ..boot.boots import Boot
from .build import build_vllm_report
from .model import Options, Report, SpecResolver


def build_report(
    boot: Boot, opts: Options, *, source: str = "-", spec_resolver: SpecResolver | None = None
) -> Report:
    """The report for one boot: SGLang's (its pool is in tokens of pages) or vLLM's."""
    if boot.value("engine_kind") == "sglang":
        from .sglang import build_sglang_report  # imported by SGLang's logs alone

        return build_sglang_report(boot, opts, source=source, spec_resolver=spec_resolver)
    return build_vllm_report(boot, opts, source=source, spec_resolver=spec_resolver)


__all__ = ["Options", "Report", "build_report"]
