"""Running one piece of work from several Python threads at once."""
from __future__ import annotations

import contextlib
import threading


def in_threads(work, count=4):
    """work(k) for k < count, all threads released together by a barrier;
    the results in order. The first exception of any thread is re-raised
    on the caller's thread."""
    out, errors = [None] * count, []
    start = threading.Barrier(count)

    def body(k):
        try:
            start.wait()
            out[k] = work(k)
        except BaseException as e:  # re-raised on the caller's thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out


@contextlib.contextmanager
def one_thread():
    """The core's parallel loops (``set_max_threads``) and, where threadpoolctl
    is installed, BLAS on one thread for the duration; restored afterwards.
    For experiments whose CI-size steps are too small to gain from a team:
    on a shared machine a team stalls at every barrier (a 16^3 plate training
    run of 24 steps: 1.6 s wall on one thread, 5.9 s with teams of two, both
    at load 12)."""
    import directable as dr

    before = dr._core.max_threads()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        limits = contextlib.nullcontext()
    else:
        limits = threadpool_limits(1)
    dr._core.set_max_threads(1)
    try:
        with limits:
            yield
    finally:
        dr._core.set_max_threads(before)
