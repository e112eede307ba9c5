"""Where a config comes from: a path, the HF cache, the shipped table."""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from ..errors import ConfigError
from ..jsontypes import JSONObject, JSONValue, as_object
from .build import spec_from_config
from .specs import KVSpec

TABLE_SOURCE = "shipped table (vllm_logread/data/models.json)"


# A config.json is a few KiB (DeepSeek-V3: 1.7 KiB); 5 MiB is far past any
# real one and keeps a hostile file from eating memory.
MAX_CONFIG_BYTES = 5 * 1024 * 1024


MAX_CONFIG_DEPTH = 32


_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")

# The hub cache's layout (what find_cached_config looks in), read backwards:
# ``.../hub/models--ORG--NAME/snapshots/<commit>`` is the repo ORG/NAME.
_SNAPSHOT_RE = re.compile(r"(?:^|/)models--([^/]+?)--([^/]+)/snapshots/[0-9a-f]{6,64}/?$")


def repo_of_snapshot(path: str) -> str | None:
    """The repo id of a local HF-cache snapshot folder (vLLM names such a model by it).

    >>> repo_of_snapshot("/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/" + "ab" * 20)
    'Qwen/Qwen3-8B'
    >>> repo_of_snapshot("Qwen/Qwen3-8B") is None
    True
    """
    m = _SNAPSHOT_RE.search(path)
    return None if m is None else f"{m.group(1)}/{m.group(2)}"


def load_config(path_or_folder: str | os.PathLike[str]) -> JSONObject:
    """Read a config.json file, or the config.json in a model folder.

    Raises:
        ConfigError: missing, over 5 MiB, not UTF-8 JSON, nested too deeply,
            or not a JSON object.
    """
    try:
        path = Path(path_or_folder).expanduser()
    except RuntimeError as err:  # "~nobody/config.json": no such home directory
        raise ConfigError(f"cannot read model config {str(path_or_folder)!r}: {err}") from None
    if path.is_dir():
        path = path / "config.json"
    try:
        size = path.stat().st_size
    except OSError as err:
        raise ConfigError(f"cannot read model config {str(path)!r}: {err.strerror}") from err
    if not path.is_file():
        raise ConfigError(f"model config {str(path)!r} is not a file")
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"model config {str(path)!r} is {size:,} bytes; refusing files over "
            f"{MAX_CONFIG_BYTES:,} bytes (a config.json is a few KiB)"
        )
    try:
        raw = path.read_bytes()[: MAX_CONFIG_BYTES + 1]
    except OSError as err:
        raise ConfigError(f"cannot read model config {str(path)!r}: {err.strerror}") from err
    return parse_config_text(raw, name=str(path))


def parse_config_text(raw: bytes | str, *, name: str = "config.json") -> JSONObject:
    """Parse config.json text with the size and depth limits of :func:`load_config`.

    >>> parse_config_text('{"num_hidden_layers": 2}')
    {'num_hidden_layers': 2}
    """
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"model config {name!r} is over {MAX_CONFIG_BYTES:,} bytes")
    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
        data = json.loads(text)
    except UnicodeDecodeError as err:
        raise ConfigError(f"model config {name!r} is not UTF-8 text") from err
    except RecursionError as err:
        raise ConfigError(f"model config {name!r} is nested too deeply") from err
    except ValueError as err:
        raise ConfigError(f"model config {name!r} is not valid JSON: {err}") from err
    if not isinstance(data, dict):
        raise ConfigError(f"model config {name!r} is not a JSON object")
    _check_depth(data, name)
    return data


def _check_depth(data: object, name: str) -> None:
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_CONFIG_DEPTH:
            raise ConfigError(
                f"model config {name!r} is nested over {MAX_CONFIG_DEPTH} levels deep"
            )
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def _hub_cache_root() -> Path:
    """$HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


def _split_model_name(model: str) -> tuple[str | None, str] | None:
    """``"ORG/NAME"`` -> ("ORG", "NAME"); ``"NAME"`` -> (None, "NAME"); else None."""
    parts = model.strip().split("/")
    if len(parts) == 1 and _NAME_RE.match(parts[0]):
        return None, parts[0]
    if len(parts) == 2 and all(_NAME_RE.match(p) for p in parts):
        return parts[0], parts[1]
    return None


def find_cached_config(model: str) -> Path | None:
    """The config.json of ``model`` in the offline Hugging Face cache, or None.

    Looks in ``models--ORG--NAME/snapshots/*/config.json`` under the hub cache,
    preferring the snapshot that ``refs/main`` names, then the newest one. The
    folder is matched exactly, then ignoring case (the Hub's ids are
    case-insensitive). Never touches the network.
    """
    split = _split_model_name(model)
    if split is None:
        return None
    org, name = split
    folder_name = f"models--{org}--{name}" if org else f"models--{name}"
    root = _hub_cache_root()
    repo = root / folder_name
    try:
        if not repo.is_dir():
            wanted = folder_name.lower()
            matches = [p for p in root.iterdir() if p.name.lower() == wanted and p.is_dir()]
            if not matches:
                return None
            repo = sorted(matches)[0]
        snapshots = repo / "snapshots"
        ref = repo / "refs" / "main"
        if ref.is_file():
            commit = ref.read_text(encoding="utf-8", errors="replace").strip()[:100]
            if _NAME_RE.match(commit):
                candidate = snapshots / commit / "config.json"
                if candidate.is_file():
                    return candidate
        if not snapshots.is_dir():
            return None
        found = [p / "config.json" for p in snapshots.iterdir() if (p / "config.json").is_file()]
    except OSError:
        return None
    if not found:
        return None
    return max(found, key=lambda p: (p.stat().st_mtime, str(p)))


@functools.cache
def _table_text() -> str:
    """models.json's text, read and checked (size, depth, a JSON object) once a
    process: a report on one boot looks the table up about nine times (its
    spec, each what-if), and the check walks every node (0.6 ms of 0.8)."""
    # Beside this module in every install (wheel, sdist, editable); importlib's
    # MultiplexedPath under an editable install cannot join two parts at once.
    try:
        text = (Path(__file__).resolve().parent.parent / "data" / "models.json").read_text(
            encoding="utf-8"
        )
    except OSError as err:  # pragma: no cover - packaging error
        raise ConfigError(f"the shipped model table is missing: {err}") from err
    parse_config_text(text, name="vllm_logread/data/models.json")
    return text


def _load_table() -> JSONObject:
    # A new object each call (0.3 ms): a caller may keep or change what it gets.
    data: JSONObject = json.loads(_table_text())  # _table_text checked it is an object
    models = data.get("models")
    if not isinstance(models, dict):
        raise ConfigError("the shipped model table has no 'models' object")
    return models


def table_models() -> list[str]:
    """Every model name the shipped table knows."""
    return sorted(_load_table())


def table_entry(model: str) -> tuple[str, JSONObject] | None:
    """The table's (name, config) for ``model``, or None.

    Matches ``ORG/NAME`` exactly, then ignoring case, then by its last path
    component (a bare ``NAME`` or a local path such as ``/models/Qwen3-8B``)
    against the entries' NAME, when that names one model shape.
    """
    models = _load_table()
    wanted = model.strip().rstrip("/\\")
    key: str | None = wanted if wanted in models else None
    if key is None:
        lower = {k.lower(): k for k in models}
        key = lower.get(wanted.lower())
    if key is None:
        base = re.split(r"[/\\]", wanted)[-1].lower()
        hits = [k for k in models if k.split("/")[-1].lower() == base]
        shapes = {json.dumps(_resolve_entry(models, k)[1], sort_keys=True) for k in hits}
        if hits and len(shapes) == 1:
            key = sorted(hits)[0]
    if key is None:
        return None
    return _resolve_entry(models, key)


def _resolve_entry(models: Mapping[str, JSONValue], key: str) -> tuple[str, JSONObject]:
    entry = models[key]
    seen = {key}
    while isinstance(entry, dict) and "same_as" in entry:
        target = entry["same_as"]
        if not isinstance(target, str) or target in seen or target not in models:
            raise ConfigError(f"shipped table: bad same_as for {key!r}")
        seen.add(target)
        entry = models[target]
    config = entry.get("config") if isinstance(entry, dict) else None
    if not isinstance(config, dict):
        raise ConfigError(f"shipped table: entry {key!r} has no config")
    return key, config


def resolve_spec(
    model: str | None,
    *,
    config: str | os.PathLike[str] | None = None,
    tensor_parallel_size: int = 1,
    pipeline_parallel_size: int = 1,
    kv_cache_dtype: str = "auto",
    dtype: str | None = None,
) -> KVSpec | None:
    """The KV spec for a model, from the best offline source, or None.

    Order: ``config`` if given (ConfigError if unreadable); else ``model`` as a
    local folder or config.json path; else the Hugging Face cache; else the
    shipped table by name; else None.
    """

    def spec(data: Mapping[str, JSONValue], source: str, source_kind: str) -> KVSpec:
        return spec_from_config(
            data,
            model=model,
            source=source,
            source_kind=source_kind,
            tensor_parallel_size=tensor_parallel_size,
            pipeline_parallel_size=pipeline_parallel_size,
            kv_cache_dtype=kv_cache_dtype,
            dtype=dtype,
        )

    if config is not None:
        path = Path(config).expanduser()
        path = path / "config.json" if path.is_dir() else path
        data = load_config(path)
        try:
            return spec(data, f"config.json at {path}", "config")
        except ConfigError as err:
            # The file the user gave, named: '{}' says "no num_hidden_layers ... in the config".
            raise ConfigError(f"{path}: {err}") from err
    if not model:
        return None
    try:
        local = Path(model).expanduser()
        local_cfg = local / "config.json" if local.is_dir() else local
        is_local = local_cfg.is_file() and (local.is_dir() or local.suffix == ".json")
    except (OSError, RuntimeError, ValueError):  # "~nobody/x": no such home; a NUL byte
        is_local = False
    if is_local:
        return spec(load_config(local_cfg), f"config.json at {local_cfg}", "config")
    cached = find_cached_config(model)
    if cached is not None:
        return spec(load_config(cached), f"Hugging Face cache (offline): {cached}", "hf-cache")
    entry = table_entry(model)
    if entry is not None:
        key, table_config = entry
        src = TABLE_SOURCE if key == model else f"{TABLE_SOURCE}, entry {key}"
        return spec(table_config, src, "table")
    return None


def spec_for_argument(
    model_or_config: str,
    *,
    tensor_parallel_size: int = 1,
    pipeline_parallel_size: int = 1,
    kv_cache_dtype: str = "auto",
    dtype: str | None = None,
) -> KVSpec:
    """:func:`resolve_spec` for a CLI argument that is a model name or a config path.

    Raises:
        ConfigError: nothing offline knows the model.
    """
    spec = resolve_spec(
        model_or_config,
        tensor_parallel_size=tensor_parallel_size,
        pipeline_parallel_size=pipeline_parallel_size,
        kv_cache_dtype=kv_cache_dtype,
        dtype=dtype,
    )
    if spec is None:
        raise ConfigError(missing_config_message(model_or_config))
    return spec


def is_same_model(given: str, logged: str) -> bool:
    """Whether ``--model``'s name and the name a log states are one model: the
    same ``ORG/NAME`` or last path component ignoring case (a log's local path
    ``/models/Qwen3-8B`` is ``Qwen/Qwen3-8B``), or one entry of the shipped table.

    >>> is_same_model("Qwen/Qwen3-8B", "/models/qwen3-8b"), is_same_model("Qwen/Qwen3-8B", "x/y")
    (True, False)
    """
    a, b = given.strip().rstrip("/\\"), logged.strip().rstrip("/\\")
    if (
        a.lower() == b.lower()
        or re.split(r"[/\\]", a)[-1].lower() == re.split(r"[/\\]", b)[-1].lower()
    ):
        return True
    ea, eb = table_entry(a), table_entry(b)
    return ea is not None and eb is not None and ea[0] == eb[0]


def check_model_name(model: str) -> None:
    """``--model NAME``, known offline (a config path or folder, the Hugging Face
    cache, the shipped table) before any input is read.

    Raises:
        ConfigError: nothing offline knows it (the close names, how to fetch it).
    """
    if config_for_argument(model) is None:
        raise ConfigError(missing_config_message(model))


def close_model_names(model: str) -> list[str]:
    """The shipped table's models whose names are close to ``model``, best first:
    a name that starts with it (a suffix such as ``-it`` or ``-Instruct`` left
    off), then by difflib's ratio of the whole ``ORG/NAME`` or of ``NAME`` alone.

    >>> close_model_names("google/gemma-3-27b")[0]
    'google/gemma-3-27b-it'
    >>> close_model_names("qwen3-8b-instruct")[0]
    'Qwen/Qwen3-8B'
    """
    import difflib

    wanted = model.strip().rstrip("/\\").lower()
    tail = re.split(r"[/\\]", wanted)[-1]

    def score(name: str) -> float:
        low = name.lower()
        if low.startswith(wanted) or low.split("/")[-1].startswith(tail):
            return 2.0  # google/gemma-3-27b -> google/gemma-3-27b-it
        if tail.startswith(low.split("/")[-1]):
            return 1.5  # qwen3-8b-instruct -> Qwen/Qwen3-8B
        return max(
            difflib.SequenceMatcher(None, wanted, low).ratio(),
            difflib.SequenceMatcher(None, tail, low.split("/")[-1]).ratio(),
        )

    scored = sorted(((score(n), n) for n in table_models()), key=lambda t: (-t[0], t[1]))
    return [n for s, n in scored if s >= 0.75][:3]


def missing_config_message(model: str) -> str:
    """Why nothing offline knows ``model``, the shipped names close to it, and the
    command that fetches just its config.json (printed, never run: this tool
    does not go online).

    >>> print(missing_config_message("google/gemma-3-27b"))  # doctest: +ELLIPSIS
    no config for 'google/gemma-3-27b': .... Did you mean google/gemma-3-27b-it...? Fetch ...
    """
    close = close_model_names(model)
    hint = f". Did you mean {' or '.join(close)}?" if close else "."
    msg = (
        f"no config for {model!r}: not a config.json path or model folder, not in the "
        f"Hugging Face cache, not in the shipped table (vllm-logread kv --list-models){hint}"
    )
    parts = model.strip().split("/")
    if len(parts) == 2 and all(re.fullmatch(r"[A-Za-z0-9][\w.\-]*", p) for p in parts):
        org, name = parts
        return msg + (
            f" Fetch just its config.json: huggingface-cli download {org}/{name} config.json "
            f"--local-dir {name} (or curl -L -o config.json https://huggingface.co/{org}/{name}"
            f"/resolve/main/config.json; a gated model needs a token), then give that file: "
            f"vllm-logread kv {name}/config.json (read, diff, simulate: --config)"
        )
    return msg + " Pass its config.json instead of the name."
    return msg


def table_weights(model: str) -> tuple[str, JSONObject] | None:
    """The table's ``weights`` fields for ``model`` (matched as :func:`table_entry`
    matches), the named entry's over those of the entry its ``same_as`` names
    (an FP8 copy adds ``"quantization": "fp8"`` to its base's), or None.

    >>> table_weights("Qwen/Qwen3-8B-FP8")[1]["quantization"]
    'fp8'
    """
    found = table_entry(model)
    if found is None:
        return None
    models = _load_table()
    wanted = model.strip().rstrip("/\\")
    key = next((k for k in models if k.lower() == wanted.lower()), found[0])
    merged: JSONObject = {}
    chain = [key]
    while isinstance(entry := models.get(chain[-1]), dict) and "same_as" in entry:
        target = entry["same_as"]
        if not isinstance(target, str) or target in chain or target not in models:
            break
        chain.append(target)
    for name in reversed(chain):
        extra = as_object((as_object(models[name]) or {}).get("weights"))
        if isinstance(extra, dict):
            merged.update(extra)
    return key, merged


#: A safetensors index's weight map names every tensor: DeepSeek-V3's is about 9 MiB.
MAX_INDEX_BYTES = 64 * 1024 * 1024


def checkpoint_total_bytes(model_or_config: str) -> tuple[int, str] | None:
    """The checkpoint's bytes as its ``model.safetensors.index.json`` states them
    (``metadata.total_size``), beside the config a model folder or the offline Hugging
    Face cache holds, and the index's path; None when no index is there (a single-file
    checkpoint, the shipped table). Never the network."""
    try:
        local = Path(model_or_config).expanduser()
        folder = local if local.is_dir() else local.parent if local.suffix == ".json" else None
    except (OSError, RuntimeError, ValueError):
        folder = None
    if folder is None or not (folder / "config.json").is_file():
        cached = find_cached_config(model_or_config)
        folder = None if cached is None else cached.parent
    if folder is None:
        return None
    index = folder / "model.safetensors.index.json"
    try:
        if not index.is_file() or index.stat().st_size > MAX_INDEX_BYTES:
            return None
        meta = json.loads(index.read_text(encoding="utf-8")).get("metadata")
    except (OSError, ValueError, AttributeError):
        return None
    total = meta.get("total_size") if isinstance(meta, dict) else None
    if isinstance(total, bool) or not isinstance(total, int) or total <= 0:
        return None
    return total, str(index)


def config_for_argument(model_or_config: str) -> tuple[JSONObject, str] | None:
    """The config.json object :func:`spec_for_argument` reads for the argument
    (a path or folder, the Hugging Face cache, the shipped table) and its
    source; None when nothing offline knows it."""
    try:
        local = Path(model_or_config).expanduser()
        local_cfg = local / "config.json" if local.is_dir() else local
        is_local = local_cfg.is_file() and (local.is_dir() or local.suffix == ".json")
    except (OSError, RuntimeError, ValueError):
        is_local = False
    if is_local:
        return load_config(local_cfg), f"config.json at {local_cfg}"
    cached = find_cached_config(model_or_config)
    if cached is not None:
        return load_config(cached), f"Hugging Face cache (offline): {cached}"
    entry = table_entry(model_or_config)
    if entry is not None:
        return dict(entry[1]), f"{TABLE_SOURCE}, entry {entry[0]}"
    return None
