"""Generate vllm_logread/data/architectures.json from an unpacked vLLM wheel (run once per release).

    pip download --no-deps vllm==0.34.0 -d /tmp/vllm-src-0.34
    cd /tmp/vllm-src-0.34 && mkdir unpacked && cd unpacked && unzip -q ../vllm-0.34.0-*.whl
    python tools/gen_architectures.py /tmp/vllm-src-0.34/unpacked 0.34.0

It reads the model registry (``vllm/model_executor/models/registry.py``: the
text-generation, multimodal and speculative-decoding tables) with ``ast``
(never imports vLLM), then scans each architecture's model module (and the
modules it imports from the same package, one level deep) for:

* the attention kinds its layers can build (regexes on the class names vLLM's
  layers use: ``MambaMixer2``, ``GatedDeltaNet``, ``MultiHeadLatentAttention``...),
  a *static* reading: "can build", not "every config builds";
* the config fields it reads that shape the KV cache (``config.X``,
  ``getattr(config, "X")``, ``config["X"]``, ``.get("X")``, filtered by name).

The tool's own status of each architecture is NOT read from vLLM: it is the
hand-kept table ``STATUS`` below, each "verified" entry naming the test that
works its arithmetic out by hand (tests/kv/test_architectures.py checks that every
named test exists). The output is reviewed and committed; vLLM's code is not
copied, only names.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

TABLES = {
    "_TEXT_GENERATION_MODELS": "text-generation",
    "_MULTIMODAL_MODELS": "multimodal",
    "_SPECULATIVE_DECODING_MODELS": "drafter",
    # vLLM 0.34 serves some families (Gemma, OLMoE, StableLM) through the
    # Transformers backend only: still served, their layout from the config.
    "_TRANSFORMERS_SUPPORTED_MODELS": "text-generation",
}

# Layer constructions -> the kind of KV cache spec vLLM gives them (0.33).
KIND_PATTERNS: tuple[tuple[str, str], ...] = (
    ("full", r"\bAttention\(|\bAttentionLayer\(|RadixAttention|\bself\.attn\b"),
    ("sliding", r"sliding_window|SlidingWindow"),
    ("chunked", r"ChunkedLocalAttention|attention_chunk_size"),
    ("mla", r"MultiHeadLatentAttention|MLAAttention|kv_lora_rank"),
    ("sparse_mla_indexer", r"index_topk|SparseAttnIndexer|Indexer\("),
    ("sink", r"StaticSinkAttention|SinkFullAttention|sink_len"),
    ("mamba1", r"\bMambaMixer\("),
    ("mamba2", r"\bMambaMixer2\("),
    ("gated_delta_net", r"GatedDeltaNet"),
    ("kda", r"kda_state_shape|KimiGatedDeltaNet|KimiLinearGatedDeltaNet|KimiDeltaAttention"),
    ("short_conv", r"\bShortConv"),
    ("linear_attention", r"LinearAttention\(|linear_attention_state_shape|LightningAttention"),
    ("kv_sharing", r"kv_sharing_target_layer_name"),
    ("cross", r"CrossAttention\(|EncoderDecoder"),
    ("encoder_only", r"EncoderOnlyAttention"),
)

# Config field names that shape a KV cache: layer counts, KV heads, head sizes,
# windows, MLA ranks, state sizes, layer patterns.
KV_FIELD_RE = re.compile(
    r"^(num_hidden_layers|n_layers?|num_layers|num_key_value_heads|num_kv_heads|n_kv_heads|"
    r"multi_query_group_num|num_attention_heads|n_heads?|head_dim|kv_channels|hidden_size|d_model|"
    r".*_num_key_value_heads|.*_head_dim|.*head_size.*|v_head_dim|layer_types|"
    r".*sliding_window.*|.*window.*|attention_chunk_size|no_rope_layers?.*|"
    r"kv_lora_rank|q_lora_rank|qk_rope_head_dim|qk_nope_head_dim|index_.*|"
    r"linear_.*|mamba_.*|ssm_.*|.*conv_kernel.*|conv_.*|n_groups|.*state_size|expand|"
    r"hybrid_override_pattern|attn_layer_.*|full_attention_interval|.*layers_block_type.*|"
    r"num_kv_shared_layers|.*kv_shar.*|layer_block_types|block_configs|kda_layers|"
    r"full_attn_layers|.*attn_type.*|attention_type.*|.*global.*|.*swa.*|"
    r"num_nextn_predict_layers|.*mtp.*|use_mla|attention_k_eq_v|.*kv_heads.*)$"
)

FIELD_PATTERNS = (
    re.compile(r"config\.([a-z_][a-z0-9_]*)"),
    re.compile(r"getattr\(\s*[\w.]*config[\w.]*\s*,\s*[\"']([a-z_][a-z0-9_]*)[\"']"),
    re.compile(r"config\[\s*[\"']([a-z_][a-z0-9_]*)[\"']\s*\]"),
    re.compile(r"config\.get\(\s*[\"']([a-z_][a-z0-9_]*)[\"']"),
    re.compile(r"hasattr\(\s*[\w.]*config[\w.]*\s*,\s*[\"']([a-z_][a-z0-9_]*)[\"']"),
)

# The tool's status, by hand: "verified" names the test that works out this
# architecture's bytes by hand; "modelled" = the tool has a rule for its layout
# but no hand-worked test (never exact on its own); absent = "not verified".
VERIFIED: dict[str, str] = {
    "LlamaForCausalLM": "tests/kv/test_shipped_table.py::test_llama_2",
    "MistralForCausalLM": "tests/kv/test_kvspec.py::test_reference_bytes_per_token",
    "MixtralForCausalLM": "tests/kv/test_architectures.py::test_mixtral",
    "Qwen2ForCausalLM": "tests/kv/test_architectures.py::test_qwen2_5",
    "Qwen2_5_VLForConditionalGeneration": "tests/kv/test_kvspec.py::test_reference_bytes_per_token",
    "Qwen3ForCausalLM": "tests/kv/test_kvspec.py::test_reference_bytes_per_token",
    "Qwen3MoeForCausalLM": "tests/kv/test_kvspec.py::test_reference_bytes_per_token",
    "Qwen3NextForCausalLM": "tests/kv/test_kvspec.py::test_reference_bytes_per_token",
    "Qwen3_5ForConditionalGeneration": "tests/kv/test_architectures.py::test_qwen3_5",
    "Qwen3_5MoeForConditionalGeneration": "tests/kv/test_architectures.py::test_qwen3_5_moe",
    "DeepseekV3ForCausalLM": "tests/kv/test_kvspec.py::test_reference_bytes_per_token",
    "DeepseekV32ForCausalLM": "tests/kv/test_architectures.py::test_deepseek_v3_2",
    "Gemma2ForCausalLM": "tests/kv/test_kvspec.py::test_reference_bytes_per_token",
    "Gemma3ForCausalLM": "tests/kv/test_kvspec.py::test_sliding_pattern_gemma3",
    "Gemma3ForConditionalGeneration": "tests/kv/test_kvspec.py::test_sliding_pattern_gemma3",
    "Gemma3nForCausalLM": "tests/kv/test_architectures.py::test_gemma_3n",
    "Gemma3nForConditionalGeneration": "tests/kv/test_architectures.py::test_gemma_3n",
    "Phi3ForCausalLM": "tests/kv/test_shipped_table.py::test_phi_3_mini",
    "FalconForCausalLM": "tests/kv/test_kvspec.py::test_reference_bytes_per_token",
    "JambaForCausalLM": "tests/kv/test_shipped_table.py::test_jamba",
    "NemotronHForCausalLM": "tests/kv/test_kvspec.py::test_reference_bytes_per_token",
    "GptOssForCausalLM": "tests/kv/test_kvspec.py::test_reference_bytes_per_token",
    "Llama4ForCausalLM": "tests/kv/test_shipped_table.py::test_llama_4",
    "Llama4ForConditionalGeneration": "tests/kv/test_shipped_table.py::test_llama_4",
    "KimiLinearForCausalLM": "tests/kv/test_architectures.py::test_kimi_linear",
    "MiniMaxM2ForCausalLM": "tests/kv/test_architectures.py::test_minimax_m2",
    "Glm4MoeForCausalLM": "tests/kv/test_architectures.py::test_glm_4_6",
    "GraniteMoeHybridForCausalLM": "tests/kv/test_kvspec.py::test_mamba2_hybrids_nemotron_and_granite",
    "RicursiveForCausalLM": "tests/kv/test_architectures.py::test_ricursive_0_34_log",
}

# Layouts build.py has a rule for (read by model_type), not worked by hand.
MODELLED: frozenset[str] = frozenset(
    {
        "Qwen3_5ForCausalLM",
        "Qwen3_5MoeForCausalLM",
        "Qwen2MoeForCausalLM",
        "DeepseekV2ForCausalLM",
        "GemmaForCausalLM",
        "Gemma4ForCausalLM",
        "Gemma4ForConditionalGeneration",
        "Cohere2ForCausalLM",
        "DeciLMForCausalLM",
        "BambaForCausalLM",
        "BailingMoeV2_5ForCausalLM",
        "Glm4MoeLiteForCausalLM",
        "GlmMoeDsaForCausalLM",
        "MiMoV2FlashForCausalLM",
        "MiMoV2ForCausalLM",
        "Mistral3ForConditionalGeneration",
        "Ministral3ForCausalLM",
        "LLaMAForCausalLM",
        "InternLM3ForCausalLM",
        "Qwen2VLForConditionalGeneration",
        "Qwen3VLForConditionalGeneration",
        "Qwen3VLMoeForConditionalGeneration",
    }
)


def _load_registry(root: Path) -> dict[str, tuple[str, str, str]]:
    tree = ast.parse((root / "vllm/model_executor/models/registry.py").read_text())
    out: dict[str, tuple[str, str, str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name) or target.id not in TABLES:
            continue
        table = ast.literal_eval(node.value)
        for arch, (module, cls) in table.items():
            role = TABLES[target.id]
            if module == "transformers" and arch.endswith("ForConditionalGeneration"):
                role = "multimodal"
            out.setdefault(arch, (role, module, cls))
    return out


def _module_files(root: Path, module: str) -> list[Path]:
    if module.startswith("vllm."):
        base = root / Path(*module.split("."))
    else:
        base = root / "vllm/model_executor/models" / module
    if base.with_suffix(".py").is_file():
        return [base.with_suffix(".py")]
    if base.is_dir():
        return sorted(base.rglob("*.py"))
    return []


_IMPORT_RE = re.compile(r"^from (?:\.|vllm\.model_executor\.models\.)(\w+) import", re.M)
# The state layers' modules (gated delta net, KDA, Mamba mixers, short conv) read
# the config fields that size the state: follow those imports too.
_LAYER_IMPORT_RE = re.compile(r"^from vllm\.model_executor\.layers\.mamba(\.[\w.]+)? import", re.M)


def _sources(root: Path, module: str) -> tuple[str, str, list[str]]:
    """The model's code (its module and the model modules it imports) and, apart, the
    state layers' modules it imports (their fields count; their kinds would not: every
    model imports the shared shape calculator)."""
    files = _module_files(root, module)
    text = "\n".join(p.read_text(errors="replace") for p in files)
    seen = {p.stem for p in files}
    models_dir = root / "vllm/model_executor/models"
    for name in _IMPORT_RE.findall(text):
        p = models_dir / f"{name}.py"
        if name not in seen and p.is_file() and name not in ("utils", "interfaces", "registry"):
            seen.add(name)
            text += "\n" + p.read_text(errors="replace")
    mamba_dir = root / "vllm/model_executor/layers/mamba"
    layers = ""
    for sub in sorted(set(_LAYER_IMPORT_RE.findall(text))):
        base = mamba_dir / Path(*sub.strip(".").split(".")) if sub else mamba_dir
        if base.with_suffix(".py").is_file() and base.name != "mamba_utils":
            layers += "\n" + base.with_suffix(".py").read_text(errors="replace")
    rel = [str(p.relative_to(root)) for p in files]
    return text, layers, rel


def _entry(arch: str, role: str, module: str, cls: str, root: Path) -> dict[str, Any]:
    text, layers, files = _sources(root, module)
    kinds = [kind for kind, rx in KIND_PATTERNS if re.search(rx, text)]
    fields: set[str] = set()
    for rx in FIELD_PATTERNS:
        fields.update(f for f in rx.findall(text + layers) if KV_FIELD_RE.match(f))
    if arch in VERIFIED:
        status, test = "verified", VERIFIED[arch]
    elif arch in MODELLED:
        status, test = "modelled", None
    else:
        status, test = "not verified", None
    entry: dict[str, Any] = {
        "role": role,
        "module": module,
        "class": cls,
        "source_files": files,
        "attention_kinds": kinds,
        "kv_config_fields": sorted(fields),
        "status": status,
    }
    if test:
        entry["verified_by"] = test
    if module == "transformers":
        entry["note"] = "served by vLLM's Transformers backend (no model module of its own)"
    elif not files:
        entry["note"] = "module not found in the wheel (out-of-tree or transformers backend)"
    return entry


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    root, version = Path(argv[1]), argv[2]
    registry = _load_registry(root)
    archs = {
        arch: _entry(arch, role, module, cls, root)
        for arch, (role, module, cls) in sorted(registry.items())
    }
    missing = sorted(set(VERIFIED) - set(archs))
    if missing:
        print(f"verified but not in vLLM {version}'s registry: {missing}", file=sys.stderr)
        return 1
    data = {
        "description": (
            f"Every architecture in vLLM {version}'s model registry (text generation, "
            "multimodal, speculative-decoding drafters), with the attention kinds its model "
            "code can build and the config fields it reads that shape the KV cache (a static "
            "reading of the source by tools/gen_architectures.py), and this tool's status: "
            "'verified' (a test works its bytes out by hand: verified_by), 'modelled' (a "
            "layout rule, no hand-worked test), 'not verified'. Only a verified architecture "
            "can give exact users without the log's own figures settling them."
        ),
        "vllm_version": version,
        "architectures": archs,
    }
    out = Path(__file__).resolve().parent.parent / "vllm_logread" / "data" / "architectures.json"
    out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    counts: dict[str, int] = {}
    for e in archs.values():
        counts[e["status"]] = counts.get(e["status"], 0) + 1
    print(f"{len(archs)} architectures -> {out}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
