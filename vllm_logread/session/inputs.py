"""Files and pipes: open, read as bytes arrive, count lines again, echo."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from typing import IO

from ..errors import InputError
from ..read.framing import count_newlines
from .events import Output
from .session import Session

READ_CHUNK_BYTES = 1 << 20


def open_input(name: str) -> IO[bytes]:
    """Open a log file for binary reading, with a clear error when it cannot be.

    A FIFO is fine (it is read like a pipe); a directory is not a log.
    """
    try:
        st = os.stat(name)
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except OSError as err:
        raise InputError(f"{name}: cannot read it ({err.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{name}: is a directory, not a log file (name the .log file inside it)")
    try:
        return open(name, "rb", buffering=0)  # noqa: SIM115 - closed at process end
    except OSError as err:
        raise InputError(f"{name}: cannot read it ({err.strerror})") from None


def _fileno(stream: IO[bytes]) -> int | None:
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return fd if isinstance(fd, int) else None


def _grow_pipe(fd: int) -> None:
    """Ask for a 1 MiB pipe buffer (Linux F_SETPIPE_SZ): a writer that logs a
    burst is not held back while we print a report. Best effort."""
    try:
        import fcntl

        fcntl.fcntl(fd, 1031, 1 << 20)  # F_SETPIPE_SZ
    except (ImportError, OSError, ValueError):
        pass


def read_chunks(stream: IO[bytes], session: Session | None = None) -> Iterator[bytes | None]:
    """Yield byte chunks as they arrive: a pipe's data is handled at once.

    On a real file descriptor, reads go straight to ``os.read`` (what the
    pipe holds, up to a megabyte, never waiting for a full buffer), and while
    ``session`` has a report pending, a silence of ``quiet_timeout()`` yields
    None. Other streams use ``read1``/``read``.
    """
    fd = _fileno(stream)
    if fd is None:
        read = getattr(stream, "read1", None) or stream.read
        while True:
            try:
                chunk = read(READ_CHUNK_BYTES)
            except OSError as err:
                raise _read_failed(err, session) from None
            if not chunk:
                return
            yield chunk
    import select

    _grow_pipe(fd)
    while True:
        wait = None if session is None else session.quiet_timeout()
        if wait is not None:
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                yield None
                continue
        try:
            chunk = os.read(fd, READ_CHUNK_BYTES)
        except OSError as err:  # /proc/self/mem, a failing disk: EIO after open
            raise _read_failed(err, session) from None
        if not chunk:
            return
        yield chunk


def is_live_stream(stream: IO[bytes], *, is_stdin: bool) -> bool:
    """A pipe, a socket or a terminal (a server's output as it is written), not a
    regular file, which is read to its end: a live input is reported the moment a
    boot states its pool, a file once per boot at its end. Standard input without a
    file descriptor (a test's bytes) stands in for a pipe; a named one for a file."""
    fd = _fileno(stream)
    if fd is None:
        return is_stdin
    try:
        return not stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        return False


def file_recount(stream: IO[bytes], name: str = "the input") -> Callable[[int, int], int] | None:
    """``Session.recount`` for a regular file: its bytes read again with
    ``os.pread`` (offsets from where reading starts); None for anything
    else (a pipe, a socket, a terminal)."""
    fd = _fileno(stream)
    if fd is None:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        base = os.lseek(fd, 0, os.SEEK_CUR)
    except OSError:
        return None

    def recount(a: int, b: int) -> int:
        n, pos = 0, a
        while pos < b:
            try:
                chunk = os.pread(fd, min(READ_CHUNK_BYTES, b - pos), base + pos)
            except OSError as err:
                raise InputError(f"{name}: cannot read it again ({err.strerror or err})") from None
            if not chunk:
                # Truncated or rotated under us (copytruncate): the bytes
                # whose lines were to be counted are gone.
                raise InputError(
                    f"{name}: the file shrank while it was read (truncated or rotated): "
                    "its line numbers cannot be counted"
                )
            n += count_newlines(chunk)
            pos += len(chunk)
        return n

    return recount


def _read_failed(err: OSError, session: Session | None) -> Exception:
    name = "the input" if session is None else session.source
    return InputError(f"{name}: cannot read it ({err.strerror or err})")


def run(session: Session, stream: IO[bytes], *, echo: bool = False) -> Iterator[Output]:
    """Read ``stream`` to its end through ``session``, yielding outputs as they
    arise. With ``echo``, every input byte comes out too (``Output.kind ==
    "echo"``), unchanged, and each report, alert or summary right after the
    line it belongs to.
    """
    lines_out = 0  # newlines passed through so far
    if not echo and session.recount is None:
        session.recount = file_recount(stream, session.source)
    for chunk in read_chunks(stream, session):
        if chunk is None:
            yield from session.quiet()
            continue
        outs = session.feed(chunk)
        if not echo or session.is_metrics:
            yield from outs
            continue
        pos = 0
        for o in outs:
            if o.line is not None and o.line > lines_out and o.kind not in ("warning", "note"):
                stop = pos
                while lines_out < o.line:
                    nl = chunk.find(b"\n", stop)
                    if nl < 0:
                        break
                    stop = nl + 1
                    lines_out += 1
                if stop > pos:
                    yield Output(kind="echo", data=chunk[pos:stop])
                    pos = stop
            yield o
        if pos < len(chunk):
            yield Output(kind="echo", data=chunk[pos:] if pos else chunk)
            lines_out += chunk.count(b"\n", pos)
    yield from session.finish()
