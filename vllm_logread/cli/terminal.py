"""What a live pipe needs from the CLI: a stdout that never fails, signals as
exceptions.

``vllm serve ... 2>&1 | vllm-logread`` sits between a server that must never
be stalled or killed and a reader that may go away (``| head -3``). So output
goes through a ``Sink`` that goes quiet for good when its reader closes, and
reading goes on to the end of input. Ctrl-C (SIGINT) and SIGTERM become one
``Interrupted`` exception in the reading loop, so the CLI can print the load
so far and exit 130 or 143 without a traceback. The library never prints or
exits: the CLI hands these the stream and decides.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import IO, Protocol

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):  # noqa: N818 - like KeyboardInterrupt, not an error
    """SIGINT or SIGTERM arrived; ``exit_code`` is the shell's 128 + signal
    number (130 for SIGINT, 143 for SIGTERM).

    A BaseException, as KeyboardInterrupt, so no ``except Exception`` on the
    way swallows it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.exit_code = 128 + signum


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Interrupted(signum)


@contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """Inside, SIGINT and SIGTERM raise Interrupted in the main thread.

    A blocking read or select is interrupted too (PEP 475 retries it only when
    the handler returns; ours raises).
    """
    old = {s: signal.signal(s, _raise) for s in _SIGNALS}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


@contextmanager
def signals_ignored() -> Iterator[None]:
    """Inside, a second Ctrl-C does not cut the summary short with a traceback."""
    old = {s: signal.signal(s, signal.SIG_IGN) for s in _SIGNALS}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


class Sink:
    """A binary output that goes quiet for good when its reader closes.

    After a write fails (EPIPE from ``| head``, a full disk), every later
    write is dropped, and the file descriptor is pointed at /dev/null so that
    Python's own flush at exit cannot fail and print "Exception ignored".
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.is_closed = False

    def write(self, data: bytes) -> None:
        if self.is_closed or not data:
            return
        try:
            self._stream.write(data)
            self._stream.flush()
        except (OSError, ValueError):
            self._close()

    def line(self, text: str) -> None:
        """``text`` and a newline, in UTF-8."""
        self.write(text.encode("utf-8", "replace") + b"\n")

    def _close(self) -> None:
        self.is_closed = True
        try:
            fd = self._stream.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        except (AttributeError, OSError, ValueError):
            pass


class Console(Protocol):
    """Where a job reads standard input from and says things.

    ``stdin`` is called only when standard input is read (``-``, or no file),
    so a closed stdin does not matter to ``vllm-logread server.log``.
    """

    def stdin(self) -> IO[bytes]:
        """Standard input, binary."""
        ...

    def write(self, data: bytes) -> None:
        """Bytes to stdout as they are: input lines passed through (echo)."""
        ...

    def out(self, text: str) -> None:
        """``text`` and a newline to stdout."""
        ...

    def err(self, text: str) -> None:
        """``text`` and a newline to stderr: warnings and the exit's reason."""
        ...
