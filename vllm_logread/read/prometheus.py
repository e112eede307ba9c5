"""Every vLLM server at once, from the Prometheus that already scrapes them.

A fleet of vLLM replicas is scraped by a Prometheus; its HTTP API (the
documented ``/api/v1/query``, ``/api/v1/targets``) holds, for every target,
the same series a ``/metrics`` text carries, with ``instance`` and ``job``
labels added. This module asks for them and turns the answers into the
``Sample``s a /metrics text gives (read/metrics.py), so the pool, the block
size and the users of each server come from ``read_samples`` and the report,
not from a copy of their arithmetic.

The queries, all instant (at Prometheus' own now: its clock, not ours,
dates its samples), over a window ``W`` (``--since``, default ``1h``):

* ``last_over_time(vllm:cache_config_info[W])``: every server seen in the
  window, its pool as last scraped; a range selector skips Prometheus'
  staleness markers, so a server that went down is still listed (a row marked
  down, not a vanished one).
* ``time() - timestamp(vllm:cache_config_info)``: the servers answering now
  and the age of their last scrape. An instant selector returns nothing for a series
  marked stale (its target failed a scrape) or older than the 5 min lookback:
  such a server is stale; so is one whose last scrape is older than two of its
  scrape intervals (``/api/v1/targets``' ``scrapeInterval``).
* ``up``: a target whose last scrape failed is down.
* ``max_over_time(G[W])`` of the gauges (requests running and waiting, the KV
  cache usage by both of its names): the peaks of the window, exact over the
  raw samples.
* ``max_over_time(C[W]) - min_over_time(C[W])`` and ``resets(C[W])`` of the
  counters (preemptions, the prompt and generation histograms' ``_sum`` and
  ``_count``): a counter without a reset grew by exactly its highest minus its
  lowest value in the window (13 preemptions, where ``increase()`` said
  13.07, 13.43 and 13.76 in three runs of the test's set-up on 2.42: it
  extrapolates to the window's edges); after a restart (a reset) the growth is not settled, and
  is left unknown.
* ``last_over_time(G[W])`` of the load gauges and of V0's own gauges: the
  samples that say which model an engine serves (``cache_config_info`` has no
  ``model_name``) and whether it is V0 (no null block: 1,560 blocks // 40 =
  39 users, where V1 gives (1,560 - 1) // 40 = 38).

The client is the standard library's urllib: a timeout on the connect and on
each read, a deadline on the whole answer (a server that drips one byte a
second does not hold us), an answer-size cap, GET only (it never writes).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..errors import InputError, MissingPoolError, UsageError
from ..findings import Finding, PoolConfigChangedInWindow, RestartedInWindow
from .deadline import Deadline
from .metrics import CACHE_CONFIG, V0_ONLY_METRICS, Sample

# How long one API call may take in all (connect, each read, and the whole answer).
PROMETHEUS_TIMEOUT_S = 10.0


# The biggest answer read: a fleet of 1,000 servers' cache_config_info is
# about 2 MB of JSON; a bigger answer is not one we asked for.
MAX_RESPONSE_BYTES = 32 << 20


# The labels that identify a server by default: Prometheus' target address,
# the model, and vLLM's data-parallel engine index.
DEFAULT_BY = ("instance", "model_name", "engine")


# A scrape older than this many scrape intervals is a stale server (one
# missed scrape is jitter; two are not).
STALE_INTERVALS = 2


# Prometheus' duration syntax, one unit (1h, 30m, 90s, 2d, 1w).
_DURATION = re.compile(r"([1-9][0-9]{0,5})(s|m|h|d|w)")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


# Prometheus' label-name syntax.
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


RUNNING = "vllm:num_requests_running"
WAITING = "vllm:num_requests_waiting"
KV_USAGE = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")  # 0.9+, then older
PREEMPTIONS = "vllm:num_preemptions_total"
HISTOGRAMS = ("vllm:request_prompt_tokens", "vllm:request_generation_tokens")


def parse_since(text: str) -> int:
    """``--since``: a Prometheus duration of one unit, in seconds.

    Raises:
        UsageError: not one (``1h30m``, ``0s``, ``1.5h``).

    >>> parse_since("1h"), parse_since("30m"), parse_since("90s")
    (3600, 1800, 90)
    """
    m = _DURATION.fullmatch(text.strip())
    if m is None:
        raise UsageError(
            f"--since {text!r}: a duration such as 90s, 30m, 1h, 2d or 1w (one unit, above 0)"
        )
    return int(m.group(1)) * _UNIT_S[m.group(2)]


def parse_by(values: Sequence[str]) -> tuple[str, ...]:
    """``--by``: label names (repeatable, or comma-separated), in order.

    >>> parse_by(["instance,model_name"]), parse_by([])
    (('instance', 'model_name'), ('instance', 'model_name', 'engine'))
    """
    out: list[str] = []
    for value in values:
        for part in value.split(","):
            name = part.strip()
            if not _LABEL.fullmatch(name) or name.startswith("__"):
                raise UsageError(f"--by {part!r}: not a Prometheus label name")
            if name not in out:
                out.append(name)
    return tuple(out) or DEFAULT_BY


@dataclass(frozen=True, slots=True, kw_only=True)
class Series:
    """One series of an instant-vector answer: its labels and value."""

    labels: dict[str, str]
    value: float


class Prometheus:
    """The HTTP API of one Prometheus (GET only)."""

    def __init__(self, url: str, *, timeout_s: float = PROMETHEUS_TIMEOUT_S) -> None:
        import urllib.parse
        import urllib.request

        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"--prometheus {url!r}: not an http:// or https:// URL")
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self._loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")  # never a proxy

    def get(self, path: str, params: dict[str, str]) -> object:
        """The ``data`` of a GET on the API.

        Raises:
            InputError: unreachable, a timeout, an HTTP error, an answer over
                MAX_RESPONSE_BYTES or not JSON, or ``"status": "error"``
                (Prometheus' message is quoted).
        """
        import socket
        import urllib.error
        import urllib.parse
        import urllib.request

        query = urllib.parse.urlencode(params)
        url = f"{self.url}{path}" + (f"?{query}" if query else "")
        what = params.get("query", path)
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        deadline = time.monotonic() + self.timeout_s
        # The whole call within timeout_s, headers too (a server that drips a header line
        # every 0.2 s holds no read past it: the socket is cut at the deadline).
        cut = Deadline(self.timeout_s)
        opener = cut.opener(loopback=self._loopback)
        late = InputError(f"{self.url}: no answer within {self.timeout_s:g} s")
        status = 200
        try:
            with cut:
                try:
                    with opener.open(request, timeout=self.timeout_s) as response:
                        body = _read_capped(response, deadline)
                except urllib.error.HTTPError as err:
                    # A bad query is HTTP 400 (422 for an evaluation error) with
                    # Prometheus' JSON message in the body; read it, then say so.
                    status = err.code
                    try:
                        body = _read_capped(err, deadline)
                    finally:
                        err.close()  # it holds the connection
            if cut.expired:
                raise late  # what came is a part
        except urllib.error.URLError as err:
            reason = err.reason
            if isinstance(reason, (TimeoutError, socket.timeout)) or cut.expired:
                raise late from None
            text = reason.strerror if isinstance(reason, OSError) and reason.strerror else reason
            raise InputError(f"{self.url}: cannot reach Prometheus ({text})") from None
        except TimeoutError:
            raise late from None
        except InputError:
            raise  # the size cap's own message, or the deadline's
        except (OSError, ValueError) as err:
            if cut.expired:
                raise late from None
            raise InputError(f"{self.url}: cannot read Prometheus' answer ({err})") from None
        try:
            answer = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            answer = None
        if not isinstance(answer, dict) or answer.get("status") not in ("success", "error"):
            head = f"HTTP {status}" if status != 200 else "an answer"
            raise InputError(
                f"{url}: {head} that is not Prometheus' API (is {self.url} a Prometheus? "
                f"it starts {body[:60]!r})"
            )
        if answer["status"] == "error":
            raise InputError(
                f"{self.url}: Prometheus rejected {what!r}: "
                f"{answer.get('errorType', 'error')}: {answer.get('error', '')}"
            )
        return answer.get("data")

    def query(self, promql: str) -> list[Series]:
        """An instant query (at Prometheus' now): its vector's series (a scalar is none)."""
        data = self.get("/api/v1/query", {"query": promql})
        if not isinstance(data, dict) or data.get("resultType") != "vector":
            return []
        out: list[Series] = []
        for item in data.get("result") or []:
            try:
                labels = {str(k): str(v) for k, v in item["metric"].items()}
                value = float(item["value"][1])
            except (KeyError, IndexError, TypeError, ValueError, AttributeError):
                raise InputError(f"{self.url}: an answer to {promql!r} is not a vector") from None
            out.append(Series(labels=labels, value=value))
        return out

    def scrape_intervals_s(self) -> dict[tuple[str, str], float]:
        """(instance, job) -> the target's scrape interval in seconds, from
        ``/api/v1/targets`` (Prometheus 2.37+ says ``scrapeInterval``; older
        ones do not, and the staleness test is then Prometheus' own)."""
        data = self.get("/api/v1/targets", {"state": "active"})
        out: dict[tuple[str, str], float] = {}
        if not isinstance(data, dict):
            data = {}  # none (or not Prometheus' shape): no intervals, its own staleness only
        for t in data.get("activeTargets") or []:
            labels = t.get("labels") or {}
            interval = _duration_s(str(t.get("scrapeInterval", "")))
            if interval is not None:
                out[(str(labels.get("instance", "")), str(labels.get("job", "")))] = interval
        return out


class _Body(Protocol):
    """What _read_capped reads: an HTTP response, or an HTTPError's body."""

    def read1(self, size: int = ..., /) -> bytes: ...

    def geturl(self) -> str: ...


def _read_capped(response: _Body, deadline: float) -> bytes:
    """The body, in chunks, within the deadline and the size cap."""
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError
        # read1: what has arrived (read(n) would wait for all n bytes, and a
        # server that drips a byte at a time would never hit the socket timeout).
        chunk: bytes = response.read1(64 * 1024)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise InputError(
                f"{response.geturl()}: the answer is over {MAX_RESPONSE_BYTES:,} bytes: "
                "not one to a query of ours"
            )
        chunks.append(chunk)


def _duration_s(text: str) -> float | None:
    """A target's ``scrapeInterval`` in seconds; None if not Prometheus' syntax.

    >>> _duration_s("15s"), _duration_s("1m30s"), _duration_s("500ms"), _duration_s("soon")
    (15, 90, 0.5, None)
    """
    parts = re.findall(r"(\d+)(ms|s|m|h|d|w|y)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    return sum(int(n) * scale[u] for n, u in parts)


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetServer:
    """One server of the fleet (one value of the ``--by`` labels).

    ``samples`` are what its /metrics text would say (the last scrape of the
    window): read_metrics.read_samples makes its pool facts of them. The
    peaks are the busiest series' (an engine's) when the row folds several;
    counts (preemptions, requests) add up over them.
    """

    key: tuple[tuple[str, str], ...]
    status: str  # "up" | "down" | "stale"
    status_note: str
    samples: tuple[Sample, ...]
    peak_running: int | None = None
    peak_waiting: int | None = None
    peak_kv_usage_pct: float | None = None
    preemptions: int | None = None
    # The histograms' growth in the window: requests ended (_count) and
    # their tokens (_sum); None when not published or after a reset.
    num_prompt_requests: float | None = None
    prompt_tokens_sum: float | None = None
    num_output_requests: float | None = None
    output_tokens_sum: float | None = None
    notes: tuple[Finding, ...] = ()

    @property
    def num_requests(self) -> int | None:
        """Requests that ended in the window (the prompt histogram's count)."""
        return None if self.num_prompt_requests is None else int(round(self.num_prompt_requests))

    @property
    def mean_prompt_tokens(self) -> float | None:
        return mean_of(self.prompt_tokens_sum, self.num_prompt_requests)

    @property
    def mean_output_tokens(self) -> float | None:
        return mean_of(self.output_tokens_sum, self.num_output_requests)

    @property
    def name(self) -> str:
        """``instance=10.0.0.5:8000 model_name=Qwen/Qwen3-8B engine=0``."""
        return " ".join(f"{k}={v}" for k, v in self.key if v) or "(no labels)"

    def label(self, name: str) -> str | None:
        return dict(self.key).get(name) or None


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetRead:
    url: str
    window_s: int
    since: str
    by: tuple[str, ...]
    servers: tuple[FleetServer, ...]


_EngineKey = tuple[tuple[str, str], ...]


# The labels that say which engine of which target a series is of: the
# target (instance and job are unique to one in a Prometheus) and vLLM's
# data-parallel engine index. Not model_name: cache_config_info has none.
_TARGET = ("instance", "job", "engine")


def _engine_key(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """(("instance", "10.0.0.5:8000"), ("job", "vllm"), ("engine", "0"))."""
    return tuple((k, labels.get(k, "")) for k in _TARGET)


def read_fleet(prom: Prometheus, *, since: str = "1h", by: Sequence[str] = DEFAULT_BY) -> FleetRead:
    """Every vLLM server Prometheus saw in the window, one FleetServer per
    value of the ``by`` labels, with its status, its last samples and its
    window's peaks and counts.

    Raises:
        InputError: Prometheus cannot be reached or rejects a query (exit 2).
        MissingPoolError: no vllm:cache_config_info series in the window (exit 3).
    """
    window_s = parse_since(since)
    by = tuple(by)
    w = f"[{since.strip()}]"
    configs = _configs_in_window(prom, since, w)
    now = _now_of(prom)
    last, model_of = _last_samples(prom, w)
    window = _window_of(prom, w)
    groups = _group_by(configs, model_of, by)
    servers = [_server(key, group, now, last, window) for key, group in groups.items()]
    servers.sort(key=lambda s: s.key)
    return FleetRead(
        url=prom.url,
        window_s=window_s,
        since=since.strip(),
        by=by,
        servers=tuple(servers),
    )


def _configs_in_window(prom: Prometheus, since: str, w: str) -> list[Series]:
    """The pool configs seen in the window: without one there is no fleet to read."""
    configs = prom.query(f"last_over_time({CACHE_CONFIG}{w})")
    if not configs:
        seen = prom.query(f'count by (job) (last_over_time({{__name__=~"vllm:.+"}}{w}))')
        jobs = sorted({s.labels.get("job", "") for s in seen} - {""})
        raise MissingPoolError(
            f"{prom.url}: no {CACHE_CONFIG} series in the last {since} "
            + (
                f"(vLLM series of job {', '.join(jobs)} but no pool: vLLM publishes it once "
                "the engine has allocated its KV cache)"
                if seen
                else "(does this Prometheus scrape any vLLM server's /metrics?)"
            )
        )
    return configs


@dataclass(frozen=True, slots=True, kw_only=True)
class _Now:
    """What Prometheus says now of each engine and target: a row's status is made of it."""

    ages_s: dict[_EngineKey, float]
    current: set[frozenset[tuple[str, str]]]
    up: dict[tuple[str, str], float]
    intervals: dict[tuple[str, str], float]


def _now_of(prom: Prometheus) -> _Now:
    """The pool configs' ages, the targets' ``up`` and their scrape intervals, now."""
    now_configs = prom.query(f"time() - timestamp({CACHE_CONFIG})")
    ages = {_engine_key(s.labels): s.value for s in now_configs}
    current = {frozenset(s.labels.items()) for s in now_configs}
    up = {
        (s.labels.get("instance", ""), s.labels.get("job", "")): s.value for s in prom.query("up")
    }
    try:
        intervals = prom.scrape_intervals_s()
    except InputError:
        intervals = {}  # an older or restricted API: Prometheus' own staleness only
    return _Now(ages_s=ages, current=current, up=up, intervals=intervals)


def _last_samples(prom: Prometheus, w: str) -> tuple[list[Series], dict[_EngineKey, str]]:
    """Each engine's last gauges (its model, its engine generation: what read_samples reads)."""
    # The last sample of every gauge that says which model an engine serves
    # and which engine generation it is; and each engine's model.
    last: list[Series] = []
    last_names = (RUNNING, WAITING, *KV_USAGE, PREEMPTIONS, *sorted(V0_ONLY_METRICS))
    for name in last_names:
        for s in prom.query(f"last_over_time({name}{w})"):
            last.append(Series(labels={**s.labels, "__name__": name}, value=s.value))
    # An engine's model: the one it serves now, else the last it served (an
    # engine restarted on another model in the window has a series of each).
    model_of: dict[_EngineKey, str] = {}
    for s in [*(s for s in last if s.labels["__name__"] == RUNNING), *prom.query(RUNNING)]:
        if "model_name" in s.labels:
            model_of[_engine_key(s.labels)] = s.labels["model_name"]
    last = [
        s
        for s in last
        if "model_name" not in s.labels
        or model_of.get(_engine_key(s.labels)) in (None, s.labels["model_name"])
    ]
    return last, model_of


def _peaks(prom: Prometheus, name: str, w: str) -> dict[_EngineKey, float]:
    """An engine's peak of a gauge (over all its series: the highest)."""
    out: dict[_EngineKey, float] = {}
    for s in prom.query(f"max_over_time({name}{w})"):
        k = _engine_key(s.labels)
        out[k] = max(out.get(k, s.value), s.value)
    return out


def _growth(prom: Prometheus, name: str, w: str) -> dict[_EngineKey, float | None]:
    """An engine's growth of a counter (its series' added); None after a reset."""
    resets = {frozenset(s.labels.items()): s.value for s in prom.query(f"resets({name}{w})")}
    out: dict[_EngineKey, float | None] = {}
    for s in prom.query(f"max_over_time({name}{w}) - min_over_time({name}{w})"):
        k = _engine_key(s.labels)
        grew = None if resets.get(frozenset(s.labels.items()), 0) > 0 else s.value
        held = out.get(k, 0.0)
        out[k] = None if grew is None or held is None else held + grew
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class _Window:
    """Each engine's peaks and counts over the window, queried once for every row."""

    running: dict[_EngineKey, float]
    waiting: dict[_EngineKey, float]
    kv: dict[_EngineKey, float]
    preempted: dict[_EngineKey, float | None]
    hist: dict[str, dict[_EngineKey, float | None]]


def _window_of(prom: Prometheus, w: str) -> _Window:
    """The gauges' peaks and the counters' growth in the window, per engine."""
    running, waiting = _peaks(prom, RUNNING, w), _peaks(prom, WAITING, w)
    # per engine, the newer name first
    kv = {**_peaks(prom, KV_USAGE[1], w), **_peaks(prom, KV_USAGE[0], w)}
    preempted = _growth(prom, PREEMPTIONS, w)
    hist = {
        f"{h}{part}": _growth(prom, f"{h}{part}", w)
        for h in HISTOGRAMS
        for part in ("_sum", "_count")
    }
    return _Window(running=running, waiting=waiting, kv=kv, preempted=preempted, hist=hist)


def _group_by(
    configs: list[Series], model_of: dict[_EngineKey, str], by: tuple[str, ...]
) -> dict[_EngineKey, list[Series]]:
    """The engines' pool configs grouped by the --by labels (model_name from the engine's gauges)."""
    groups: dict[tuple[tuple[str, str], ...], list[Series]] = {}
    for c in configs:
        ek = _engine_key(c.labels)
        model = model_of.get(ek)
        labels = {**c.labels, **({"model_name": model} if model else {})}
        key = tuple((name, labels.get(name, "")) for name in by)
        groups.setdefault(key, []).append(Series(labels=c.labels, value=c.value))
    return groups


def _as_sample(s: Series, name: str) -> Sample:
    """A series as the /metrics sample it was scraped from (read_samples reads those)."""
    return Sample(
        name=name,
        labels={k: v for k, v in s.labels.items() if k != "__name__"},
        value=s.value,
        line=0,
    )


def _server(
    key: _EngineKey, group: list[Series], now: _Now, last: list[Series], window: _Window
) -> FleetServer:
    """One row of the fleet: its engines' pool, last samples, status, peaks and counts."""
    group, changed = _current_configs(group, now.current)
    engines = [_engine_key(c.labels) for c in group]
    samples = [_as_sample(c, CACHE_CONFIG) for c in group]
    samples += [
        _as_sample(s, s.labels["__name__"]) for s in last if _engine_key(s.labels) in engines
    ]
    status, note = _status(engines, ages_s=now.ages_s, up=now.up, intervals=now.intervals)
    p_run, p_wait, p_kv = (_top(v, engines) for v in (window.running, window.waiting, window.kv))
    pre = _total(window.preempted, engines)
    reset = pre is None and any(
        e in window.preempted and window.preempted[e] is None for e in engines
    )
    notes = (
        *((PoolConfigChangedInWindow(),) if changed else ()),
        *((RestartedInWindow(),) if reset else ()),
    )
    count_p, sum_p, count_g, sum_g = (
        _total(window.hist[f"{h}{part}"], engines)
        for h in HISTOGRAMS
        for part in ("_count", "_sum")
    )
    return FleetServer(
        key=key,
        status=status,
        status_note=note,
        samples=tuple(samples),
        peak_running=None if p_run is None else int(round(p_run)),
        peak_waiting=None if p_wait is None else int(round(p_wait)),
        peak_kv_usage_pct=None if p_kv is None else p_kv * 100,  # 1 means 100 %
        preemptions=None if pre is None else int(round(pre)),
        num_prompt_requests=count_p,
        prompt_tokens_sum=sum_p,
        num_output_requests=count_g,
        output_tokens_sum=sum_g,
        notes=notes,
    )


def _top(values: dict[_EngineKey, float], engines: Sequence[_EngineKey]) -> float | None:
    """A gauge's peak over the engines of a row: the busiest one's."""
    got = [values[e] for e in engines if e in values and math.isfinite(values[e])]
    return max(got) if got else None


def _total(values: dict[_EngineKey, float | None], engines: Sequence[_EngineKey]) -> float | None:
    """A counter's growth over the engines of a row: their sum, unknown if
    any one's is (a reset, or an engine without the counter)."""
    got = [values.get(e) for e in engines]
    if not got or any(v is None or not math.isfinite(v) for v in got):
        return None
    return sum(v for v in got if v is not None)


def _current_configs(
    group: list[Series], current: set[frozenset[tuple[str, str]]]
) -> tuple[list[Series], bool]:
    """One cache_config_info per engine: a restart with another config leaves
    two series of one engine in the window; the one scraped now is the
    engine's pool (when neither is, the engine is stale and its row says
    so). Whether there were several."""
    by_engine: dict[_EngineKey, Series] = {}
    for c in group:
        engine = _engine_key(c.labels)
        held = by_engine.get(engine)
        if held is None or frozenset(c.labels.items()) in current:
            by_engine[engine] = c
    return list(by_engine.values()), len(by_engine) < len(group)


def mean_of(total: float | None, count: float | None) -> float | None:
    """A histogram's mean over the window: the growth of its ``_sum`` over
    that of its ``_count`` (25,088 tokens / 49 requests = 512.0); unknown
    when no request ended in the window.

    >>> mean_of(25088.0, 49.0), mean_of(0.0, 0.0), mean_of(None, 3.0)
    (512.0, None, None)
    """
    if total is None or count is None or count < 1:
        return None
    return total / count


def _status(
    engines: Sequence[tuple[tuple[str, str], ...]],
    *,
    ages_s: dict[tuple[tuple[str, str], ...], float],
    up: dict[tuple[str, str], float],
    intervals: dict[tuple[str, str], float],
) -> tuple[str, str]:
    """A row's status and why: "up"; "down" (its target's last scrape
    failed); or "stale" (no fresh sample of its pool: marked stale by
    Prometheus, or older than STALE_INTERVALS scrape intervals)."""
    for e in engines:
        labels = dict(e)
        target = (labels.get("instance", ""), labels.get("job", ""))
        if up.get(target) == 0:
            return "down", f"target {target[0] or '?'} (job {target[1] or '?'}): up == 0"
    for e in engines:
        labels = dict(e)
        target = (labels.get("instance", ""), labels.get("job", ""))
        age = ages_s.get(e)
        if age is None:
            return "stale", "no sample now (Prometheus marked its series stale, or none in 5 min)"
        interval = intervals.get(target)
        if interval is not None and age > STALE_INTERVALS * interval:
            return "stale", f"last scraped {age:.0f} s ago (scrape interval {interval:g} s)"
    return "up", ""
