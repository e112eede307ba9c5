"""vLLM's KV cache dtypes (``--kv-cache-dtype``): the bytes a token and head take.

vLLM's ``config/cache.py: CacheDType`` lists the accepted values; 0.31 has 18,
0.32 adds ``ultraquant_4bit``, 0.33 the ROCm ``octave_*`` ones. The bytes per
token and KV head (K and V together) follow vLLM's spec and backends
(``customize_spec``). With head size 128 (K and V):

* auto / bfloat16 / float16: (128 + 128) x 2 = 512 B;
* fp8, fp8_e4m3, fp8_e5m2, fp8_inc: (128 + 128) x 1 = 256 B (per-tensor scales);
* int8_per_token_head, fp8_per_token_head: 256 + 8 (two fp32 scales) = 264 B;
* int4_per_token_head: 64 + 64 + 8 = 136 B;
* nvfp4, nvfp4_4over6: per side hs / 2 + hs / 16 (fp4 data + an fp8 scale per 16):
  (64 + 8) x 2 = 144 B;
* turboquant presets (key bits, value bits): key = hd at 8 bits, else
  ceil(hd x bits / 8) + 2; value ceil(hd x bits / 8) + 4; the sum rounded up to
  even: k8v4 128 + 68 = 196, 4bit_nc 66 + 68 = 134, k3v4_nc 50 + 68 = 118,
  3bit_nc 50 + 52 = 102;
* ultraquant_4bit (0.32+): per side hd / 2 + hd / 32: (64 + 4) x 2 = 136 B.

MLA keeps one latent: fp8_ds_mla 656 B and nvfp4_ds_mla 352 B per token, the
per-token-head modes ``latent x bytes + 8`` (576 -> 584; int4: 288 + 8 = 296).
A dtype vLLM accepts but this tool does not size (octave_*, a plugin's) is
"unknown": :class:`~vllm_logread.errors.ConfigError` naming it, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from ..vllm.rules import NEWEST_CHECKED, Feature, supports
from ..vllm.versions import Version, cdiv


@dataclass(frozen=True, slots=True, kw_only=True)
class KVDType:
    """One ``--kv-cache-dtype`` value as vLLM stores it.

    Attributes:
        name: vLLM's name.
        element_bytes: bytes per stored element (0: the model dtype's, "auto").
        first_version: the Feature row of the first vLLM version that accepts
            it (audited from Feature.KV_DTYPES on).
        is_mla_only: only MLA layers can use it (fp8_ds_mla, nvfp4_ds_mla).
        is_modelled: the tool sizes its pages.
    """

    name: str
    element_bytes: int
    first_version: Feature = Feature.KV_DTYPES
    is_mla_only: bool = False
    is_modelled: bool = True


def _dtype(name: str, element_bytes: int, **kw: object) -> tuple[str, KVDType]:
    return name, KVDType(name=name, element_bytes=element_bytes, **kw)  # type: ignore[arg-type]


# vLLM 0.31-0.33's CacheDType (config/cache.py). "auto" is the model dtype.
KV_CACHE_DTYPES: dict[str, KVDType] = dict(
    [
        _dtype("auto", 0),
        _dtype("float16", 2),
        _dtype("bfloat16", 2),
        _dtype("fp8", 1),
        _dtype("fp8_e4m3", 1),
        _dtype("fp8_e5m2", 1),
        _dtype("fp8_inc", 1),
        _dtype("fp8_ds_mla", 1, is_mla_only=True),
        _dtype("nvfp4_ds_mla", 1, is_mla_only=True),
        _dtype("turboquant_k8v4", 1),
        _dtype("turboquant_4bit_nc", 1),
        _dtype("turboquant_k3v4_nc", 1),
        _dtype("turboquant_3bit_nc", 1),
        _dtype("int4_per_token_head", 1),
        _dtype("int8_per_token_head", 1),
        _dtype("fp8_per_token_head", 1),
        _dtype("nvfp4", 1),
        _dtype("nvfp4_4over6", 1),
        _dtype("ultraquant_4bit", 1, first_version=Feature.KV_DTYPES_ULTRAQUANT),
        _dtype("octave_k3v4", 1, first_version=Feature.KV_DTYPES_OCTAVE, is_modelled=False),
        _dtype("octave_k3v3", 1, first_version=Feature.KV_DTYPES_OCTAVE, is_modelled=False),
        _dtype("octave_k3v3_compact", 1, first_version=Feature.KV_DTYPES_OCTAVE, is_modelled=False),
    ]
)


# Older spellings vLLM has accepted ("half" before 0.31).
_ALIASES = {"half": "float16"}


_TURBOQUANT_BITS = {
    "turboquant_k8v4": (8, 4),
    "turboquant_4bit_nc": (4, 4),
    "turboquant_k3v4_nc": (3, 4),
    "turboquant_3bit_nc": (3, 3),
}


def kv_dtype(name: str, *, vllm_version: Version | None = None) -> KVDType:
    """The dtype named by ``--kv-cache-dtype``, or ConfigError ("unknown").

    >>> kv_dtype("fp8_e4m3").element_bytes, kv_dtype("half").name
    (1, 'float16')
    """
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    found = KV_CACHE_DTYPES.get(key)
    if found is None:
        known = ", ".join(KV_CACHE_DTYPES)
        raise ConfigError(
            f"unknown kv_cache_dtype {name!r}: not a vLLM "
            f"{Feature.KV_DTYPES.value.since.minor}-{NEWEST_CHECKED} cache dtype ({known}); "
            "a platform plugin's dtype is not modelled"
        )
    if not supports(vllm_version, found.first_version):
        raise ConfigError(
            f"kv_cache_dtype {found.name!r} exists from vLLM "
            f"{found.first_version.value.since}, not in {vllm_version}"
        )
    if not found.is_modelled:
        raise ConfigError(
            f"kv_cache_dtype {found.name!r}: unknown - vLLM accepts it (ROCm octave "
            "packing) but this tool does not size its pages"
        )
    return found


def _even(n: int) -> int:
    return n + (n % 2)


def attention_content_bytes(
    dtype: KVDType, *, head_size: int, head_size_v: int, model_dtype_bytes: int
) -> int | None:
    """Bytes of one token and one KV head, K and V, or None for the plain formula.

    None means ``(head_size + head_size_v) x element bytes``; a packed dtype
    returns its own count. Head size 128: int8_per_token_head 264, nvfp4 144,
    turboquant_k8v4 196.

    >>> kv = kv_dtype("turboquant_k8v4")
    >>> attention_content_bytes(kv, head_size=128, head_size_v=128, model_dtype_bytes=2)
    196
    """
    name = dtype.name
    if dtype.is_mla_only:
        raise ConfigError(f"kv_cache_dtype {name} applies to MLA models only")
    if name in ("int8_per_token_head", "fp8_per_token_head"):
        return head_size + head_size_v + 8
    if name == "int4_per_token_head":
        return head_size // 2 + head_size_v // 2 + 8
    if name in ("nvfp4", "nvfp4_4over6"):
        return head_size // 2 + head_size // 16 + head_size_v // 2 + head_size_v // 16
    if name in _TURBOQUANT_BITS:
        k_bits, v_bits = _TURBOQUANT_BITS[name]
        key = head_size if k_bits == 8 else cdiv(head_size * k_bits, 8) + 2
        value = cdiv(head_size_v * v_bits, 8) + 4
        return _even(key + value)
    if name == "ultraquant_4bit":
        return (head_size // 2 + head_size // 32) + (head_size_v // 2 + head_size_v // 32)
    return None


# MLA caches that pack the whole latent (bytes per token).
MLA_PACKED_BYTES = {"fp8_ds_mla": 656, "nvfp4_ds_mla": 352}


def mla_content_bytes(dtype: KVDType, *, latent_size: int) -> int | None:
    """Bytes of one token's latent when the dtype packs it, else None (plain).

    >>> mla_content_bytes(kv_dtype("int8_per_token_head"), latent_size=576)
    584
    """
    name = dtype.name
    if name in MLA_PACKED_BYTES:
        return MLA_PACKED_BYTES[name]
    if name in ("int8_per_token_head", "fp8_per_token_head"):
        return latent_size + 8
    if name == "int4_per_token_head":
        return latent_size // 2 + 8
    if name in ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc"):
        return None
    raise ConfigError(
        f"kv_cache_dtype {name!r} on MLA layers: unknown - this tool does not size "
        "that packing for a latent cache"
    )
