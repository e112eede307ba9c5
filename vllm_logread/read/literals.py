"""Python reprs read value by value: the ``non-default args`` dict and the
engine config line.

vLLM prints both with ``repr``: ``{'model': 'Qwen/Qwen3-8B', 'max_model_len':
8192, ...}`` and ``model='Qwen/Qwen3-8B', ..., max_seq_len=8192, ...``. Newer
versions put dataclass reprs beside the plain values (``'attention_config':
AttentionConfig(backend=None, ...)``, ``compilation_config={"level": 3, ...}``,
``speculative_config=SpeculativeConfig(method='eagle', model='...', ...)``), and
``ast.literal_eval`` of the whole text then fails. So the text is split at its
top-level commas (brackets and quotes respected, in one linear pass), and each
value is read on its own with ``ast.literal_eval`` (never ``eval``); a value
that is not a literal is skipped and its key named, the others still read. A
field nested inside another value (the draft model's ``model=`` inside
``speculative_config``) is never taken for a top-level one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

# Values longer than this are not read (a 10,000-element list is no fact).
_MAX_VALUE_CHARS = 4096

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = frozenset(")]}")


def split_top(text: str, sep: str = ",") -> tuple[list[str], bool]:
    """Split ``text`` at ``sep`` outside brackets and quotes.

    Returns the pieces and whether the text ended balanced (every bracket and
    quote closed). A closing bracket without its opener ends the text there
    (the closing ``}`` of the dict or ``)`` of the config).

    >>> split_top("a=1, b=(2, 3), c='x,y'")
    (['a=1', ' b=(2, 3)', " c='x,y'"], True)
    >>> split_top("a=1, b=[2, 3")
    (['a=1', ' b=[2, 3'], False)
    """
    pieces: list[str] = []
    stack: list[str] = []
    quote: str | None = None
    start = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if quote is not None:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in _OPEN:
            stack.append(_OPEN[ch])
        elif ch in _CLOSE:
            if stack and stack[-1] == ch:
                stack.pop()
            elif not stack:
                break  # the enclosing bracket: the end of the items
            else:
                stack.clear()  # mismatched: resynchronise at top level
        elif ch == sep and not stack:
            pieces.append(text[start:i])
            start = i + 1
        i += 1
    pieces.append(text[start:i])
    return pieces, quote is None and not stack


def literal(text: str) -> tuple[bool, object]:
    """``(True, value)`` for a Python literal, ``(False, None)`` otherwise.

    >>> literal("0.95"), literal("'fp8'"), literal("SomeConfig(x=1)")
    ((True, 0.95), (True, 'fp8'), (False, None))
    """
    text = text.strip()
    if not text or len(text) > _MAX_VALUE_CHARS:
        return False, None
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return False, None


@dataclass(frozen=True, slots=True)
class ReadItems:
    """What a repr gave: the values read, the keys skipped, and whether the
    text was whole (the dict's ``}`` reached, nothing left open)."""

    values: dict[str, object]
    skipped: tuple[str, ...]
    is_whole: bool


def read_dict_repr(text: str) -> ReadItems:
    """Read ``{'k': v, ...}`` item by item.

    >>> r = read_dict_repr("{'model': 'm', 'attention_config': Cfg(a=1, b=[2]), 'block_size': 32}")
    >>> r.values, r.skipped, r.is_whole
    ({'model': 'm', 'block_size': 32}, ('attention_config',), True)
    >>> read_dict_repr("{'model': 'm', 'max_model_len': 81").values
    {'model': 'm'}
    >>> read_dict_repr("{'model': 'm', 'max_num_seqs': -24,096}").values
    {'model': 'm'}
    """
    body = text.strip()
    if not body.startswith("{"):
        return ReadItems({}, (), False)
    inner = body[1:]
    pieces, balanced = split_top(inner)
    consumed = sum(len(p) + 1 for p in pieces) - 1
    closed = balanced and consumed < len(inner) and inner[consumed] == "}"
    values: dict[str, object] = {}
    skipped: list[str] = []
    last: str | None = None  # the key of the item before this piece
    for k, piece in enumerate(pieces):
        if not piece.strip():
            continue
        key_text, colon, value_text = _split_key(piece, ":")
        ok, key = literal(key_text)
        if not colon or not ok or not isinstance(key, str):
            # No "key: value": a comma inside the item before split it
            # ("'max_num_seqs': -24,096"), so that item's value is not whole.
            if last is not None and last in values:
                del values[last]
                skipped.append(last)
            skipped.append(key_text.strip()[:60])
            last = None
            continue
        last = key
        if k == len(pieces) - 1 and not closed:
            skipped.append(key)  # the value may be cut short
            continue
        ok, value = literal(value_text)
        if ok:
            values[key] = value
        else:
            skipped.append(key)
    return ReadItems(values, tuple(skipped), closed)


def read_config_repr(text: str) -> ReadItems:
    """Read ``k=v, k=v, ...`` (the engine config line) item by item; values
    are kept as their text (``torch.bfloat16``, ``fp8``, ``None`` are not all
    literals), keyed by the top-level names only.

    >>> r = read_config_repr("model='m', speculative_config=S(model='d', k=1), max_seq_len=8192")
    >>> r.values
    {'model': "'m'", 'speculative_config': "S(model='d', k=1)", 'max_seq_len': '8192'}
    """
    pieces, balanced = split_top(text)
    values: dict[str, object] = {}
    skipped: list[str] = []
    last: str | None = None
    for k, piece in enumerate(pieces):
        key, eq, value = _split_key(piece, "=")
        key = key.strip()
        if not eq or not key.isidentifier():
            if piece.strip():
                # "max_seq_len=8,192": the field before is not whole. (vLLM's
                # 0.6.3 missing comma, "a=False b=True", has no such piece.)
                if last is not None and last in values:
                    del values[last]
                    skipped.append(last)
                skipped.append(key[:60])
            last = None
            continue
        last = key
        if k == len(pieces) - 1 and not balanced:
            skipped.append(key)
            continue
        values.setdefault(key, value.strip())
    return ReadItems(values, tuple(skipped), balanced)


def _split_key(piece: str, sep: str) -> tuple[str, str, str]:
    """``key<sep>value`` split at the first ``sep`` outside quotes."""
    quote: str | None = None
    for i, ch in enumerate(piece):
        if quote is not None:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == sep:
            return piece[:i], sep, piece[i + 1 :]
        elif ch in _OPEN:
            break
    return piece, "", ""
