"""vllm-logread: read a vLLM log and say how many users really fit in its KV cache.

Library use::

    from vllm_logread import analyze_file
    report = analyze_file("server.log", prompt_tokens=512, output_tokens=128)
    print(report.users)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .report import Report


def analyze_file(
    path: str,
    *,
    prompt_tokens: int = 512,
    output_tokens: int = 128,
    config: str | None = None,
    block_size: int | None = None,
) -> Report:
    """Read a whole log file and return the report for its last boot."""
    from . import kvspec, pipeline
    from .capacity import Workload
    from .report import Options

    opts = Options(
        workload=Workload(prompt_tokens=prompt_tokens, output_tokens=output_tokens),
        config=config,
        block_size=block_size,
    )
    session = pipeline.Session(path, opts, spec_resolver=kvspec.resolve_spec)
    with pipeline.open_input(path) as stream:
        for _ in pipeline.run(session, stream):
            pass
    return session.report_for(session.last_boot)
