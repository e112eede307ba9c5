"""``read --prometheus URL``: the fleet, one row per server and a total per model.

read/prometheus.py turns Prometheus' answers into each server's samples;
here each server's samples become its facts (``read_samples``, the very
reading of a /metrics text) and its report (``build_report``, as for a log),
so a server's users are the figure ``vllm-logread`` gives on its /metrics
text. The window's load (peaks, preemptions, the mean request) goes beside
them. A server that is down or stale keeps its row (its pool as last
scraped) but is not counted in its model's total.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..boot.boots import Boot
from ..errors import MissingPoolError
from ..read.metrics import read_samples
from ..read.prometheus import FleetRead, FleetServer, mean_of
from ..report import build_report
from ..report.model import Options, Report, SpecResolver
from .events import GateResult


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetRow:
    """One server: what Prometheus said of it and its report."""

    server: FleetServer
    # One report per server of the row: one, unless --by folds several
    # targets into a row (--by job); none when its samples state no pool.
    reports: tuple[Report, ...]
    warnings: tuple[str, ...] = ()

    @property
    def users(self) -> int | None:
        """The row's users: its reports' (each sums its DP engines), added."""
        got = [r.users for r in self.reports]
        if not got or any(u is None for u in got):
            return None
        return sum(u for u in got if u is not None)

    @property
    def users_mid_answer(self) -> int | None:
        got = [r.users_mid_answer for r in self.reports]
        if not got or any(u is None for u in got):
            return None
        return sum(u for u in got if u is not None)

    @property
    def model(self) -> str | None:
        models = {r.model for r in self.reports if r.model}
        if len(models) == 1:
            return models.pop()
        return self.server.label("model_name") if not models else ", ".join(sorted(models))

    def same(self, name: str) -> object:
        """A report figure (num_blocks, block_size, ...) when the row's
        reports agree on it, else None."""
        values = {getattr(r, name) for r in self.reports}
        return values.pop() if len(values) == 1 else None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelTotal:
    """A model's servers that answer, added up: the users behind one load
    balancer if they are its replicas."""

    model: str | None
    num_servers: int
    num_answering: int
    users: int | None  # None when any answering server's is unknown
    users_mid_answer: int | None
    preemptions: int | None
    num_requests: int | None
    mean_prompt_tokens: float | None
    mean_output_tokens: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Fleet:
    read: FleetRead
    options: Options
    rows: tuple[FleetRow, ...]
    totals: tuple[ModelTotal, ...]

    @property
    def answering(self) -> list[FleetRow]:
        return [r for r in self.rows if r.server.status == "up"]


def fleet_of(
    read: FleetRead, options: Options, *, spec_resolver: SpecResolver | None = None
) -> Fleet:
    """Each server's report and each model's total."""
    rows: list[FleetRow] = []
    for server in read.servers:
        source = f"{read.url} {server.name}"
        metrics = read_samples(list(server.samples), source=source)
        reports: list[Report] = []
        for one in metrics.servers:  # several only when --by folds targets into a row
            boot = Boot(index=0)
            for f in one.config_facts:
                boot.add(f)
            if boot.has_pool:
                reports.append(
                    build_report(boot, options, source=source, spec_resolver=spec_resolver)
                )
        rows.append(FleetRow(server=server, reports=tuple(reports), warnings=metrics.warnings))
    return Fleet(read=read, options=options, rows=tuple(rows), totals=tuple(_totals(rows)))


def _sum_known(values: Sequence[int | float | None]) -> float | None:
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None)


def _totals(rows: Sequence[FleetRow]) -> list[ModelTotal]:
    models: dict[str | None, list[FleetRow]] = {}
    for r in rows:
        models.setdefault(r.model, []).append(r)
    out: list[ModelTotal] = []
    for model, group in models.items():
        up = [r for r in group if r.server.status == "up"]
        users = _sum_known([r.users for r in up])
        mids = _sum_known([r.users_mid_answer for r in up])
        pre = _sum_known([r.server.preemptions for r in up])
        s = [r.server for r in up]
        out.append(
            ModelTotal(
                model=model,
                num_servers=len(group),
                num_answering=len(up),
                users=None if users is None else int(users),
                users_mid_answer=None if mids is None else int(mids),
                preemptions=None if pre is None else int(pre),
                num_requests=None
                if (n := _sum_known([x.num_prompt_requests for x in s])) is None
                else int(round(n)),
                mean_prompt_tokens=mean_of(
                    _sum_known([x.prompt_tokens_sum for x in s]),
                    _sum_known([x.num_prompt_requests for x in s]),
                ),
                mean_output_tokens=mean_of(
                    _sum_known([x.output_tokens_sum for x in s]),
                    _sum_known([x.num_output_requests for x in s]),
                ),
            )
        )
    return out


def gate_message(fleet: Fleet, min_users: int | None, margin_pct: float = 0.0) -> str | None:
    """``--min-users`` (less ``--margin``, as for a log: ``GateResult``): the models whose
    total is short (or unknown), or None."""
    if min_users is None:
        return None
    w = fleet.options.workload
    short = []
    for t in fleet.totals:
        if not GateResult(min_users=min_users, users=t.users, margin_pct=margin_pct).passed:
            got = "unknown" if t.users is None else f"only {t.users:,}"
            short.append(
                f"{t.model or 'model not named'}: {got} users over {t.num_answering} of "
                f"{t.num_servers} servers answering"
            )
    if not short:
        return None
    margin = f" --margin {margin_pct:g}%" if margin_pct else ""
    return (
        f"--min-users {min_users}{margin} at {w.prompt_tokens:,}+{w.output_tokens:,} tokens: "
        + "; ".join(short)
    )


def no_answer_error(fleet: Fleet) -> MissingPoolError | None:
    """Every server Prometheus saw is down or stale: nothing answers now (exit 3)."""
    if fleet.answering:
        return None
    return MissingPoolError(
        f"{fleet.read.url}: none of the {len(fleet.rows)} vLLM servers seen in the last "
        f"{fleet.read.since} answers now (each is down or stale; their rows show why)"
    )
