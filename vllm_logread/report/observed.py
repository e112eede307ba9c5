"""The workload a server saw: its requests' token counts summarized, and the users at them.

Real traffic is a distribution, and the server knows it. Two sources:

* ``/metrics`` (read.metrics): the histograms ``vllm:request_prompt_tokens`` and
  ``vllm:request_generation_tokens`` (and ``vllm:request_params_max_tokens``), one
  observation per finished request, labelled ``model_name`` and ``engine`` (V1; V0's have
  ``model_name`` only; the same names from 0.9 to 0.33, checked in vLLM's source). Their
  buckets are vLLM's 1-2-5 series up to max_model_len (``build_1_2_5_buckets``: 1, 2, 5,
  10, ..., 2000, 5000 at max_model_len 8,192) unless ``custom_histogram_buckets`` (0.32+)
  replaced them; this module reads the bounds from the text whatever they are. A histogram
  gives a count, a sum and counts per bucket: the mean is exact (sum / count), a quantile is
  only a bucket, a range (lower, upper] (the first bucket has no lower bound, the +Inf bucket
  no upper bound). So this module says ranges, never an interpolated value.
* a log with ``--enable-log-requests`` (read.patterns rows ``request_received`` and
  ``request_details``): each request's max_tokens (its SamplingParams) and, where the line
  lists them, its prompt token ids; exact values, so exact quantiles.

Quantiles are by nearest rank: the p90 of n values is the ceil(0.9 x n)-th smallest (of 18
requests, the 17th), worked in integers (ceil(90 x 18 / 100) = ceil(16.2) = 17) so that
0.9 x 10 is 9, not 9.000000000000002.

The histograms are marginals: prompt tokens and generation tokens each on their own, not
the pair of each request. A request "at the p90" of both at once is a pessimistic reading
(the long prompts need not be the long answers), said so wherever it is printed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from ..jsontypes import JSONObject
from .capacity import Workload

#: The quantiles summarized, in percent.
QUANTILES_PCT: tuple[int, ...] = (50, 90, 99)


def nearest_rank(pct: int, count: int) -> int:
    """The 1-based rank of the ``pct`` percentile among ``count`` values (nearest rank).

    >>> nearest_rank(90, 18), nearest_rank(50, 18), nearest_rank(99, 18), nearest_rank(90, 10)
    (17, 9, 18, 9)
    """
    return max(1, -(-pct * count // 100))


@dataclass(frozen=True, slots=True, kw_only=True)
class BucketRange:
    """A quantile as a histogram gives it: somewhere in (lower, upper] tokens.

    ``lower_tokens`` None: the first bucket (no lower bound; token counts are >= 0);
    ``upper_tokens`` None: the +Inf bucket (no upper bound).
    """

    lower_tokens: float | None
    upper_tokens: float | None

    @property
    def low_tokens(self) -> int:
        """The fewest whole tokens in the range: (200, 500] -> 201; the first bucket -> 0."""
        return 0 if self.lower_tokens is None else math.floor(self.lower_tokens) + 1

    @property
    def high_tokens(self) -> int | None:
        """The most whole tokens in the range: (200, 500] -> 500; +Inf -> None."""
        return None if self.upper_tokens is None else math.floor(self.upper_tokens)

    def text(self) -> str:
        """
        >>> BucketRange(lower_tokens=200.0, upper_tokens=500.0).text()
        '(200, 500]'
        >>> BucketRange(lower_tokens=None, upper_tokens=1.0).text()
        '<= 1'
        >>> BucketRange(lower_tokens=5000.0, upper_tokens=None).text()
        '> 5,000'
        >>> BucketRange(lower_tokens=None, upper_tokens=None).text()
        'any (one +Inf bucket)'
        """
        if self.lower_tokens is None and self.upper_tokens is None:
            # A histogram whose only bucket is +Inf (no finite bound): no bound either side.
            return "any (one +Inf bucket)"
        if self.lower_tokens is None:
            return f"<= {_num(self.upper_tokens)}"
        if self.upper_tokens is None:
            return f"> {_num(self.lower_tokens)}"
        return f"({_num(self.lower_tokens)}, {_num(self.upper_tokens)}]"

    def to_json(self) -> JSONObject:
        return {"lower_tokens": self.lower_tokens, "upper_tokens": self.upper_tokens}


def _num(x: float | None) -> str:
    assert x is not None
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,g}"


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenSummary:
    """One marginal: the count, sum and mean of a token count per request, and its quantiles
    (bucket ranges from a histogram, exact values from a log)."""

    name: str  # "prompt_tokens" | "generation_tokens" | "max_tokens"
    count: int
    sum_tokens: float
    quantiles: Mapping[int, BucketRange | int] = field(default_factory=dict)
    line: int | None = None

    @property
    def mean_tokens(self) -> float | None:
        """Exact: sum / count (None without a request)."""
        return None if self.count <= 0 else self.sum_tokens / self.count

    @property
    def mean_ceil_tokens(self) -> int | None:
        """The mean rounded up to whole tokens (522.2 -> 523): a request holds whole tokens."""
        if self.count <= 0:
            return None
        if float(self.sum_tokens).is_integer():  # in integers: 9,400 / 18 -> 523
            return -(-int(self.sum_tokens) // self.count)
        return math.ceil(self.sum_tokens / self.count)

    def high(self, pct: int) -> int | None:
        """The most tokens the ``pct`` quantile can be (None: unbounded or unknown)."""
        q = self.quantiles.get(pct)
        return q if isinstance(q, int) else None if q is None else q.high_tokens

    def low(self, pct: int) -> int | None:
        """The fewest tokens the ``pct`` quantile can be."""
        q = self.quantiles.get(pct)
        return q if isinstance(q, int) else None if q is None else q.low_tokens

    def quantile_text(self, pct: int) -> str:
        q = self.quantiles.get(pct)
        if q is None:
            return "unknown"
        return f"{q:,}" if isinstance(q, int) else q.text()

    def to_json(self) -> JSONObject:
        out: JSONObject = {
            "count": self.count,
            "sum": self.sum_tokens,
            "mean": self.mean_tokens,
        }
        for pct in QUANTILES_PCT:
            q = self.quantiles.get(pct)
            out[f"p{pct}"] = q if q is None or isinstance(q, int) else q.to_json()
        if self.line is not None:
            out["line"] = self.line
        return out


def from_histogram(
    name: str,
    buckets: Iterable[tuple[float, float]],
    *,
    count: float,
    sum_tokens: float,
    line: int | None = None,
) -> TokenSummary | None:
    """A histogram's buckets (upper bound, cumulative count; +Inf as ``math.inf``) -> its
    summary; None when the buckets are not a histogram (not increasing, no +Inf bucket,
    counts not whole or falling).

    Worked: 18 requests, buckets le=200: 6, le=500: 11, le=1000: 15, le=2000: 18, +Inf: 18.
    The p50 is the 9th: the first bucket holding >= 9 is le=500 (11), so (200, 500].

    >>> s = from_histogram("prompt_tokens", [(200, 6), (500, 11), (1000, 15), (2000, 18),
    ...     (math.inf, 18)], count=18, sum_tokens=9400)
    >>> s.quantile_text(50), s.quantile_text(90), round(s.mean_tokens, 1)
    ('(200, 500]', '(1,000, 2,000]', 522.2)
    """
    pairs = sorted(buckets)
    if not pairs or pairs[-1][0] != math.inf:
        return None
    cums = [c for _, c in pairs]
    if any(not math.isfinite(c) or c < 0 or c != int(c) for c in cums):
        return None
    if any(b < a for a, b in zip(cums, cums[1:], strict=False)):
        return None
    if not math.isfinite(count) or count != cums[-1] or not math.isfinite(sum_tokens):
        return None
    # The sum must be one the buckets can hold, else "the mean is exact" would print a
    # corrupt one (a sum of -100 over 18 requests: a mean of -5.6 tokens, 501 users). Each
    # request of bucket (lower, upper] adds more than lower (at least 0: token counts are
    # >= 0) and at most upper (no most in +Inf). Worked: 6 in (0, 200], 5 in (200, 500]:
    # a sum in [5 x 200, 6 x 200 + 5 x 500] = [1,000, 3,700].
    least = most = 0.0
    for i, (upper, cum) in enumerate(pairs):
        k = cum - (cums[i - 1] if i else 0.0)
        least += k * max(0.0, float(pairs[i - 1][0]) if i else 0.0)
        most += 0.0 if k == 0 else k * upper
    if sum_tokens < 0 or not least * (1 - 1e-9) <= sum_tokens <= most * (1 + 1e-9):
        return None
    n = int(count)
    quantiles: dict[int, BucketRange | int] = {}
    if n > 0:
        for pct in QUANTILES_PCT:
            rank = nearest_rank(pct, n)
            i = next(i for i, c in enumerate(cums) if c >= rank)
            upper = pairs[i][0]
            quantiles[pct] = BucketRange(
                lower_tokens=None if i == 0 else float(pairs[i - 1][0]),
                upper_tokens=None if upper == math.inf else float(upper),
            )
    return TokenSummary(name=name, count=n, sum_tokens=sum_tokens, quantiles=quantiles, line=line)


def from_values(name: str, values: Mapping[int, int]) -> TokenSummary:
    """Exact values (value -> how many requests) -> their summary, quantiles exact.

    >>> s = from_values("max_tokens", {20: 6, 50: 5, 10: 4, 100: 3})
    >>> s.count, s.sum_tokens, s.quantiles[50], s.quantiles[90], s.quantiles[99]
    (18, 710, 20, 100, 100)
    """
    n = sum(values.values())
    quantiles: dict[int, BucketRange | int] = {}
    if n > 0:
        ordered = sorted(values.items())
        for pct in QUANTILES_PCT:
            rank, seen = nearest_rank(pct, n), 0
            for value, k in ordered:
                seen += k
                if seen >= rank:
                    quantiles[pct] = value
                    break
    total = sum(v * k for v, k in values.items())
    return TokenSummary(name=name, count=n, sum_tokens=total, quantiles=quantiles)


def merged_histograms(parts: Iterable[Iterable[tuple[float, float]]]) -> list[tuple[float, float]]:
    """Several engines' buckets summed bound by bound (data-parallel engines of one model
    share their bounds); [] when their bounds differ."""
    total: dict[float, float] = {}
    bounds: set[tuple[float, ...]] = set()
    for buckets in parts:
        pairs = sorted(buckets)
        bounds.add(tuple(b for b, _ in pairs))
        for b, c in pairs:
            total[b] = total.get(b, 0.0) + c
    if len(bounds) != 1:
        return []
    return sorted(total.items())


@dataclass(slots=True)
class RequestTally:
    """A log's request lines folded as they are read: value -> requests, per marginal (the
    memory is the distinct values, at most max_model_len each, not the requests)."""

    prompt_tokens: Counter[int] = field(default_factory=Counter)
    max_tokens: Counter[int] = field(default_factory=Counter)
    first_line: int | None = None

    def add(self, kind: str, value: int, line: int | None = None) -> None:
        if kind == "request_prompt_tokens":
            self.prompt_tokens[value] += 1
        elif kind == "request_max_tokens":
            self.max_tokens[value] += 1
        else:
            return
        if self.first_line is None and line is not None:
            self.first_line = line

    def __bool__(self) -> bool:
        return bool(self.prompt_tokens or self.max_tokens)


@dataclass(frozen=True, slots=True, kw_only=True)
class UsersAt:
    """The users of one workload the observed one suggests (through the report's own
    arithmetic), and how that workload was chosen."""

    label: str  # "mean", "p50 low", "p90 high", ...
    workload: Workload | None  # None: a bound is missing (the +Inf bucket)
    users: int | None
    why: str = ""
    arithmetic: str = ""  # the report's own, at that workload

    def to_json(self) -> JSONObject:
        w = self.workload
        return {
            "label": self.label,
            "prompt_tokens": None if w is None else w.prompt_tokens,
            "output_tokens": None if w is None else w.output_tokens,
            "users": self.users,
            "why": self.why,
            "arithmetic": self.arithmetic,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ObservedWorkload:
    """What the server saw: ``source`` "metrics" (histograms: quantile ranges) or "log"
    (request lines: exact values), per marginal, and the users at it.

    ``generation`` is the answers' real length (/metrics); a log gives only ``max_tokens``,
    the most each answer could be (so users at it are a floor). ``prompt`` None: the log did
    not print the prompts' token ids (0.32 prints them at DEBUG only): the user's --prompt
    stands in, said so. ``engines``: per data-parallel engine (name, its summaries).
    """

    source: str  # "metrics" | "log"
    prompt: TokenSummary | None
    generation: TokenSummary | None
    max_tokens: TokenSummary | None = None
    engines: tuple[tuple[str, tuple[TokenSummary, ...]], ...] = ()
    users: tuple[UsersAt, ...] = ()
    notes: tuple[str, ...] = ()
    prompt_cut: bool = False  # the log's prompt ids were cut at --max-log-len

    @property
    def output(self) -> TokenSummary | None:
        """The output side of a request: the real answers, else the max_tokens asked."""
        return self.generation if self.generation is not None else self.max_tokens

    @property
    def count(self) -> int:
        s = self.prompt or self.output
        return 0 if s is None else s.count

    def to_json(self) -> JSONObject:
        at_mean = next((u for u in self.users if u.label == "mean"), None)
        return {
            "source": self.source,
            "prompt_tokens": None if self.prompt is None else self.prompt.to_json(),
            "generation_tokens": None if self.generation is None else self.generation.to_json(),
            "max_tokens": None if self.max_tokens is None else self.max_tokens.to_json(),
            "at_mean": None if at_mean is None else at_mean.to_json(),
            "users": [u.to_json() for u in self.users],
            "engines": [
                {"engine": name, **{s.name: s.to_json() for s in sums}}
                for name, sums in self.engines
            ],
            "notes": list(self.notes),
        }


def observed_from_log(
    tally: RequestTally, *, max_log_len: int | None = None
) -> ObservedWorkload | None:
    """A log's request lines -> the observed workload (None: no request line).

    ``max_log_len``: the server's --max-log-len (its non-default args): vLLM cuts the
    logged ids there (0.9 to 0.32), so a prompt of that many ids may be longer; the
    prompts are then not summarized (--prompt stands in) rather than undercounted.
    """
    if not tally:
        return None
    prompt = from_values("prompt_tokens", tally.prompt_tokens) if tally.prompt_tokens else None
    cut = (
        max_log_len is not None
        and prompt is not None
        and any(v >= max_log_len for v in tally.prompt_tokens)
    )
    if cut:
        prompt = None
    max_tokens = from_values("max_tokens", tally.max_tokens) if tally.max_tokens else None
    notes = [
        "from the log's request lines (--enable-log-requests): exact values; the output side "
        "is each request's max_tokens, the most its answer could hold, so the users at it "
        "are a floor"
    ]
    if cut:
        notes.append(
            f"the server cut the logged prompt ids at --max-log-len {max_log_len}: a prompt "
            "of that many may be longer, so the prompt is your --prompt"
        )
    elif prompt is None:
        notes.append(
            "the log does not list the prompts' token ids (vLLM 0.32 prints them at "
            "--log-level DEBUG only); the prompt is your --prompt"
        )
    return ObservedWorkload(
        source="log",
        prompt=prompt,
        generation=None,
        max_tokens=max_tokens,
        notes=tuple(notes),
        prompt_cut=cut,
    )


def with_users(
    obs: ObservedWorkload,
    given: Workload,
    users_at: Callable[[Workload], tuple[int | None, str]],
) -> ObservedWorkload:
    """``obs`` with the users at its mean request and at each quantile's bounds, each
    through ``users_at`` (the report's own arithmetic at that workload: its users and how).

    * mean: ceil(mean prompt) + ceil(mean output) tokens;
    * pNN low / high: every request at the fewest / the most tokens the pNN buckets of both
      marginals allow (a log's exact quantiles: low = high); the two bracket the users of a
      server whose every request sat at that quantile. A missing side (no prompt ids in the
      log) is the given --prompt / --output.
    """
    prompt, output = obs.prompt, obs.output
    out: list[UsersAt] = []

    def at(label: str, p: int | None, o: int | None, why: str) -> None:
        if p is None or o is None:
            out.append(UsersAt(label=label, workload=None, users=None, why=why))
            return
        w = Workload(prompt_tokens=p, output_tokens=o)
        users, how = users_at(w)
        out.append(UsersAt(label=label, workload=w, users=users, why=why, arithmetic=how))

    unbounded = "its bucket is +Inf (above the last bound): no upper bound"
    mean_p = given.prompt_tokens if prompt is None else prompt.mean_ceil_tokens
    mean_o = given.output_tokens if output is None else output.mean_ceil_tokens
    at("mean", mean_p, mean_o, "every request at the mean prompt and the mean output, rounded up")
    for pct in QUANTILES_PCT:
        lo_p = given.prompt_tokens if prompt is None else prompt.low(pct)
        lo_o = given.output_tokens if output is None else output.low(pct)
        hi_p = given.prompt_tokens if prompt is None else prompt.high(pct)
        hi_o = given.output_tokens if output is None else output.high(pct)
        if (lo_p, lo_o) == (hi_p, hi_o):
            at(f"p{pct}", hi_p, hi_o, f"every request at the p{pct} of each marginal")
            continue
        bounded = hi_p is not None and hi_o is not None
        why = f"every request at the p{pct} buckets' upper bounds" if bounded else unbounded
        at(f"p{pct} high", hi_p, hi_o, why)
        at(f"p{pct} low", lo_p, lo_o, f"every request at the p{pct} buckets' lower bounds")
    return replace(obs, users=tuple(out))
