"""--workload on hybrid boots, worked by hand (review): each request charged its
own blocks group by group, at the peak of a sliding group."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from vllm_logread.cli.commands import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
MIX = "prompt_tokens,output_tokens,count\n100,28,5\n1000,200,4\n4000,400,1\n"


def users(log: str, tmp_path: Path, *extra: str) -> dict[str, Any]:
    path = tmp_path / "mix.csv"
    path.write_text(MIX)
    r = CliRunner().invoke(main, [str(SAMPLES / log), "--workload", str(path), "--json", *extra])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    return report["reports"][0] if "reports" in report else report


def mix_of(report: dict[str, Any]) -> dict[str, Any]:
    return report["workload"]["mix"]


def test_gpt_oss_20b_mix_by_hand(tmp_path: Path) -> None:
    # gpt-oss-20b (vLLM 0.24): 150,466 blocks of 16, 2 groups (12 full, 12
    # sliding W = 128); requests of 128, 1,200 and 4,400 tokens. Full: cdiv(L, 16)
    # = 8, 75, 275; sliding, its peak min(cdiv(L, 16), cdiv(127, 16) + 1 = 9) =
    # 8, 9, 9. Per request 16, 84, 284: 5 x 16 + 4 x 84 + 284 = 700 blocks for
    # 10 requests; (150,466 - 1) x 10 // 700 = 1,504,650 // 700 = 2,149 users.
    # Mid-answer (prompt + output // 2 = 114, 1,100, 4,200): 8 + 8, 69 + 9,
    # 263 + 9 = 16, 78, 272: 80 + 312 + 272 = 664 -> 1,504,650 // 664 = 2,266.
    # The longest: 150,465 // 284 = 529; the shortest: 150,465 // 16 = 9,404.
    # (Each request holds P + O - 1 tokens: 127, 1,199, 4,399 and 113, 1,099,
    # 4,199 mid-answer; the same blocks.) max_num_seqs, not in the log, is 256 or
    # 1,024 by the card: at least 256 run at once.
    r = users("hybrid_gpt_oss_20b_v0_24.log", tmp_path)
    assert r["answer"]["pool_users"] == 2_149 and r["answer"]["pool_users_mid_answer"] == 2_266
    assert r["users"] == 256 and r["users_mid_answer"] == 256
    mix = mix_of(r)
    assert mix["blocks_total"] == 700 and mix["mean_blocks_mid_answer"] == 66.4  # 664 / 10
    assert mix["spread"]["users_longest"] == 529 and mix["spread"]["users_shortest"] == 9_404


def test_gemma3_27b_mix_by_hand(tmp_path: Path) -> None:
    # Gemma 3 27B: 62 layers = 10 full + 52 sliding (W = 1,024) in 7 groups of
    # 10 (1 full, 6 sliding), blocks of 16; the pool 29,760 tokens = 13,020 to
    # 13,026 blocks (the lower used). Full: 8, 75, 275; each sliding group
    # min(cdiv(L, 16), cdiv(1,023, 16) + 1 = 65) = 8, 65, 65. Per request
    # 8 + 6 x 8 = 56, 75 + 390 = 465, 275 + 390 = 665: 5 x 56 + 4 x 465 + 665 =
    # 280 + 1,860 + 665 = 2,805; (13,020 - 1) x 10 // 2,805 = 130,190 // 2,805 =
    # 46 users. Mid-answer: 56, 69 + 390 = 459, 263 + 390 = 653: 280 + 1,836 +
    # 653 = 2,769 -> 130,190 // 2,769 = 47.
    r = users("hybrid_gemma3_27b.log", tmp_path)
    assert r["users"] == 46 and r["users_mid_answer"] == 47
    assert mix_of(r)["blocks_total"] == 2_805


def test_a_shared_prefix_on_a_sliding_model_changes_nothing(tmp_path: Path) -> None:
    # Not modelled for sliding groups: the pool's users are the 2,149 above, and it says so.
    r = users("hybrid_gpt_oss_20b_v0_24.log", tmp_path, "--shared-prefix", "64")
    assert r["answer"]["pool_users"] == 2_149
    assert "not counted" in json.dumps(r["workload"])
