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
    from .report.model import Report


def analyze_file(
    path: str,
    *,
    prompt_tokens: int = 512,
    output_tokens: int = 128,
    config: str | None = None,
    block_size: int | None = None,
) -> Report:
    """Read a whole log file and return the report for its last boot."""
    from .kv.config import resolve_spec
    from .report.capacity import Workload
    from .report.model import Options
    from .session.inputs import open_input, run
    from .session.session import Session

    opts = Options(
        workload=Workload(prompt_tokens=prompt_tokens, output_tokens=output_tokens),
        config=config,
        block_size=block_size,
    )
    session = Session(path, opts, spec_resolver=resolve_spec)
    with open_input(path) as stream:
        for _ in run(session, stream):
            pass
    return session.report_for(session.last_boot)
