"""Running one piece of work from several Python threads at once."""
from __future__ import annotations

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
