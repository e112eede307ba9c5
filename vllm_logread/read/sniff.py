"""Whether an input is a Prometheus ``/metrics`` text, from its first lines.

Every input's first bytes are sniffed (session.py), so this sits apart from
metrics.py: a boot log's report imports these few lines and not the /metrics
reader (its five dataclasses and regexes, about 4 ms of a short log's start-up;
docs/performance.md, "Start-up").
"""

from __future__ import annotations

import re

# A /metrics text is tens of KB (a 0.32 server with histograms: 60 KB); a
# bigger answer is not one.
MAX_METRICS_BYTES = 64 << 20


# How far into the input the content sniff looks (first lines only).
SNIFF_BYTES = 64 * 1024


_SAMPLE_LINE = re.compile(rb"(?:vllm|sglang):[a-zA-Z0-9_:]*(?:\{|[ \t]+\S)")


def looks_like_metrics(head: bytes) -> bool:
    """Whether an input is a Prometheus text, from its first non-empty lines:
    a ``# HELP``/``# TYPE`` line, or a ``vllm:``/``sglang:`` sample line
    (a grep of the text) before any other line. A log line never starts so.

    >>> looks_like_metrics(b"\\n# HELP python_gc_objects_collected_total Objects\\n")
    True
    >>> looks_like_metrics(b'vllm:cache_config_info{block_size="16"} 1.0\\n')
    True
    >>> looks_like_metrics(b"INFO 11-29 10:00:00 [core.py:1] # HELP\\n")
    False
    """
    for raw in head[:SNIFF_BYTES].removeprefix(b"\xef\xbb\xbf").split(b"\n")[:50]:
        line = raw.strip()
        if not line:
            continue
        if line.startswith((b"# HELP ", b"# TYPE ")):
            return True
        if line.startswith(b"#"):
            continue  # another comment: look at the next line
        return _SAMPLE_LINE.match(line) is not None
    return False
