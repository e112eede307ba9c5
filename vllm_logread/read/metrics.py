"""A running vLLM's Prometheus ``/metrics`` text -> the facts of its pool and its load now.

Often the boot log is gone (weeks of serving, a rotated pod log), but the
server still says what its pool is: vLLM publishes its CacheConfig as the
labels of ``vllm:cache_config_info`` (``num_gpu_blocks``, ``block_size``,
``cache_dtype``, ``gpu_memory_utilization``, ...), and its load as gauges.
This module turns that text into the facts a boot log gives (docs/facts.md), so the
report is the same: ``num_gpu_blocks="1506"``, ``block_size="16"``,
``cache_dtype="auto"`` for Qwen/Qwen3-8B is 1,506 blocks - 1 null block =
1,505 usable, // 40 blocks per user of 512 + 128 tokens = 37 users, exactly as
from the boot log.

The names changed over vLLM's eras (checked in vLLM's source):

* V0 engine (vllm/engine/metrics.py; the only engine before 0.8, opt-in with
  ``VLLM_USE_V1=0`` until 0.10): gauges labelled ``model_name`` only;
  ``vllm:gpu_cache_usage_perc``, ``vllm:cpu_cache_usage_perc`` and
  ``vllm:num_requests_swapped`` exist only here; ``vllm:cache_config_info``
  (a prometheus_client Info of ``CacheConfig.metrics_info()``) carries
  ``num_cpu_blocks``, the swap space. No null block.
* V1 engine (vllm/v1/metrics/loggers.py): gauges labelled ``model_name`` and
  ``engine`` (the data-parallel engine index); ``cache_config_info`` gets the
  ``engine`` label too (``log_metrics_info``). ``vllm:gpu_cache_usage_perc``
  was "Deprecated in 0.9 - Renamed as vllm:kv_cache_usage_perc", so 0.9 and
  0.10 publish both and later versions the new name only. V1's EngineCore
  sets ``num_cpu_blocks`` to 0 (no swap; "None" on 0.32): not a V0 sign, and
  not a fact. Block 0 of the pool is the null block.
* 0.32 adds ``kv_cache_size_tokens`` and ``kv_cache_max_concurrency`` to the
  cache config labels (seen on a real 0.32 server).

* Requests' token counts (observed.py turns them into the workload seen): the
  histograms ``vllm:request_prompt_tokens``, ``vllm:request_generation_tokens``
  and ``vllm:request_params_max_tokens`` (one observation per finished
  request; the same names in V0 and V1 from 0.9 to 0.33, V0's labelled
  ``model_name`` only). ``vllm:num_requests_waiting_by_reason`` (label
  ``reason``: ``capacity``, waiting for the scheduler's room; ``deferred``,
  held back by a LoRA budget, a KV transfer or a blocked status) is in 0.31
  to 0.33 and not in 0.11; on 0.32 ``vllm:num_requests_waiting`` is their sum.

``vllm:cache_config_info`` never carries ``model_name``: an engine's model is
the ``model_name`` of the load gauge whose other labels (``engine``, and
``instance`` or ``job`` in a replayed Prometheus scrape) agree with it. Each
model (and each scraped instance) becomes one boot, its engines that boot's
data-parallel engines, so each gets its row in the report.

The exposition format is read with prometheus-client's
``text_string_to_metric_families`` (a plain dependency: small, pure Python,
no dependencies of its own, and it knows the format's escapes and OpenMetrics'
variants better than a parser of our own would; imported here only, so a boot
log never loads it); it does not say which line a sample came from, so line numbers are put back by
matching sample names to the text's lines in order.
"""

from __future__ import annotations

import math
import re
from collections import deque
from dataclasses import dataclass

from ..errors import InputError, UsageError
from .facts import Fact, Value

# Whether an input is a /metrics text is decided in sniff.py, which a boot log's
# report imports instead of this module (docs/performance.md, "Start-up").
from .sniff import MAX_METRICS_BYTES as MAX_METRICS_BYTES
from .sniff import looks_like_metrics as looks_like_metrics

# How long --metrics-url waits for the server (connect and each read).
METRICS_TIMEOUT_S = 10.0


CACHE_CONFIG = "vllm:cache_config_info"


# The gauges of the load now, by fact kind. A later name in a tuple is the
# older one, used only when the newer is absent.
LOAD_METRICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("running_reqs", ("vllm:num_requests_running",)),
    ("waiting_reqs", ("vllm:num_requests_waiting",)),
    ("swapped_reqs", ("vllm:num_requests_swapped",)),
    ("kv_usage_pct", ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")),
    ("preemptions", ("vllm:num_preemptions_total",)),
)


# The per-request token histograms read (observed.py), by the name of their summary.
HISTOGRAMS: tuple[tuple[str, str], ...] = (
    ("prompt_tokens", "vllm:request_prompt_tokens"),
    ("generation_tokens", "vllm:request_generation_tokens"),
    ("max_tokens", "vllm:request_params_max_tokens"),
)


WAITING_BY_REASON = "vllm:num_requests_waiting_by_reason"


# Fact kinds of the waiting gauge by reason (KIND_TYPES).
WAITING_REASON_KINDS = {"capacity": "waiting_capacity_reqs", "deferred": "waiting_deferred_reqs"}


V0_ONLY_METRICS = frozenset({"vllm:num_requests_swapped", "vllm:cpu_cache_usage_perc"})


# Labels of cache_config_info that state a fact (CacheConfig field -> kind).
CONFIG_LABELS: tuple[tuple[str, str], ...] = (
    ("cache_dtype", "kv_cache_dtype"),
    ("block_size", "block_size"),
    ("gpu_memory_utilization", "gpu_memory_utilization"),
    ("enable_prefix_caching", "enable_prefix_caching"),
    ("num_gpu_blocks", "gpu_blocks"),
    ("kv_cache_size_tokens", "pool_tokens"),
    ("kv_cache_memory_bytes", "kv_cache_memory_bytes"),
)


# Labels that name the thing measured, not the server: not an identity.
_NOT_IDENTITY = frozenset({"model_name", "engine"})


_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


# The families read: vLLM's and SGLang's samples and their HELP/TYPE lines.
_OWN_PREFIXES = ("vllm:", "sglang:")
_OWN_COMMENTS = tuple(f"# {w} {p}" for w in ("HELP", "TYPE", "UNIT") for p in _OWN_PREFIXES)


_INT_TEXT = re.compile(r"\d{1,20}")


_FLOAT_TEXT = re.compile(r"\d{1,20}(?:\.\d{1,12})?")


@dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    """One sample line: name, labels, value, and its 1-based line number."""

    name: str
    labels: dict[str, str]
    value: float
    line: int


def parse_samples(text: str, *, source: str = "-") -> list[Sample]:
    """Every sample of a Prometheus exposition text, with its line number.

    Raises:
        UsageError: prometheus-client is missing (an install with ``--no-deps``).
        InputError: the text is not valid exposition format.
    """
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        raise UsageError(
            "reading a /metrics text needs prometheus-client: pip install prometheus-client"
        ) from None
    lines: dict[str, deque[int]] = {}
    # Only vLLM's and SGLang's families are read (read_samples looks at no other), so a
    # scrape that is mostly other exporters' series (60 MB of them: 58 s and 1.2 GB to
    # parse whole) is parsed for its own lines only; the other lines cost a scan.
    kept: list[str] = []
    for number, raw in enumerate(text.split("\n"), 1):
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if stripped.startswith(_OWN_COMMENTS) or stripped == "# EOF":
                kept.append(raw)
            continue
        if not stripped.startswith(_OWN_PREFIXES):
            continue
        kept.append(raw)
        m = _NAME.match(stripped)
        if m:
            lines.setdefault(m.group(0), deque()).append(number)
    out: list[Sample] = []
    try:
        for family in text_string_to_metric_families("\n".join(kept) + "\n"):
            for s in family.samples:
                queue = lines.get(s.name)
                line = queue.popleft() if queue else 0
                out.append(
                    Sample(name=s.name, labels=dict(s.labels), value=float(s.value), line=line)
                )
    except (ValueError, TypeError, KeyError, IndexError) as err:
        raise InputError(f"{source}: not a readable Prometheus text: {err}") from None
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Histogram:
    """One engine's histogram: (upper bound, cumulative count) per bucket (+Inf as
    ``math.inf``), its count and sum, and the line of its first bucket."""

    name: str  # HISTOGRAMS' summary name: "prompt_tokens", ...
    buckets: tuple[tuple[float, float], ...]
    count: float
    sum: float
    line: int


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineLoad:
    """One engine's load now: the gauges' values and their facts."""

    engine: str | None
    line: int
    running_reqs: int
    waiting_reqs: int
    kv_usage_pct: float
    preemptions: int
    swapped_reqs: int | None = None
    facts: tuple[Fact, ...] = ()
    # The waiting requests by reason (0.31+: "capacity", "deferred"); empty: not published.
    waiting_by_reason: tuple[tuple[str, int], ...] = ()
    histograms: tuple[Histogram, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Server:
    """One model on the endpoint (one scraped instance of it): its engines."""

    model: str | None
    generation: str  # "V0" | "V1"
    identity: tuple[tuple[str, str], ...]
    config_facts: tuple[Fact, ...]
    loads: tuple[EngineLoad, ...]
    # Every label of its first engine's cache_config_info, as published (the log vs
    # /metrics comparison reads the ones no fact kind names: kv_cache_max_concurrency,
    # effective_attention_block_size).
    config_labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricsRead:
    servers: tuple[Server, ...]
    warnings: tuple[str, ...]


def _agrees(sample: Sample, config: Sample) -> bool:
    """Whether a load gauge belongs to the engine of a cache_config_info sample:
    every label of the gauge but ``model_name`` has the same value there."""
    return all(config.labels.get(k) == v for k, v in sample.labels.items() if k != "model_name")


def _config_facts(
    config: Sample, *, generation: str, process: str | None, source: str
) -> list[Fact]:
    out: list[Fact] = []
    labels = dict(CONFIG_LABELS)
    if generation == "V0":
        labels["num_cpu_blocks"] = "cpu_blocks"  # V0's swap space; V1 says 0 or None
    for label, kind in labels.items():
        text = config.labels.get(label)
        value: Value
        decimals = None
        if text is None or text == "None":
            continue
        if kind in ("kv_cache_dtype",):
            value = text
        elif kind == "enable_prefix_caching":
            if text not in ("True", "False"):
                continue
            value = text == "True"
        elif kind == "gpu_memory_utilization":
            if not _FLOAT_TEXT.fullmatch(text):
                continue
            value = float(text)
            decimals = len(text) - text.index(".") - 1 if "." in text else None
        else:
            if not _INT_TEXT.fullmatch(text):
                continue
            value = int(text)
        out.append(
            Fact(
                kind=kind,
                value=value,
                line=config.line,
                process=process,
                decimals=decimals,
                source=source,
            )
        )
    return out


def _number_fact(kind: str, s: Sample, process: str | None, source: str) -> Fact | None:
    if not math.isfinite(s.value) or s.value < 0:
        return None
    value: Value
    if kind == "kv_usage_pct":
        value = s.value * 100  # "1 means 100 percent usage"
    else:
        value = int(round(s.value))
    return Fact(kind=kind, value=value, line=s.line, process=process, source=source)


def read_metrics(text: str, *, source: str = "-") -> MetricsRead:
    """The servers a /metrics text describes, each with its pool and load facts."""
    return read_samples(parse_samples(text, source=source), source=source)


def read_samples(samples: list[Sample], *, source: str = "-") -> MetricsRead:
    """The servers some samples describe, as ``read_metrics`` reads a text's:
    the same facts whether the samples came from a /metrics text or from a
    Prometheus query (read/prometheus.py, where ``line`` is 0)."""
    names = {s.name for s in samples}
    generation = "V0" if names & V0_ONLY_METRICS else "V1"
    by_name: dict[str, list[Sample]] = {}
    for s in samples:
        by_name.setdefault(s.name, []).append(s)
    configs = by_name.get(CACHE_CONFIG, [])
    warnings: list[str] = []
    if not configs:
        has_vllm = any(n.startswith("vllm:") for n in names)
        warnings.append(
            f"{source}: the /metrics text has no {CACHE_CONFIG} line, so it does not state the "
            "KV pool"
            + (
                " (vLLM publishes it once the engine has allocated its KV cache)"
                if has_vllm
                else " (is it a vLLM server's /metrics?)"
            )
        )
    models = {
        s.labels["model_name"]
        for s in by_name.get("vllm:num_requests_running", [])
        if "model_name" in s.labels
    }
    groups: dict[
        tuple[str | None, tuple[tuple[str, str], ...]], tuple[list[Fact], list[EngineLoad]]
    ] = {}
    first_labels: dict[
        tuple[str | None, tuple[tuple[str, str], ...]], tuple[tuple[str, str], ...]
    ] = {}
    for config in configs:
        running = next(
            (s for s in by_name.get("vllm:num_requests_running", []) if _agrees(s, config)), None
        )
        engine = config.labels.get("engine") or (
            None if running is None else running.labels.get("engine")
        )
        process = f"EngineCore_DP{engine}" if engine and engine.isdigit() else None
        model = None if running is None else running.labels.get("model_name")
        if model is None and len(models) == 1:
            model = next(iter(models))
        identity = (
            ()
            if running is None
            else tuple(sorted((k, v) for k, v in running.labels.items() if k not in _NOT_IDENTITY))
        )
        facts, loads = groups.setdefault((model, identity), ([], []))
        first_labels.setdefault((model, identity), tuple(sorted(config.labels.items())))
        if model is not None:
            line = running.line if running is not None else config.line
            facts.append(Fact(kind="model", value=model, line=line, process=process, source=source))
        facts.extend(_config_facts(config, generation=generation, process=process, source=source))
        if not config.labels.get("num_gpu_blocks", "None").isdigit():
            warnings.append(
                f"{source}:{config.line}: {CACHE_CONFIG} says num_gpu_blocks="
                f"{config.labels.get('num_gpu_blocks')!r}: the pool is not known yet"
            )
        load = _engine_load(by_name, config, engine, process, source)
        if load is not None:
            loads.append(load)
    servers = tuple(
        Server(
            model=model,
            generation=generation,
            identity=identity,
            config_facts=tuple(sorted(facts, key=lambda f: f.line)),
            loads=tuple(loads),
            config_labels=first_labels.get((model, identity), ()),
        )
        for (model, identity), (facts, loads) in groups.items()
    )
    return MetricsRead(servers=servers, warnings=tuple(warnings))


def _engine_load(
    by_name: dict[str, list[Sample]],
    config: Sample,
    engine: str | None,
    process: str | None,
    source: str,
) -> EngineLoad | None:
    found: dict[str, Sample] = {}
    for kind, metric_names in LOAD_METRICS:
        for name in metric_names:
            s = next((s for s in by_name.get(name, []) if _agrees(s, config)), None)
            if s is not None:
                found[kind] = s
                break
    if "running_reqs" not in found:
        return None
    facts = [
        f for kind, s in found.items() if (f := _number_fact(kind, s, process, source)) is not None
    ]
    reasons: list[tuple[str, int]] = []
    for s in by_name.get(WAITING_BY_REASON, []):
        reason = s.labels.get("reason") or ""
        reason_kind = WAITING_REASON_KINDS.get(reason)
        if reason_kind is None or not _agrees(_without(s, "reason"), config):
            continue
        f = _number_fact(reason_kind, s, process, source)
        if f is not None:
            facts.append(f)
            reasons.append((reason, int(f.value)))
    values = {f.kind: f.value for f in facts}
    return EngineLoad(
        engine=engine,
        line=found["running_reqs"].line,
        running_reqs=int(values.get("running_reqs", 0)),
        waiting_reqs=int(values.get("waiting_reqs", 0)),
        kv_usage_pct=float(values.get("kv_usage_pct", 0.0)),
        preemptions=int(values.get("preemptions", 0)),
        swapped_reqs=None if "swapped_reqs" not in values else int(values["swapped_reqs"]),
        facts=tuple(sorted(facts, key=lambda f: f.line)),
        waiting_by_reason=tuple(reasons),
        histograms=tuple(
            h for name, metric in HISTOGRAMS if (h := _histogram(by_name, config, name, metric))
        ),
    )


def _without(s: Sample, label: str) -> Sample:
    labels = {k: v for k, v in s.labels.items() if k != label}
    return Sample(name=s.name, labels=labels, value=s.value, line=s.line)


def _histogram(
    by_name: dict[str, list[Sample]], config: Sample, name: str, metric: str
) -> Histogram | None:
    """The engine's histogram ``metric`` (its ``_bucket``, ``_count`` and ``_sum``
    samples whose labels agree with ``config``); None when it is not there whole."""
    buckets: list[tuple[float, float]] = []
    line = 0
    for s in by_name.get(metric + "_bucket", []):
        le = s.labels.get("le")
        if le is None or not _agrees(_without(s, "le"), config):
            continue
        try:
            bound = float(le)  # "+Inf" -> inf
        except ValueError:
            return None
        if math.isnan(bound):
            return None
        buckets.append((bound, s.value))
        line = line or s.line
    count = next((s for s in by_name.get(metric + "_count", []) if _agrees(s, config)), None)
    total = next((s for s in by_name.get(metric + "_sum", []) if _agrees(s, config)), None)
    if not buckets or count is None or total is None:
        return None
    return Histogram(
        name=name, buckets=tuple(buckets), count=count.value, sum=total.value, line=line
    )


def read_metrics_file(path: str) -> bytes:
    """A saved /metrics text, at most ``MAX_METRICS_BYTES``.

    Raises:
        InputError: it cannot be read, is too big, or is not a Prometheus text.
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_METRICS_BYTES + 1)
    except OSError as err:
        raise InputError(f"{path}: cannot read it ({err.strerror or err})") from None
    if len(data) > MAX_METRICS_BYTES:
        raise InputError(f"{path}: over {MAX_METRICS_BYTES >> 20} MiB: not a /metrics text")
    if not looks_like_metrics(data):
        raise InputError(f"{path}: not a Prometheus /metrics text")
    return data


def fetch_metrics(url: str, *, timeout_s: float = METRICS_TIMEOUT_S) -> bytes:
    """GET a /metrics URL (standard library only), with a timeout.

    Raises:
        UsageError: not an http(s) URL.
        InputError: unreachable, an HTTP error, a timeout, or not a Prometheus text.
    """
    import socket
    import urllib.error
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--metrics-url {url!r}: not an http:// or https:// URL")
    from .deadline import Deadline

    # The whole GET within timeout_s (a server that drips holds no read past it).
    deadline = Deadline(timeout_s)
    opener = deadline.opener(loopback=parts.hostname in ("127.0.0.1", "localhost", "::1"))
    # Plain Prometheus text (format 0.0.4), not OpenMetrics.
    request = urllib.request.Request(url, headers={"Accept": "text/plain"})
    late = InputError(f"{url}: no answer within {timeout_s:g} s")
    try:
        with deadline, opener.open(request, timeout=timeout_s) as response:
            body: bytes = response.read(MAX_METRICS_BYTES + 1)
        if deadline.expired:
            raise late  # what came is a part: a cut scrape is not read as the whole
    except urllib.error.HTTPError as err:
        err.close()  # it holds the connection
        if deadline.expired:
            raise late from None
        raise InputError(f"{url}: the server answered HTTP {err.code} {err.reason}") from None
    except urllib.error.URLError as err:
        reason = err.reason
        if isinstance(reason, (TimeoutError, socket.timeout)) or deadline.expired:
            raise late from None
        text = reason.strerror if isinstance(reason, OSError) and reason.strerror else reason
        raise InputError(f"{url}: cannot reach the server ({text})") from None
    except TimeoutError:
        raise late from None
    except (OSError, ValueError) as err:
        if deadline.expired:
            raise late from None
        raise InputError(f"{url}: cannot read it ({err})") from None
    if len(body) > MAX_METRICS_BYTES:
        raise InputError(
            f"{url}: the answer is over {MAX_METRICS_BYTES >> 20} MiB: not a /metrics text"
        )
    if not looks_like_metrics(body):
        raise InputError(f"{url}: the answer is not a Prometheus text (it starts {body[:60]!r})")
    return body
