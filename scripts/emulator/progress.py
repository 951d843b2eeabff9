"""Progress lines of long work, on stderr."""
import sys
import time

_PROGRESS_T0 = []


def progress(message):
    """A step of long work, stamped with seconds since the first step (where the time goes at k=16)."""
    now = time.monotonic()
    _PROGRESS_T0[:] = _PROGRESS_T0 or [now]
    print('... [%6.1f s] %s' % (now - _PROGRESS_T0[0], message), file=sys.stderr, flush=True)
