"""How a session ends, whichever way it ends.

``end_on_signals``: every signal that ends a session (Ctrl-C's SIGINT,
SIGTERM, a closed terminal's SIGHUP, Ctrl-\\'s SIGQUIT) becomes an
exception, so that the ``with`` block of every fabric tears it down. After
SIGHUP the terminal is gone and writing to it fails: output goes to
/dev/null from then on.

``signals_deferred``: teardown runs with those signals held, in this
process and in every command it starts meanwhile (a terminal's Ctrl-C
reaches the whole foreground process group: a second one would otherwise
kill the ``ip`` deleting the veths). Held, not lost: ``caught`` says which
came, and the caller raises their exception once teardown is done.

``Steps``: each teardown step runs even when one before it failed; the
errors are reported together.
"""
import contextlib
import os
import signal

from scripts.emulator.errors import SetupError

ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class TeardownError(SetupError):
    pass


def ending(signum):
    """The exception that ends the session on signal ``signum``."""
    return KeyboardInterrupt() if signum == signal.SIGINT else SystemExit(128 + signum)


def detach_output():
    """Point stdin, stdout and stderr at /dev/null (the terminal hung up)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


def _end_session(signum, frame):
    if signum == signal.SIGHUP:
        detach_output()
    raise ending(signum)


def end_on_signals():
    """Make every ending signal raise its exception in the main thread."""
    for signum in ENDING_SIGNALS:
        signal.signal(signum, _end_session)


@contextlib.contextmanager
def signals_deferred():
    """Hold the ending signals for the block; yields the list of those that came."""
    caught = []

    def hold(signum, frame):
        if signum == signal.SIGHUP:
            detach_output()
        if signum not in caught:
            caught.append(signum)

    previous = {signum: signal.signal(signum, hold) for signum in ENDING_SIGNALS}
    # blocked in this thread, and so in every child it starts (the mask survives exec)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ENDING_SIGNALS)
    try:
        yield caught
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # what came meanwhile reaches ``hold`` now
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class Steps:
    """Teardown steps, each run whatever happened to the ones before."""

    def __init__(self, progress=None):
        self.errors = []
        self.progress = progress  # told each step as it starts (a large fabric's take minutes)

    def run(self, what, step, *args, **kwargs):
        if self.progress:
            self.progress(what)
        try:
            step(*args, **kwargs)
        except Exception as error:  # the remaining steps must run; reported together at the end
            self.errors.append('%s: %s' % (what, error))

    def raise_errors(self):
        if self.errors:
            raise TeardownError('; '.join(self.errors))
