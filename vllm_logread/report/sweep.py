"""A sweep: one boot's answer at each workload, computed once in the report stage.

``--prompt 256,512 --output 128`` asks the users at several workloads. Each row
is the answer a single ``--prompt P --output O`` run gives (report/resolved.answer
through build_report: the same block size, checks and cap), worked out here once;
the gate (``--min-users``), the JSON, the CSV and the text table read these rows
and never build a report themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .capacity import Workload
from .model import Options, Report, SpecResolver
from .resolved import Answer


def sweep_workloads(prompts: Sequence[int], outputs: Sequence[int]) -> tuple[Workload, ...]:
    """Every workload of a sweep, prompts outermost (the sweep table's row order).

    >>> [w.prompt_tokens for w in sweep_workloads((256, 512), (128, 256))]
    [256, 256, 512, 512]
    """
    return tuple(Workload(prompt_tokens=p, output_tokens=o) for p in prompts for o in outputs)


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepRow:
    """The answer of one boot at one workload.

    Attributes:
        source: the input.
        boot_index: the boot's index in its input (several with --all-boots).
        workload: the prompt and output tokens.
        users, users_mid_answer: the answer (the pool's users capped by max_num_seqs).
        is_exact: False when the users are approximate or a lower bound.
        answer: the answer with the pool's own figure and the binding limit.
    """

    source: str
    boot_index: int
    workload: Workload
    users: int | None
    users_mid_answer: int | None
    is_exact: bool
    answer: Answer | None = None


def sweep_of(
    report: Report,
    workloads: Sequence[Workload],
    *,
    options: Options | None,
    spec_resolver: SpecResolver | None = None,
) -> tuple[SweepRow, ...]:
    """``report``'s boot at each of ``workloads`` (the report's own workload
    without a rebuild; the others through build_report with no what-ifs).

    ``options`` None (an input whose options are not known): only the report's
    own workload has a figure, the others are unknown.
    """
    from . import build_report  # the package's entry point (SGLang's or vLLM's)

    rows: list[SweepRow] = []
    for w in workloads:
        one: Report | None = report
        if w != report.workload:
            one = None
            if options is not None:
                opts = replace(options, workload=w, what_ifs=(), target_users=None)
                one = build_report(
                    report.boot, opts, source=report.source, spec_resolver=spec_resolver
                )
        rows.append(
            SweepRow(
                source=report.source,
                boot_index=report.boot.index,
                workload=w,
                users=None if one is None else one.users,
                users_mid_answer=None if one is None else one.users_mid_answer,
                is_exact=False if one is None else one.is_exact,
                answer=None if one is None else one.answer,
            )
        )
    return tuple(rows)


__all__ = ["SweepRow", "sweep_of"]
