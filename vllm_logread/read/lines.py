"""Physical lines -> LogLine: undo what terminals, Docker and pastes add.

A vLLM record reaches us wrapped in layers, outermost first: a capture's own
prefix (``docker logs -t`` RFC 3339 stamps, journald ``Aug 18 14:14:59 host
python3[28145]:``, CI stamps ``[2024-07-08 15:17:34]``, k9s box borders ``│``,
paste markers ``>>``), ANSI colours (as ESC bytes or as caret text
``^[[0;36m``), then the process tag ``(EngineCore_DP0 pid=7)`` that vLLM or
Ray adds, then vLLM's header ``INFO 11-29 12:34:56 [file.py:123]`` (no ``[``
before 0.8.0). We peel them in that order and keep the line number, so every
fact can point back at its line.

All regexes here are anchored and built from bounded, non-overlapping pieces,
so they run in linear time on adversarial lines.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex as re

from .grammar import lazy_regex

# ESC-based CSI sequences (colours, erase-line from tqdm) and their caret
# rendering when a log was pasted through a tool that made them visible, or
# their escaped spellings ("\x1b[0;36m", "\033[0m", "\e[32m", "\u001b[90m", "␛[0m").
_ANSI = re.compile(
    r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]{0,200}(?:\x07|\x1b\\)|\^\[\[[0-9;]*m"
    r"|(?:\\x1b|\\033|\\e|\\u001b|␛)\[[0-9;]{0,20}m"
)


# An SGR colour code whose ESC byte a paste lost: "[0;36m(EngineCore pid=1)[0;0m
# [32mINFO[0m [90m11-29 10:00:40[0m". Only SGR forms vLLM and terminals print
# (reset, bold/dim, the 8/16 colours, 256-colour and RGB forms), never followed
# by "]" ("[5m]" is five minutes), so ordinary bracketed text stays as it is.
_SGR_PARAM = r"(?:0?[0-9]|2[1-9]|3[0-79]|4[0-79]|9[0-7]|10[0-7]|[34]8;5;\d{1,3}|[34]8;2;\d{1,3};\d{1,3};\d{1,3})"
_BARE_SGR = lazy_regex(rf"\[(?:{_SGR_PARAM}(?:;{_SGR_PARAM}){{0,4}})?m(?!\])")
# ... and only in a line that also closes a colour the way vLLM does ("[0m",
# "[0;0m"): a coloured line always does.
_BARE_RESET = lazy_regex(r"\[0(?:;0)?m(?!\])")


# What a vLLM record (or a line of its traceback) starts with, once its wrappers are
# off: a level, a process tag, a colour code, a bracket, a paste quote, an exception.
# The grep and list-item wrappers below are peeled only before one of these, so a
# message that starts with a number ("0: NVIDIA L4") stays as it is.
_LEVEL_START = r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)[ ]"
_TAG_START = r"\([^()\n]{1,120}?[ ]pid="
_RECORD_START = (
    rf"{_LEVEL_START}|{_TAG_START}|\[|\x1b|\^\[|>|`"
    r"|Traceback[ ]|(?:[A-Za-z_]\w{0,60}\.){0,5}[A-Z]\w{0,60}(?:Error|Exception):"
)


# Outer wrappers, tried repeatedly at the start of a line. Each is one
# alternative; the loop stops when none matches.
_WRAPPERS = re.compile(
    r"""
    ^(?:
        [ \t]+                                               # indentation
      | [│┃║|](?:[ \t]|$)                                    # k9s/box border, web-table cell
      | >+[ \t]?                                             # paste quote markers ">> "
      | (?:[-*+][ \t]{1,4})?`{1,3}(?=[^`\s])                # Markdown code quotes "`INFO ...`"
      | --$                                                  # table separator rows
      | \d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?    # docker -t, kubectl --timestamps,
        (?:Z|[+-]\d\d:?\d\d)?[ \t]+                          #   Loki / CI exports
        (?!-[ ](?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[ ]-)     #   (not Python logging's own stamp)
      | \[\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?  # "[2024-07-08 15:17:34] "
        (?:Z|[+-]\d\d:?\d\d)?\][ \t]*
      | \d{4}-\d\d-\d\d[ ]\d\d:\d\d:\d\d[ ]\|[ ]\w+[ ]\|[ ]\w+[ ]\|[ ]  # FastChat "... | ERROR | stderr | "
      | [^\s\d(\[][^\s]{0,11}[ ]{1,2}\d{1,2}[ ]\d\d:\d\d:\d\d[ ]   # journald: "авг 18 14:14:59 host
        [^\s]{1,64}[ ][^\s:\[]{1,64}(?:\[\d{1,10}\])?:[ ]          #   python3[28145]: "
      | \[rank\d{1,6}\]:[ ]?                                 # torchrun "[rank0]: "
      | \[Stage-\d{1,4}\][ ]?                                # vLLM-Omni stage tags
      | (?:[^\s:]{1,255}[:-])?\d{1,9}[:-](?=<REC>)          # grep -n "1234:", "vllm.log:1234:",
                                                             #   its context lines "1234-"
      | [^\s:]{1,255}:(?=<TAG>)                            # grep over files "vllm.log:(Engine..."
      | \d{1,9}\t                                            # cat -n / nl "    12<TAB>"
      | (?:[-*+]|\d{1,4}[.)])[ \t]{1,4}(?=<REC>)            # Markdown list items "- ", "1. "
    )
    """.replace("<REC>", _RECORD_START).replace("<TAG>", _TAG_START),
    re.VERBOSE,
)


# Right-hand wrappers: k9s borders and padding, Ray's dedup note. Searched in
# reverse ("(?r)", from the end of the line): a forward search retries the
# space runs at every start, quadratic on "x" + 60,000 spaces + "y" (minutes).
_TRAILERS = re.compile(
    r"(?r)(?:[ \t]*[│┃║])?[ \t]*(?:\[repeated \d{1,9}x across cluster\][ \t]*)?$"
)


# "(EngineCore_DP0 pid=7) ", "(VllmWorker rank=0 pid=7) ", "(RayWorkerWrapper pid=7, ip=10.0.0.1) ".
# A paste may elide the pid: "(EngineCore_DP0 pid=...)", "pid=…", "pid=<pid>", "pid=XXXX".
_PID = r"(?:\d{1,10}|\.{2,6}|…|<pid>|<PID>|\*{1,10}|[xX]{1,10}|N)"
_PROCESS = re.compile(rf"^\(([^()\n]{{1,120}}? pid={_PID}(?:, ip=[0-9a-fA-F.:]{{1,64}})?)\)[ \t]*")


# SGLang's header names its rank instead: "[2025-08-13 14:27:06 TP0] ",
# "[2025-11-04 05:27:13 DP0 TP0 EP0] " (report/sglang.py); the ranks are its process tag.
_SGLANG_RANKS = re.compile(
    r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d((?: [A-Z]{2,8}\d{1,6}){1,8})\][ \t]*"
)


# vLLM's header in every vintage. The level may be preceded by an arbitrary
# VLLM_LOGGING_PREFIX, so it is searched, not matched; "[" is absent before 0.8.
_HEADER = re.compile(
    r"(?:^|(?<=[\s\]]))(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)[ ]"
    r"(?:(\d\d-\d\d[ ]\d\d:\d\d:\d\d)(?:[.,]\d{1,6})?[ ])?"  # group 2: the time
    r"\[?([^\s\[\]]{1,200}:\d{1,7})\][ ]?"  # group 3: the call site "file.py:123"
)


# Python logging's default-ish format used by other libraries inside a tag:
# "2026-02-02 18:25:03,837 - INFO - autotuner.py:256 - msg".
_PYLOG = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - (DEBUG|INFO|WARNING|ERROR|CRITICAL) - [^\s]{1,200} - "
)


# A header whose level was trimmed: "[kv_cache_utils.py:868] msg".
_BARE_SOURCE = re.compile(r"^\[([^\s\[\]]{1,200}\.py:\d{1,7})\][ ]?")


# What a pager or a paste tool puts where it cut a line short ("…", "[...]",
# "(truncated)"), often with the next record glued after it. Plain "..." is no
# such marker (vLLM's "Starting to load model X..." ends in three dots).
_TRUNCATED = r"(?:…|\[\.\.\.\]|\[…\]|\(truncated\)|\[truncated\]|<truncated>)"
_CUT_END = lazy_regex(rf"(?r){_TRUNCATED}[ \t]*$")


# A line quoted as Markdown inline code: "`INFO ... tokens`", "- `...`", "> `...`".
_QUOTED = lazy_regex(r"^([ \t]{0,8}(?:>{1,4}[ \t]?){0,4})(?:[-*+][ \t]{1,4})?`{1,3}(?=[^`\s])")


# Where a second record starts inside one physical line (records glued
# together when a capture lost a newline).
# A paste that lost its newlines altogether joins records with one space ("... 67,856
# tokens INFO 04-30 16:20:37 [kv_cache_utils.py:637] Maximum concurrency ..."): a space
# splits them too, unless what stands before it is a process tag, a bracketed prefix, a
# colour code or a "name:" (a record's own head, which the header follows).
_GLUED_HEAD = (
    rf"(?=(?:\([^()\n]{{1,120}}? pid={_PID}\)[ ])?"
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[ ]\d\d-\d\d[ ]\d\d:\d\d:\d\d[ ])"
)
_GLUE = re.compile(rf"(?:(?<=\S)|(?<={_TRUNCATED}[ ])){_GLUED_HEAD}")
_SPACE_GLUE = lazy_regex(
    rf"(?:(?<=\S)|(?<={_TRUNCATED}[ ])|(?<=[^\s)\]:][ ])(?<!\[[0-9;]{{0,24}}m[ ])){_GLUED_HEAD}"
)
# (Tried only on a line that names two levels: a record has one.)
_LEVELS = ("DEBUG ", "INFO ", "WARNING ", "ERROR ", "CRITICAL ")


# What the split above leaves of a line's wrappers alone, when a process tag follows
# them ("1234:", "vllm.log:57:", "- ", "  3. ", "> * ", "    57<TAB>"): not a record.
_PREFIX_ONLY = lazy_regex(
    r"^[ \t>│┃║|*+`-]{0,16}(?:[^\s:]{1,255}[:-])?(?:\d{1,9}[:.)\t-])?[ \t]{0,8}$"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class LogLine:
    """One record, unwrapped.

    Attributes:
        number: 1-based physical line number (the first, for a joined record).
        process: the process tag, e.g. ``EngineCore_DP0 pid=200``, or None.
        level: ``INFO``, ``WARNING``, ... or None when the line had no header.
        message: the text after the header (the whole line when there is none).
        time: the header's ``MM-DD HH:MM:SS`` (no year, fraction dropped), or None.
        site: the logger call that printed it, ``kv_cache_utils.py:716`` (the
            file's base name and line, as vLLM's header gives them), or None.
            Which release printed a log follows from these (docs/fingerprint.md).
    """

    number: int
    process: str | None
    level: str | None
    message: str
    time: str | None = None
    site: str | None = None


def strip_ansi(text: str) -> str:
    """Remove colour codes in ESC and caret form, and SGR codes whose ESC was lost.

    >>> strip_ansi("^[[0;36m(EngineCore pid=1)^[[0;0m INFO")
    '(EngineCore pid=1) INFO'
    >>> strip_ansi("[0;36m(EngineCore pid=1)[0;0m [32mINFO[0m took [5m]")
    '(EngineCore pid=1) INFO took [5m]'
    >>> strip_ansi("retry in [5m] [32m")
    'retry in [5m] [32m'
    """
    if "\x1b" in text or "^[" in text or "[m" in text or "\\" in text or "␛" in text:
        text = _ANSI.sub("", text)
    if "0m" in text and _BARE_RESET.search(text):
        text = _BARE_SGR.sub("", text)
    return text


def _peel(text: str) -> tuple[str | None, str]:
    """Strip outer wrappers and process tags; return (process, rest)."""
    process: str | None = None
    for _ in range(16):  # bounded: each pass removes at least one character
        m = _WRAPPERS.match(text)
        if m and m.end() > 0:
            text = text[m.end() :]
            continue
        p = _PROCESS.match(text)
        if p:
            # Ray V2 nests "(RayWorkerProc pid=1) (Worker_TP1 pid=2)": the
            # innermost tag names the vLLM process, so the last one wins.
            process = p.group(1)
            text = text[p.end() :]
            continue
        r = _SGLANG_RANKS.match(text)
        if r:
            process = r.group(1).strip()
            text = text[r.end() :]
            continue
        break
    return process, text


def split_records(text: str) -> list[str]:
    """Split a physical line into the records it holds.

    A ``\\r`` inside a line separates tqdm redraws or CRLF endings; a header in
    the middle of a line means two records were glued together.

    >>> split_records("a\\rINFO 01-01 00:00:00 x.py:1] b")
    ['a', 'INFO 01-01 00:00:00 x.py:1] b']
    >>> split_records("INFO 01-01 00:00:00 [x.py:1] 378 INFO 01-01 00:00:00 [y.py:2] b^M")
    ['INFO 01-01 00:00:00 [x.py:1] 378 ', 'INFO 01-01 00:00:00 [y.py:2] b']
    """
    if "^M" in text:
        # A carriage return made visible ("cat -v", vim, a paste tool): "...tokens^M".
        text = text.replace("^M", "\r")
    parts = [p for p in text.split("\r") if p.strip()] if "\r" in text else [text]
    out: list[str] = []
    for part in parts:
        if "`" in part:
            part = _unquote(part)
        if part.count(":") < 4:
            out.append(part)
            continue
        glue = _SPACE_GLUE if sum(map(part.count, _LEVELS)) >= 2 else _GLUE
        if glue.search(part):
            pieces = [s for s in glue.split(part) if s.strip()]
            if len(pieces) > 1 and _PREFIX_ONLY.match(pieces[0]):
                pieces = pieces[1:]  # "1234:" before "(EngineCore_DP0 pid=7) INFO ...": no record
            out.extend(pieces)
        else:
            out.append(part)
    if "…" in text or "truncated" in text or "[...]" in text:
        out = [_uncut(r) for r in out]
    return out


def _unquote(text: str) -> str:
    """A line quoted as Markdown inline code, without its backticks.

    >>> _unquote("- `INFO 01-01 00:00:00 [x.py:1] Using max model len 8192` ")
    'INFO 01-01 00:00:00 [x.py:1] Using max model len 8192'
    """
    m = _QUOTED.match(text)
    if m is None:
        return text
    rest = text[m.end() :].rstrip(" \t")
    if not rest.endswith("`"):
        return text
    return m.group(1) + rest.rstrip("`")


def _uncut(record: str) -> str:
    """A record a pager cut short, without its marker and without the word the
    cut went through ("... num_gpu_blocks is: 15…" must not read 15).

    >>> _uncut("Using max model len 81 (truncated)"), _uncut("num_gpu_blocks is: 15…")
    ('Using max model len', 'num_gpu_blocks is:')
    """
    m = _CUT_END.search(record)
    if m is None:
        return record
    # Where the cut went is unknown even with a space before the marker: the
    # word before it goes too.
    head = record[: m.start()].rstrip(" \t")
    cut = max(head.rfind(" "), head.rfind("\t"))
    return head[:cut] if cut >= 0 else ""


def parse_line(text: str, number: int) -> LogLine:
    """Unwrap one record (no line breaks inside) into a LogLine.

    >>> ll = parse_line("(EngineCore pid=4) INFO 11-29 12:34:56 [kv.py:1] GPU KV cache size: 5 tokens", 7)
    >>> (ll.number, ll.process, ll.level, ll.message, ll.site)
    (7, 'EngineCore pid=4', 'INFO', 'GPU KV cache size: 5 tokens', 'kv.py:1')
    """
    text = strip_ansi(text)
    process, rest = _peel(text)
    if rest.startswith("{") and '"message"' in rest:
        record = _json_record(rest, number)
        if record is not None:
            return record
    rest = _TRAILERS.sub("", rest, count=1)
    level: str | None = None
    time: str | None = None
    site: str | None = None
    h = _HEADER.search(rest, endpos=min(len(rest), 400))
    if h:
        level, time, site = h.group(1), h.group(2), _base_name(h.group(3))
        rest = rest[h.end() :]
    else:
        m = _PYLOG.match(rest) or _BARE_SOURCE.match(rest)
        if m:
            # Python logging's default format is another library's (no vLLM call site).
            level = m.group(1) if m.re is _PYLOG else None
            site = None if m.re is _PYLOG else _base_name(m.group(1))
            rest = rest[m.end() :]
    return LogLine(
        number=number, process=process, level=level, message=rest.strip(), time=time, site=site
    )


def _base_name(site: str) -> str:
    """A call site as vLLM prints it: the file's base name and line (a custom
    format may give a path).

    >>> _base_name("vllm/v1/core/kv_cache_utils.py:716"), _base_name("gpu_worker.py:233")
    ('kv_cache_utils.py:716', 'gpu_worker.py:233')
    """
    return site.rsplit("/", 1)[-1]


def header_time(head: str) -> str | None:
    """The time in vLLM's header, from the text before a line's message.

    >>> header_time("(APIServer pid=1) INFO 11-29 10:00:58 [loggers.py:123] ")
    '11-29 10:00:58'
    """
    return header_time_at(head)[0]


def header_time_at(head: str) -> tuple[str | None, int]:
    """``header_time`` and where the time starts in ``head`` (-1: no time, or
    colour codes were stripped first so no offset in ``head`` holds it).

    Serving mode reads the time of the next lines of the same layout straight
    from their bytes at that offset (read/serving.py): ``_HEADER`` treats every
    digit alike, so lines that differ only in the digits of the time match it
    the same way.

    >>> header_time_at("(APIServer pid=1) INFO 11-29 10:00:58 [loggers.py:123] ")
    ('11-29 10:00:58', 23)
    """
    text = strip_ansi(head)
    h = _HEADER.search(text)
    if h is None or h.group(2) is None:
        return None, -1
    return h.group(2), h.start(2) if text is head else -1


def _json_record(text: str, number: int) -> LogLine | None:
    """A record from vLLM's JSON formatter (0.32+ ``--logging-config.formatter json``):
    ``{"asctime": ..., "levelname": "INFO", "processName": "EngineCore", "process": 7,
    "message": "GPU KV cache size: ..."}``.
    """
    import json

    if len(text) > 1_000_000:
        return None
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("message"), str):
        return None
    name, pid = obj.get("processName"), obj.get("process")
    process = f"{name} pid={pid}" if isinstance(name, str) and isinstance(pid, int) else None
    level = obj.get("levelname")
    return LogLine(
        number=number,
        process=process,
        level=level if isinstance(level, str) else None,
        message=obj["message"].strip(),
    )


def has_header(text: str) -> bool:
    """Whether a physical line starts a new record (a header or process tag)."""
    text = strip_ansi(text)
    process, rest = _peel(text)
    return process is not None or _HEADER.search(rest, endpos=min(len(rest), 400)) is not None


# The labels a worker (one rank of a tensor/pipeline-parallel engine) prints under,
# every era (VLLM_LINES.md, process labels): "VllmWorkerProcess pid=N" (V0 0.4.2-0.10.2,
# ranks 1.. only: rank 0 is the driver, unlabelled), "VllmWorker rank=N pid=M"
# (V1 0.6.5-0.10.0), "VllmWorker TP0" / "VllmWorker PP0_TP1" (0.10.1), "Worker_TP0",
# "Worker_PP1_TP0", "Worker_DP0_TP0_EP0", "_DCPn", "_PCPn" (0.10.2+), Ray's
# "RayWorkerWrapper pid=N[, ip=...]" / "RayWorkerProc pid=N", SGLang's "TP0" / "DP0 TP0 EP0"
# header ranks and torchrun's "[rank0]: " prefix.
_WORKER_LABEL = re.compile(
    r"""^(?:
        (?:VllmWorker|Worker)[ _](?P<parts>(?:(?:DP|PP|PCP|TP|DCP|EP)\d{1,6}_?){1,6})\b
      | VllmWorker[ ]rank=(?P<rank>\d{1,6})\b
      | (?P<pidonly>VllmWorkerProcess|RayWorkerWrapper|RayWorkerProc)[ ]pid=
      | (?P<sglang>(?:(?:DP|PP|TP|EP)\d{1,6}[ ]?){1,6})$
    )""",
    re.VERBOSE,
)
_RANK_PREFIX = re.compile(r"^[ \t]*\[rank(\d{1,6})\]:")


def worker_label(process: str | None, record: str = "") -> str | None:
    """The rank a line's worker label names, or None (an engine, an API server, no tag).

    Named ranks come back as their parts (``TP1``, ``PP1_TP0``, ``DP0_TP0_EP0``, SGLang's
    ``DP0 TP1``), ``rank=N`` or torchrun's ``rankN``, each as the line prints it; a label
    that names only a process keeps its pid, one rank a pid.

    >>> worker_label("Worker_PP1_TP0 pid=9"), worker_label("VllmWorker rank=2 pid=7")
    ('PP1_TP0', 'rank=2')
    >>> worker_label("VllmWorkerProcess pid=13105"), worker_label(None, "[rank1]: INFO x")
    ('VllmWorkerProcess pid=13105', 'rank1')
    >>> worker_label("EngineCore_DP0 pid=200") is None
    True
    """
    if process:
        m = _WORKER_LABEL.match(process)
        if m is not None:
            if m.group("parts"):
                return m.group("parts").rstrip("_")
            if m.group("rank"):
                return f"rank={int(m.group('rank'))}"
            if m.group("sglang"):
                return m.group("sglang").strip()
            return process
    r = _RANK_PREFIX.match(record) if record else None
    return None if r is None else f"rank{r.group(1)}"
