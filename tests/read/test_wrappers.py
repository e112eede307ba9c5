"""One physical line per wrapper seen around vLLM records -> (process tag, message).

Each case is a line as it appears in ``sample_logs/wrap_<name>.log`` (typed here, not
read from the file), split into records by ``lines.split_records`` (``\\r`` redraws,
records glued without a newline) and unwrapped by ``lines.parse_line``. The expected
message is vLLM's own text after its header; the expected process is the text inside
vLLM's or Ray's parentheses, never a wrapper's (journald's ``python3[28145]``,
torchrun's ``[rank0]``, a CI stamp, a stage tag). A record that unwraps to nothing
(blank or whitespace-only) is not listed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_logread.read.lines import parse_line, split_records

EC = "EngineCore_DP0 pid=200"
POOL = "GPU KV cache size: 24,096 tokens"
AVAIL = "Available KV cache memory: 3.31 GiB"
HDR = f"({EC}) INFO 11-29 10:00:40 [kv_cache_utils.py:1087] "
ESC = "\x1b"
SHARDS = "Loading safetensors checkpoint shards:"

Record = tuple[str | None, str]

# Cases the reader does not get right yet: id -> why (strict xfail, so a fix shows up).
KNOWN_BUGS: dict[str, str] = {}

CASES: list[tuple[str, str, list[Record]]] = [
    (
        "ansi_bare",
        f"[0;36m({EC})[0;0m [32mINFO[0m [90m11-29 10:00:40[0m [90m[gpu_worker.py:298][0m {AVAIL}",
        [(EC, AVAIL)],
    ),
    (
        "ansi_bare_rgb_and_256",
        f"[1;36m({EC})[0m [38;5;245mINFO[m [38;2;10;20;30m11-29 10:00:40[39m [x.py:1] {POOL}",
        [(EC, POOL)],
    ),
    (
        "ansi_bare_ordinary_brackets_untouched",
        f"({EC}) INFO 11-29 10:00:40 [x.py:1] Retry in [5m] [30m] [1;2] [m3] [99m] [32m",
        [(EC, "Retry in [5m] [30m] [1;2] [m3] [99m] [32m")],
    ),
    (
        "ansi_escaped_text",
        f"\\x1b[1;36m({EC})\\x1b[0;0m \\033[32mINFO\\033[0m 11-29 10:00:40 [x.py:1] {POOL}",
        [(EC, POOL)],
    ),
    (
        "elided_pid",
        f"(EngineCore_DP0 pid=...) {HDR[len(EC) + 3 :]}{POOL}",
        [("EngineCore_DP0 pid=...", POOL)],
    ),
    (
        "elided_pid_ellipsis",
        f"(EngineCore_DP0 pid=…) {HDR[len(EC) + 3 :]}{POOL}",
        [("EngineCore_DP0 pid=…", POOL)],
    ),
    (
        "elided_pid_placeholder",
        f"(VllmWorker rank=1 pid=<pid>) {HDR[len(EC) + 3 :]}{AVAIL}",
        [("VllmWorker rank=1 pid=<pid>", AVAIL)],
    ),
    ("backticks", f"`{HDR}{POOL}`", [(EC, POOL)]),
    ("backticks_bullet", f"- `{HDR}{POOL}`", [(EC, POOL)]),
    ("backticks_quoted_reply", f"> `{HDR}{AVAIL}` ", [(EC, AVAIL)]),
    (
        "pager_cut_glued",
        f"{HDR}Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: 15…{HDR}{POOL}",
        [
            (EC, "Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is:"),
            (EC, POOL),
        ],
    ),
    (
        "pager_cut_marker_then_space",
        f"{HDR}{AVAIL} [...] {HDR}{POOL}",
        [(EC, "Available KV cache memory: 3.31"), (EC, POOL)],
    ),
    ("pager_cut_at_end", f"{HDR}GPU KV cache size: 24,0 (truncated)", [(EC, "GPU KV cache size:")]),
    (
        "ansi_esc",
        f"{ESC}[1;36m({EC}){ESC}[0;0m {ESC}[32mINFO{ESC}[0m {ESC}[90m01-22 10:00:40{ESC}[0m "
        f"{ESC}[90m[gpu_worker.py:375]{ESC}[0m {AVAIL}",
        [(EC, AVAIL)],
    ),
    (
        "ansi_esc_warning",
        f"{ESC}[1;36m({EC}){ESC}[0;0m {ESC}[33mWARNING{ESC}[0m {ESC}[90m01-22 10:00:31{ESC}[0m "
        f"{ESC}[90m[backends.py:609]{ESC}[0m Compiling a graph takes 14.11 s",
        [(EC, "Compiling a graph takes 14.11 s")],
    ),
    (
        "ansi_caret",
        "^[[0;36m(EngineCore pid=200)^[[0;0m ^[[32mINFO^[[0m ^[[90m11-29 10:00:40^[[0m "
        f"^[[90m[gpu_worker.py:773]^[[0m {AVAIL}",
        [("EngineCore pid=200", AVAIL)],
    ),
    ("ansi_caret_bare_tag", "^[[0;36m(EngineCore pid=200)^[[0;0m", [("EngineCore pid=200", "")]),
    (
        "cr_line_end",
        "INFO 12-30 10:11:06 worker.py:241] Memory profiling takes 2.03 seconds\r",
        [(None, "Memory profiling takes 2.03 seconds")],
    ),
    (
        "crlf_after_cr",
        "INFO 12-30 10:11:06 worker.py:241] the current vLLM instance can use total_gpu_memory "
        "(22.07GiB) x gpu_memory_utilization (0.95) = 20.97GiB\r\r",
        [
            (
                None,
                "the current vLLM instance can use total_gpu_memory (22.07GiB) x "
                "gpu_memory_utilization (0.95) = 20.97GiB",
            )
        ],
    ),
    (
        "docker_t",
        "2025-05-02T07:44:12.483920117Z INFO 05-02 07:44:12 [kv_cache_utils.py:634] "
        "GPU KV cache size: 158,656 tokens",
        [(None, "GPU KV cache size: 158,656 tokens")],
    ),
    (
        "docker_t_ansi",
        f"2025-08-22T09:14:49.802761004Z {ESC}[1;36m(EngineCore_0 pid=120){ESC}[0;0m "
        "INFO 08-22 09:14:49 [kv_cache_utils.py:849] GPU KV cache size: 28,208 tokens",
        [("EngineCore_0 pid=120", "GPU KV cache size: 28,208 tokens")],
    ),
    (
        "kubectl_timestamps",
        "2026-05-03T11:20:44.918273645Z (EngineCore pid=97) INFO 05-03 11:20:44 "
        "[gpu_worker.py:447] Available KV cache memory: 20.62 GiB",
        [("EngineCore pid=97", "Available KV cache memory: 20.62 GiB")],
    ),
    (
        "journald_ru",
        "авг 18 14:15:03 gpu-node-3 python3[28145]: INFO 08-18 14:15:03 gpu_executor.py:122] "
        "# GPU blocks: 1478, # CPU blocks: 2048",
        [(None, "# GPU blocks: 1478, # CPU blocks: 2048")],
    ),
    (
        "journald_en",
        "Aug 18 14:15:20 gpu-node-3 vllm[28145]: (EngineCore pid=28301) INFO 08-18 14:15:20 "
        "[kv_cache_utils.py:1341] GPU KV cache size: 130,768 tokens",
        [("EngineCore pid=28301", "GPU KV cache size: 130,768 tokens")],
    ),
    (
        "ci_timestamp",
        "[2024-07-08 15:17:26] INFO 07-08 07:17:26 gpu_executor.py:83] "
        "# GPU blocks: 27722, # CPU blocks: 2048",
        [(None, "# GPU blocks: 27722, # CPU blocks: 2048")],
    ),
    (
        "ci_timestamp_iso",
        "[2024-07-08T15:17:44Z] INFO 07-08 07:17:44 metrics.py:334] Avg prompt throughput: "
        "0.0 tokens/s, Avg generation throughput: 412.9 tokens/s, Running: 4 reqs",
        [
            (
                None,
                "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 412.9 tokens/s, "
                "Running: 4 reqs",
            )
        ],
    ),
    ("k9s", "│ " + (HDR + POOL).ljust(150) + " │", [(EC, POOL)]),
    ("k9s_empty_row", "│ " + "".ljust(150) + " │", []),
    ("indent_spaces", f"    INFO 04-24 16:33:13 [kv_cache_utils.py:634] {POOL}", [(None, POOL)]),
    ("indent_tab", f"\tINFO 04-24 16:33:13 [kv_cache_utils.py:634] {POOL}", [(None, POOL)]),
    ("paste_markers", f">> {HDR}{POOL}", [(EC, POOL)]),
    ("paste_markers_nested", f"> > {HDR}{POOL}", [(EC, POOL)]),
    (
        "rank_prefix",
        "[rank1]: INFO 07-12 09:41:07 [gpu_worker.py:232] Available KV cache memory: 14.95 GiB",
        [(None, "Available KV cache memory: 14.95 GiB")],
    ),
    (
        "ray_local",
        "(RayWorkerWrapper pid=3140) INFO 09-03 12:01:02 [gpu_model_runner.py:2007] "
        "Model loading took 32.8890 GiB and 30.442179 seconds",
        [("RayWorkerWrapper pid=3140", "Model loading took 32.8890 GiB and 30.442179 seconds")],
    ),
    (
        "ray_ip_repeated",
        "(RayWorkerWrapper pid=2215, ip=10.0.0.2) INFO 09-03 12:01:40 [gpu_worker.py:276] "
        "Available KV cache memory: 33.01 GiB [repeated 2x across cluster]",
        [("RayWorkerWrapper pid=2215, ip=10.0.0.2", "Available KV cache memory: 33.01 GiB")],
    ),
    (
        "stage_after_tag",
        "(EngineCore_DP0 pid=181642) [Stage-0] INFO 02-02 18:25:03 [gpu_worker.py:358] "
        "Available KV cache memory: 100.43 GiB",
        [("EngineCore_DP0 pid=181642", "Available KV cache memory: 100.43 GiB")],
    ),
    (
        "stage_alone",
        "[Stage-1] INFO 02-02 18:25:06 [gpu_model_runner.py:4001] "
        "Model loading took 8.12 GiB memory and 11.203551 seconds",
        [(None, "Model loading took 8.12 GiB memory and 11.203551 seconds")],
    ),
    (
        "foreign_lib_pylog",
        "(EngineCore_DP0 pid=181642) 2026-02-02 18:25:03,837 - INFO - autotuner.py:256 - "
        "flashinfer.jit: [Autotuner]: Autotuning process starts ...",
        [
            (
                "EngineCore_DP0 pid=181642",
                "flashinfer.jit: [Autotuner]: Autotuning process starts ...",
            )
        ],
    ),
    (
        "tqdm",
        f"({EC}) {SHARDS}   0% Completed | 0/5 [00:00<?, ?it/s]\r"
        f"{SHARDS} 100% Completed | 5/5 [00:03<00:00,  1.42it/s]\r"
        f"({EC}) INFO 11-29 10:00:20 [gpu_model_runner.py:2653] "
        "Model loading took 15.2683 GiB and 30.512331 seconds",
        [
            (EC, f"{SHARDS}   0% Completed | 0/5 [00:00<?, ?it/s]"),
            (None, f"{SHARDS} 100% Completed | 5/5 [00:03<00:00,  1.42it/s]"),
            (EC, "Model loading took 15.2683 GiB and 30.512331 seconds"),
        ],
    ),
    (
        "hardwrap80_head",
        "INFO 02-10 14:20:33 executor_base.py:115] Maximum concurrency for 8192 tokens pe",
        [(None, "Maximum concurrency for 8192 tokens pe")],
    ),
    ("hardwrap80_tail", "r request: 54.54x", [(None, "r request: 54.54x")]),
    (
        "glued",
        f"({EC}) INFO 11-29 10:00:40 [gpu_worker.py:298] {AVAIL}{HDR}{POOL}",
        [(EC, AVAIL), (EC, POOL)],
    ),
    (
        "glued_v0",
        "INFO 02-10 14:20:33 executor_base.py:110] # CUDA blocks: 27927, # CPU blocks: 2048"
        "INFO 02-10 14:20:33 executor_base.py:115] Maximum concurrency for 8192 tokens per "
        "request: 54.54x",
        [
            (None, "# CUDA blocks: 27927, # CPU blocks: 2048"),
            (None, "Maximum concurrency for 8192 tokens per request: 54.54x"),
        ],
    ),
    (
        "glued_other_process",
        "(APIServer pid=1) INFO 11-29 10:00:09 [model.py:1510] Using max model len 8192"
        f"({EC}) INFO 11-29 10:00:20 [gpu_model_runner.py:2653] Model loading took 15.2683 GiB "
        "and 30.512331 seconds",
        [
            ("APIServer pid=1", "Using max model len 8192"),
            (EC, "Model loading took 15.2683 GiB and 30.512331 seconds"),
        ],
    ),
    # -- constructed (no real paste of these shapes was found): grep -n / its context
    #    lines, grep over several files, cat -n, Markdown list items, a visible ^M. The
    #    process tag must survive them (a DP engine's tag decides whose pool it is).
    ("grep_n", f"1234:{HDR}{POOL}", [(EC, POOL)]),
    ("grep_file_n", f"logs/vllm-dp.log:57:{HDR}{POOL}", [(EC, POOL)]),
    ("grep_context", f"1233-{HDR}{AVAIL}", [(EC, AVAIL)]),
    ("grep_files", f"vllm.log:{HDR}{POOL}", [(EC, POOL)]),
    ("grep_n_traceback", "88:ValueError: boom", [(None, "ValueError: boom")]),
    ("cat_n", f"    57\t{HDR}{POOL}", [(EC, POOL)]),
    ("md_list_dash", f"- {HDR}{POOL}", [(EC, POOL)]),
    ("md_list_numbered_indented", f"  3. {HDR}{POOL}", [(EC, POOL)]),
    ("md_list_then_quote", f"> * {HDR}{AVAIL}", [(EC, AVAIL)]),
    ("number_that_is_text", "0: NVIDIA L4", [(None, "0: NVIDIA L4")]),
    ("caret_m", f"{HDR}{POOL}^M", [(EC, POOL)]),
    ("caret_m_inside", f"{HDR}{AVAIL}^M{HDR}{POOL}", [(EC, AVAIL), (EC, POOL)]),
    # -- a paste whose newlines became spaces (vLLM issue 17462 as a mirror keeps it:
    #    sample_logs/collapsed_tp2_worker_oom.log)
    (
        "space_joined",
        "INFO 04-30 16:20:37 [kv_cache_utils.py:634] GPU KV cache size: 67,856 tokens "
        "INFO 04-30 16:20:37 [kv_cache_utils.py:637] Maximum concurrency for 16,384 tokens "
        "per request: 4.14x (VllmWorker rank=1 pid=12171) ERROR 04-30 16:21:27 "
        "[multiproc_executor.py:380] WorkerProc hit an exception: %s",
        [
            (None, "GPU KV cache size: 67,856 tokens"),
            (None, "Maximum concurrency for 16,384 tokens per request: 4.14x"),
            ("VllmWorker rank=1 pid=12171", "WorkerProc hit an exception: %s"),
        ],
    ),
    ("blank", "", []),
    ("whitespace_only", " \t ", []),
    (
        "truncated_header",
        f"({EC}) INFO 11-29 10:00:40 [gpu_wor",
        [(EC, "INFO 11-29 10:00:40 [gpu_wor")],
    ),
    (
        "truncated_value",
        f"({EC}) INFO 11-29 10:00:52 [gpu_model_runner.py:3480] "
        "Graph capturing finished in 12 secs, took 0.5",
        [(EC, "Graph capturing finished in 12 secs, took 0.5")],
    ),
]


def records(text: str) -> list[Record]:
    out: list[Record] = []
    for rec in split_records(text):
        ll = parse_line(rec, 1)
        if ll.process is not None or ll.message:
            out.append((ll.process, ll.message))
    return out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            text,
            expected,
            id=name,
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[name])]
            if name in KNOWN_BUGS
            else [],
        )
        for name, text, expected in CASES
    ],
)
def test_wrapper(text: str, expected: list[Record]) -> None:
    assert records(text) == expected


def test_every_wrapper_sample_has_a_case() -> None:
    """Each sample_logs/wrap_<name>.log is exercised here under its own name."""
    samples = Path(__file__).resolve().parents[2] / "sample_logs"
    names = {p.name.removeprefix("wrap_").removesuffix(".log") for p in samples.glob("wrap_*.log")}
    ids = {c[0] for c in CASES}
    covered = {n for n in names if any(i == n or i.startswith(n + "_") for i in ids)}
    # The CRLF sample is exercised by the two \r cases, blank_truncated by blank/truncated ones.
    assert names - covered <= {"crlf", "blank_truncated"}
