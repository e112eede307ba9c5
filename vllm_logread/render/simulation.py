"""A scheduler simulation as text, as a JSON object and as a CSV time series."""

from __future__ import annotations

import csv
from typing import IO

from ..jsontypes import JSONObject
from ..vllm.simulate import Simulation

#: The CSV's columns, one row per step.
STEP_COLUMNS = (
    "step",
    "running",
    "waiting",
    "blocks_used",
    "kv_usage_pct",
    "preemptions",
    "finished",
    "output_tokens",
)


def _sizes(sim: Simulation) -> str:
    load = sim.load
    if not load.sizes:
        return f"{load.prompt_tokens:,} + {load.output_tokens:,} tokens"
    kinds = load.kinds
    shown = ", ".join(f"{p:,}+{o:,}" for p, o in kinds[:4]) + (" ..." if len(kinds) > 4 else "")
    where = f" from {load.label}" if load.label else ""
    return f"{len(load.sizes):,} request sizes{where} ({shown}; cycled)"


def _workload(sim: Simulation) -> str:
    load = sim.load
    size = _sizes(sim)
    of = ", " if load.sizes else " of "
    if load.num_users is not None:
        who = f"{load.num_users} closed-loop users{of}{size}"
    else:
        every = f"every {load.arrival_interval_steps:g} steps"
        who = f"one request {every}, {size}" if load.sizes else f"one request of {size} {every}"
    if load.num_requests is not None:
        who += f", {load.num_requests} requests in all"
    if load.num_rounds is not None:
        who += f", {load.num_rounds} per user" if load.num_rounds > 1 else ", one each"
    if load.num_users is not None and load.spread_steps > 0:
        who += f", first requests spread over {load.spread_steps:g} steps"
    return who


#: Waves listed one by one in the text summary (JSON has them all).
MAX_WAVES_SHOWN = 8


def _wave_lines(sim: Simulation) -> list[str]:
    """The waves of users started together (each its staircase and preemptions), or
    where users spread out settled."""
    if sim.steady_running is not None:
        return [
            f"Steady running: {sim.steady_running} (median while requests wait, after the "
            "last user's first request: spread out, the answers never end together)"
        ]
    waves = [w for w in sim.waves if w.is_complete and w.is_full]
    if len(waves) < 2:
        return []
    tail = sum(1 for w in sim.waves if not w.is_full)
    then = f"; then {tail} smaller as users ran out of rounds" if tail else ""
    lines = [f"Waves (users started together, every user still sending{then}):"]
    for w in waves[:MAX_WAVES_SHOWN]:
        stairs = ", ".join(str(n) for n in w.staircase)
        lines.append(
            f"  wave {w.index}: steps {w.first_step}-{w.last_step}, {w.admitted} admitted, "
            f"ends at {w.end_running}; {w.num_preemptions} preemption"
            f"{'' if w.num_preemptions == 1 else 's'}; running {stairs}"
        )
    if len(waves) > MAX_WAVES_SHOWN:
        lines.append(f"  ... {len(waves) - MAX_WAVES_SHOWN} more (--json lists them all)")
    return lines


def simulation_text(sim: Simulation, *, source: str = "") -> str:
    """The summary a person reads: pool, peak, settle, preemptions."""
    pool, limits = sim.pool, sim.limits
    kinds = [g.kind for g in pool.group_rules]
    groups = "" if len(kinds) == 1 else f" in {len(kinds)} KV cache groups ({', '.join(kinds)})"
    lines = [
        f"Simulated vLLM scheduler{f' for {source}' if source else ''}",
        f"  pool: {pool.num_blocks:,} blocks of {pool.block_size} tokens{groups}, "
        f"{pool.usable_blocks:,} usable (one null block)"
        if pool.has_null_block
        else f"  pool: {pool.num_blocks:,} blocks of {pool.block_size} tokens{groups}",
        f"  load: {_workload(sim)}",
        f"  scheduler: max_num_seqs {limits.max_num_seqs}, max_num_batched_tokens "
        f"{limits.max_num_batched_tokens:,}, chunked prefill "
        f"{'on' if limits.enable_chunked_prefill else 'off'}, FCFS, prefix caching off",
        f"  {len(sim.steps):,} steps (steps are scheduler iterations, not seconds)",
        f"Peak running: {sim.peak_running} (step {sim.peak_running_step}); held for 2+ steps: "
        f"{sim.peak_running_held}",
        f"Settled running: {sim.settled_running} (from step {sim.settled_step}, until the first "
        "answer ends)",
        f"Preemptions: {sim.num_preemptions} ({sim.num_recomputed_tokens:,} tokens recomputed)",
        f"Finished: {sim.num_finished} requests; most waiting: "
        f"{max((s.num_waiting for s in sim.steps), default=0)}",
    ]
    if sim.plateaus:
        seq = " -> ".join(f"{p.num_running} ({p.num_steps})" for p in sim.plateaus[:12])
        more = " ..." if len(sim.plateaus) > 12 else ""
        lines.append(f"Plateaus, running (steps): {seq}{more}")
    lines.extend(_wave_lines(sim))
    return "\n".join(lines)


def simulation_json(sim: Simulation, *, source: str = "") -> JSONObject:
    """One JSON object: the inputs, the summary and the time series."""
    pool, limits, load = sim.pool, sim.limits, sim.load
    return {
        "source": source,
        "pool": {
            "num_blocks": pool.num_blocks,
            "usable_blocks": pool.usable_blocks,
            "block_size": pool.block_size,
            "groups": [
                {"kind": g.kind, "block_size": g.block_size, "window_tokens": g.window_tokens}
                for g in pool.group_rules
            ],
        },
        "scheduler": {
            "max_num_seqs": limits.max_num_seqs,
            "max_num_batched_tokens": limits.max_num_batched_tokens,
            "enable_chunked_prefill": limits.enable_chunked_prefill,
        },
        "load": {
            "prompt_tokens": load.prompt_tokens,
            "output_tokens": load.output_tokens,
            "users": load.num_users,
            "requests": load.num_requests,
            "rounds": load.num_rounds,
            "arrival_interval_steps": load.arrival_interval_steps,
            "sizes_source": load.label or None,
            "spread_steps": load.spread_steps,
            "sizes": [{"prompt_tokens": p, "output_tokens": o} for p, o in load.sizes],
        },
        "peak_running": sim.peak_running,
        "peak_running_step": sim.peak_running_step,
        "peak_running_held": sim.peak_running_held,
        "settled_running": sim.settled_running,
        "settled_step": sim.settled_step,
        "preemptions": sim.num_preemptions,
        "recomputed_tokens": sim.num_recomputed_tokens,
        "finished": sim.num_finished,
        "plateaus": [
            {"running": p.num_running, "first_step": p.first_step, "steps": p.num_steps}
            for p in sim.plateaus
        ],
        "waves": [
            {
                "wave": w.index,
                "first_step": w.first_step,
                "last_step": w.last_step,
                "admitted": w.admitted,
                "end_running": w.end_running,
                "staircase": list(w.staircase),
                "preemptions": w.num_preemptions,
                "complete": w.is_complete,
                "full": w.is_full,
            }
            for w in sim.waves
        ],
        "steady_running": sim.steady_running,
        "steps": [
            {
                "step": s.step,
                "running": s.num_running,
                "waiting": s.num_waiting,
                "blocks_used": s.num_blocks_used,
                "kv_usage_pct": round(s.kv_usage_pct, 2),
                "preemptions": s.num_preemptions,
                "finished": s.num_finished,
                "output_tokens": s.num_output_tokens,
            }
            for s in sim.steps
        ],
    }


def write_steps_csv(sim: Simulation, stream: IO[str]) -> None:
    """The time series, one row per step (columns: :data:`STEP_COLUMNS`)."""
    w = csv.writer(stream, lineterminator="\n")
    w.writerow(STEP_COLUMNS)
    for s in sim.steps:
        w.writerow(
            (
                s.step,
                s.num_running,
                s.num_waiting,
                s.num_blocks_used,
                f"{s.kv_usage_pct:.2f}",
                s.num_preemptions,
                s.num_finished,
                s.num_output_tokens,
            )
        )
