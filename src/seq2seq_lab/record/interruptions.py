"""A run stopped from outside (SIGTERM: a scheduler's preemption or time limit, ``kill``;
SIGINT: Ctrl-C) is recorded as ``interrupted`` with the signal's name, and the process exits
with 128 + the signal number (143 for SIGTERM, 130 for SIGINT), as a shell reports a process
the signal killed.

How the signal stops the run depends on who is running:
- inside ``trainer.fit``/``trainer.test``, Lightning's own SIGTERM handler (``_SignalConnector``)
  wraps the one installed here: Lightning finishes the current batch, tells every DDP rank, and
  raises ``SIGTERMException`` (a ``SystemExit``); on Ctrl-C it catches the KeyboardInterrupt,
  calls the callbacks' ``on_exception`` and exits with ``sys.exit(1)``;
- outside them (data preparation, writing outputs) the handler here raises at once.
A signal Lightning let pass (one arriving during the last batch) is raised by
:meth:`SignalRecorder.raise_if_received`, which ``train`` calls after fit and after test.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

HANDLED = (signal.SIGTERM, signal.SIGINT)


class Interrupted(BaseException):
    """The run was stopped by ``signum``. A BaseException, like KeyboardInterrupt, so that no
    ``except Exception`` (a sweep going on past a failed job) swallows it."""

    def __init__(self, signum: int) -> None:
        self.signum = int(signum)
        self.signal_name = signal.Signals(signum).name
        super().__init__(f"interrupted by {self.signal_name}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class SignalRecorder:
    """Records the first SIGTERM/SIGINT received between :meth:`install` and the end of
    :meth:`held` (``received``: the signal number, None until then), then puts the previous
    handlers back. Handlers can only be installed from the main thread; elsewhere it records
    nothing."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._raised = False  # one interruption raised per run; later signals are only noted
        self._held = False
        self._previous: dict[int, Any] = {}
        # one bound method, installed and compared by identity (each access makes a new one)
        self._handler = self._handle

    def install(self) -> SignalRecorder:
        if threading.current_thread() is threading.main_thread():
            for signum in HANDLED:
                self._previous[signum] = signal.signal(signum, self._handler)
        return self

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Inside: signals are only noted (the run's record is being written); on exit the
        handlers found by :meth:`install` are put back."""
        self._held = True
        try:
            yield
        finally:
            for signum, handler in self._previous.items():
                signal.signal(signum, handler)
            self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
        if self._raised or self._held:
            return  # already stopping, or writing the record: let that finish
        if signum == signal.SIGINT:
            self._raised = True
            raise KeyboardInterrupt  # Python's own SIGINT behaviour (Lightning expects it)
        if signal.getsignal(signal.SIGTERM) is self._handler:
            self._raised = True
            raise Interrupted(signum)  # no trainer running: nobody else will stop the run
        # else Lightning's handler called this one after its own: it stops at the batch end

    def raise_if_received(self) -> None:
        """Raise :class:`Interrupted` if a signal arrived (one Lightning did not act on)."""
        if self.received is not None:
            self._raised = True
            raise Interrupted(self.received)

    def interruption(self, error: BaseException) -> Interrupted | None:
        """The :class:`Interrupted` that ``error`` (raised out of the run) stands for: itself,
        or the SystemExit/KeyboardInterrupt Lightning turns a recorded signal into; None when
        ``error`` is not an interruption."""
        if isinstance(error, Interrupted):
            return error
        if isinstance(error, KeyboardInterrupt | SystemExit) and self.received is not None:
            return Interrupted(self.received)
        if isinstance(error, KeyboardInterrupt):
            return Interrupted(signal.SIGINT)
        return None
