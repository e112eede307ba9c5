"""SGLang boot logs: its lines read as facts, its pool counted as SGLang counts it.

The samples are checked field by field in their ``.golden.json`` (and one in a
``.facts.json``); here: the arithmetic's edge cases, the rank tags, and the
log read through a pipe. Numbers are worked by hand (sglang.py's docstring):
Qwen3-8B holds 73,728 bytes of K per token and as much of V; SGLang's pool has
no null block, its buffers one padding page beside the pool.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from vllm_logread.boot.boots import BootTracker
from vllm_logread.cli.commands import main
from vllm_logread.cli.outcome import results_of
from vllm_logread.kv.config import resolve_spec
from vllm_logread.read.lines import parse_line
from vllm_logread.read.scanner import scan_bytes
from vllm_logread.render.text import summary_text
from vllm_logread.render.words import said
from vllm_logread.report.capacity import Workload
from vllm_logread.report.model import Options
from vllm_logread.report.sglang import build_sglang_report, measured_bytes_per_token
from vllm_logread.session.session import Session

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
H100 = SAMPLES / "sglang_qwen3-8b_h100.log"
TP2 = SAMPLES / "sglang_qwen3-8b_tp2_page64.log"


def run(*args: str, stdin: bytes | None = None):
    return CliRunner().invoke(main, list(args), input=stdin, catch_exceptions=False)


def report_of(text: str, **workload: int):
    tracker = BootTracker()
    tracker.add_all(e for e in scan_bytes(text.encode()) if not hasattr(e, "text"))
    opts = Options(workload=Workload(**workload)) if workload else Options()
    return build_sglang_report(tracker.current, opts, spec_resolver=resolve_spec)


ARGS = (
    "[2026-04-27 02:35:54] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', "
    "kv_cache_dtype='auto', page_size={page}, tp_size=1, pp_size=1, dp_size={dp})\n"
)


def test_boot_log_gives_612_users_with_the_arithmetic_shown() -> None:
    r = run(str(H100), "--prompt", "512", "--output", "128")
    assert r.exit_code == 0, r.stderr
    assert re.search(r"== vllm-logread: 612 users fit\b", r.stdout)
    assert re.search(r"\b680\b.*mid-answer", r.stdout)
    assert "391,815 slots // 640 = 612 users" in r.stdout
    # a page of one token: no "391,815 blocks of 1 tokens"
    assert "KV pool:      391,815 tokens (line 14); 53.8 GiB\n" in r.stdout
    assert "checks:       pass kv_bytes_per_token, pool_tokens" in r.stdout
    assert "server:       Qwen/Qwen3-8B, SGLang, 1 GPU" in r.stdout


def test_rank_tags_are_the_process() -> None:
    line = parse_line(
        "[2025-06-02 09:58:56 TP1] KV Cache is allocated. #tokens: 5, K size: 1.00 GB", 4
    )
    assert (line.process, line.message.split(".")[0]) == ("TP1", "KV Cache is allocated")
    line = parse_line("[2025-11-04 05:27:13 DP1 TP0 EP0] Decode batch, #running-req: 1", 9)
    assert line.process == "DP1 TP0 EP0"
    assert parse_line("[2025-11-04 05:27:13] Memory pool end. avail mem=1.00 GB", 1).process is None


def test_page_rounding_charges_whole_pages() -> None:
    out = json.loads(run(str(TP2), "--prompt", "500", "--output", "100", "--json").stdout)
    # 600 tokens = ceil(600 / 64) = 10 pages; 436,864 / 64 = 6,826 pages // 10 = 682,
    # where slots alone would give 436,864 // 600 = 728.
    assert (out["users"], out["workload"]["blocks_per_user"]) == (682, 10)


def test_no_null_block_the_padding_sits_beside_the_pool() -> None:
    text = ARGS.format(page=1, dp=1) + (
        "[2026-04-27 02:36:10] max_total_num_tokens=640, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=2, context_len=40960\n"
    )
    rep = report_of(text)
    # vLLM would lose a block to its null block; SGLang hands out slots 1..640: one user fits.
    assert (rep.users, rep.capacity.usable_blocks) == (1, 640)


def test_the_kv_line_covers_tokens_plus_one_page() -> None:
    text = ARGS.format(page=64, dp=1) + (
        "[2025-06-02 09:58:56] KV Cache is allocated. #tokens: 436864, K size: 15.00 GB, "
        "V size: 15.00 GB\n"
    )
    tracker = BootTracker()
    tracker.add_all(e for e in scan_bytes(text.encode()) if not hasattr(e, "text"))
    found = measured_bytes_per_token(tracker.current, 64)
    assert found is not None
    low, high, slots, _, _ = found
    assert slots == 436_928
    # (15.00 - 0.005) x 2 GiB / 436,928 and (15.00 + 0.005) x 2 GiB / 436,928
    assert (round(low), round(high)) == (73_700, 73_749)


def test_a_kv_line_that_does_not_fit_the_users_config_is_a_contradiction(
    tmp_path: Path,
) -> None:
    log = tmp_path / "fp8.log"
    # the pool of the H100 sample, but K and V of one byte per value (an FP8 cache the
    # server_args do not state): 13.45 GiB each is half of Qwen3-8B's bf16 bytes
    log.write_text(
        H100.read_text().replace(
            "K size: 26.90 GB, V size: 26.90 GB", "K size: 13.45 GB, V size: 13.45 GB"
        )
    )
    cfg = tmp_path / "config.json"
    cfg.write_text(
        json.dumps(
            {
                "model_type": "qwen3",
                "num_hidden_layers": 36,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "head_dim": 128,
                "hidden_size": 4096,
                "torch_dtype": "bfloat16",
            }
        )
    )
    r = run(str(log), "--explain", "--config", str(cfg))
    assert r.exit_code == 4
    assert "fail    kv_bytes_per_token" in r.stdout
    # The same shape read from the tool's own table is the tool's reading of the model,
    # not the log against itself (issue 27): users unknown, exit 0, and why.
    r = run(str(log), "--json")
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    assert out["users"] is None
    check = next(c for c in out["checks"] if c["name"] == "kv_bytes_per_token")
    assert check["status"] == "unknown"
    assert "the tool does not understand this model's KV layout for SGLang" in check["detail"]


def test_unknown_model_takes_its_bytes_from_the_kv_line(tmp_path: Path) -> None:
    log = tmp_path / "unknown.log"
    log.write_text(H100.read_text().replace("Qwen/Qwen3-8B", "acme/never-published-8b"))
    out = json.loads(run(str(log), "--json").stdout)
    # (147,407.39 + 147,462.20) / 2 = 147,434.79 -> 147,435
    assert out["kv_bytes_per_token"] == 147_435
    assert out["kv_bytes_per_token_source"].startswith("SGLang's KV Cache line (line 10)")
    assert out["users"] == 612


def test_older_tp_ranks_each_printing_the_scheduler_line_are_one_boot() -> None:
    text = TP2.read_text()
    line = next(x for x in text.splitlines() if "max_total_num_tokens=" in x)
    text = text.replace(line, line + "\n" + line.replace(" TP0]", " TP1]"))
    session = Session("-", Options(), spec_resolver=resolve_spec)
    session.feed(text.encode())
    session.finish()
    assert len(session.tracker.boots) == 1
    assert [r.users for r in results_of([session], all_boots=True)[0].reports] == [682]


def test_data_parallel_ranks_are_engines() -> None:
    sched = (
        "[2026-01-01 00:00:0{d} DP{d} TP0] max_total_num_tokens=64000, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=512, context_len=40960\n"
    )
    text = ARGS.format(page=1, dp=2) + sched.format(d=0) + sched.format(d=1)
    rep = report_of(text)
    # each DP rank: 64,000 // 640 = 100 users
    assert [(e.engine, e.users) for e in rep.engines] == [("DP0", 100), ("DP1", 100)]
    assert rep.users == 200


def test_max_running_requests_below_the_users_is_said() -> None:
    text = ARGS.format(page=1, dp=1) + (
        "[2026-04-27 02:36:10] max_total_num_tokens=64000, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=48, context_len=40960\n"
    )
    rep = report_of(text)
    # 64,000 // 640 = 100 fit in the pool, but SGLang runs 48 at once: the cap binds.
    assert (rep.users, rep.users_mid_answer) == (48, 48)
    assert any("at most 48 requests at once" in said(w) for w in rep.warnings)
    assert any("max_running_requests 48 (line 2) binds" in a for a in rep.arithmetic)


def test_a_page_size_the_backend_forces_is_the_block_size() -> None:
    text = (
        "[2026-05-24 00:52:39] TensorRT-LLM MHA only supports page_size of 16, 32 or 64, "
        "changing page_size from None to 64.\n"
        "[2026-05-24 00:52:40] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', page_size=64, tp_size=1)\n"
        "[2026-05-24 00:53:40] max_total_num_tokens=992896, chunked_prefill_size=16384, "
        "max_prefill_tokens=16384, max_running_requests=4096, context_len=40960\n"
    )
    rep = report_of(text, prompt_tokens=500, output_tokens=100)
    # 992,896 / 64 = 15,514 pages // 10 = 1,551
    assert (rep.block_size, rep.num_blocks, rep.users) == (64, 15_514, 1_551)


def test_pool_stated_without_a_page_size_uses_sglang_default_one() -> None:
    rep = report_of(
        "[2024-12-13 01:45:02 TP0] max_total_num_tokens=56524, max_prefill_tokens=16384, "
        "max_running_requests=2049, context_len=32768\n"
    )
    assert rep.block_size == 1 and rep.block_size_source.startswith("SGLang's default page_size")
    assert rep.users == 56524 // 640 == 88


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_through_a_pipe_the_decode_lines_after_the_report_are_the_load(chunk: int) -> None:
    """A live pipe: the report comes at the first line after the pool, and the
    decode stats that follow are still read (SGLang stays in boot mode)."""
    data = H100.read_bytes()
    session = Session("-", Options(), spec_resolver=resolve_spec, keep_all_facts=False)
    outs = []
    for i in range(0, len(data), chunk):
        outs += session.feed(data[i : i + chunk])
    outs += session.finish()
    assert [o.report.users for o in outs if o.kind == "report"] == [612]
    summary = session.load_of(session.last_boot)
    assert summary is not None
    assert (summary.num_stats_lines, summary.peak_running, summary.peak_waiting) == (3, 650, 76)
    # SGLang's words: it "retracts" a request when the pool is full.
    alerts = [o.text for o in outs if o.kind == "alert" and "first preemption" in o.text]
    assert alerts and alerts[0].endswith("(SGLang retracts and recomputes them)")
    assert "  preemptions:   0 printed by SGLang;" in summary_text(summary)


# -- the pool from "KV Cache is allocated" alone, the two pools of a sliding-window model,
#    and a start-up that failed after the pool (issue 27)

H100_LINES = H100.read_text().splitlines()
UP_TO_KV = H100_LINES[:10]  # to "KV Cache is allocated. #tokens: 391815, ..." (line 10)
assert "KV Cache is allocated" in UP_TO_KV[-1]


def test_the_kv_line_alone_is_the_pool(tmp_path: Path) -> None:
    # No scheduler line (a log cut after the pool, or a wording not read): SGLang sizes
    # its pool to exactly #tokens, 391,815 // 640 = 612 users, 391,815 // 576 = 680.
    log = tmp_path / "kv_only.log"
    log.write_text("\n".join(H100_LINES[:13]) + "\n")
    r = run(str(log), "--json", "--prompt", "512", "--output", "128")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["pool_tokens"], out["users"], out["users_mid_answer"]) == (391_815, 612, 680)
    assert "KV Cache is allocated, #tokens, line 10" in out["arithmetic"][0]


def test_the_2026_kv_line_states_its_dtype_and_is_the_pool() -> None:
    # SGLang 0.5.23 (mem_cache/memory_pool.py): "dtype: torch.bfloat16, " before #tokens.
    # 1,669,816 // 640 = 2,609 users (2,609 x 640 = 1,669,760); // 576 = 2,898.
    text = ARGS.format(page=1, dp=1).replace("Qwen/Qwen3-8B", "acme/unpublished") + (
        "[2026-04-27 02:36:06] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1669816, "
        "K size: 57.33 GB, V size: 57.33 GB\n"
    )
    rep = report_of(text)
    assert (rep.pool_tokens, rep.users, rep.users_mid_answer) == (1_669_816, 2_609, 2_898)
    assert rep.boot.value("kv_alloc_dtype") == "torch.bfloat16"


SWA = (
    "[2026-04-27 02:36:06] Use sliding window memory pool. full_layer_tokens={full}, "
    "swa_layer_tokens={swa}\n"
    "[2026-04-27 02:36:06] KV Cache is allocated. dtype: torch.bfloat16, #tokens: {full}, "
    "K size: 1.00 GB, V size: 1.00 GB\n"
    "[2026-04-27 02:36:06] KV Cache is allocated. dtype: torch.bfloat16, #tokens: {swa}, "
    "K size: 1.00 GB, V size: 1.00 GB\n"
)

# A model the tool does not know (its bytes per token come from the KV lines).
SWA_ARGS = ARGS.format(page=1, dp=1).replace("Qwen/Qwen3-8B", "acme/unpublished-swa")


def test_a_sliding_window_pool_that_cannot_bind_leaves_the_full_pool_exact() -> None:
    # Full pool 320,000 // 640 = 500 users; even if each kept all 640 tokens in the SWA
    # pool, 400,000 // 640 = 625 >= 500: the full pool binds, exactly.
    rep = report_of(SWA_ARGS + SWA.format(full=320_000, swa=400_000))
    assert (rep.pool_tokens, rep.users) == (320_000, 500)
    assert not rep.unknowns


def test_a_sliding_window_pool_that_may_bind_makes_the_users_a_range() -> None:
    # Full 400,000 // 640 = 625; SWA 320,000 // 640 = 500 if each kept all its tokens
    # there: between 500 and 625, settled by how much of its window SGLang keeps.
    rep = report_of(SWA_ARGS + SWA.format(full=400_000, swa=320_000))
    assert rep.pool_tokens == 400_000
    assert rep.users is None and rep.users_range == (500, 625)
    assert [u.name for u in rep.unknowns] == ["swa_pool"]


def test_two_kv_pools_without_a_line_saying_which_is_which_are_not_divided() -> None:
    text = SWA_ARGS + "".join(SWA.format(full=400_000, swa=320_000).splitlines(True)[1:])
    rep = report_of(text)
    assert rep.users is None
    assert any("several token pools (400,000, 320,000)" in said(w) for w in rep.warnings)


def test_a_scheduler_that_died_after_the_pool_serves_nobody(tmp_path: Path) -> None:
    crash = [
        "[2026-04-27 02:36:07] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sglang/srt/model_executor/cuda_graph_runner.py", line 400, in capture',
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.",
        "[2026-04-27 02:36:07] Received sigquit from a child process. It usually means the "
        "child failed.",
    ]
    log = tmp_path / "died.log"
    log.write_text("\n".join(H100_LINES[:12] + crash) + "\n")
    r = run(str(log), "--json", "--prompt", "512", "--output", "128")
    assert r.exit_code == 3
    out = json.loads(r.stdout)
    assert out["users"] == 0
    assert out["failure"]["line"] == 15  # the exception line
    assert "CUDA out of memory" in out["failure"]["cause"]
    assert out["failure"]["fix"] == [
        "fix the error printed above this line and start again; then this pool holds 612 users"
    ]


def test_an_fp8_cache_the_kv_line_states_is_read_as_fp8(tmp_path: Path) -> None:
    # The H100 sample with an FP8 cache that server_args leave at 'auto': the KV line's
    # dtype says it. Qwen3-8B in FP8: 36 x 8 x 128 x 1 B = 36,864 B of K per token, x
    # 391,816 slots = 14,443,806,720 B = 13.45 GiB each of K and V: the shape fits.
    log = tmp_path / "fp8.log"
    log.write_text(
        H100.read_text().replace(
            "KV Cache is allocated. #tokens: 391815, K size: 26.90 GB, V size: 26.90 GB",
            "KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 391815, "
            "K size: 13.45 GB, V size: 13.45 GB",
        )
    )
    r = run(str(log), "--json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["kv_cache_dtype"] == "fp8_e4m3" and out["kv_bytes_per_token"] == 73_728
    assert next(c for c in out["checks"] if c["name"] == "kv_bytes_per_token")["status"] == "pass"
    assert out["users"] == 612
