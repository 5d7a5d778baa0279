"""The one executor layer for the offline, embarrassingly parallel work
(enrichment runs, fluid training runs, gain searches, batches of LQR solves).

Every offline step that takes ``executor=`` hands its tasks to
:func:`map_tasks`, which accepts

- ``None`` (the default): in this process, one task after the other, each
  task's C++ calls on all cores (as before this layer existed);
- any :class:`concurrent.futures.Executor` (a ``ProcessPoolExecutor`` with
  the ``fork``, ``forkserver`` or ``spawn`` start method, a thread pool);
- a :class:`dask.distributed.Client` (``pip install directable[dask]``);
- ``"ray"`` after ``ray.init()`` (``pip install directable[ray]``);
- an adapter: any object with ``submit(fn, *args)`` returning futures with
  ``done()``, ``result()`` and ``cancel()`` (the concurrent.futures protocol).

Guarantees, whatever the executor and the number of workers:

- results come back in task order, streamed as they complete into a list,
  a preallocated array, a callback, or a :class:`DiskArray` (a ``.npy``
  memmap with an ``.incomplete`` marker that is removed only once every
  row is written);
- randomness is seeded per task (:func:`task_seeds`), never per worker, so
  results are bit for bit those of ``executor=None``;
- a failing task is retried once, then :class:`TaskError` names its index and
  the original exception, and the remaining tasks are cancelled;
- one progress bar counts the tasks; Ctrl-C cancels the tasks not yet run.

Tasks are module-level functions with plain arguments (arrays, numbers, a
mesh's vertices and tets): a task ships what it needs, never a closure over a
large array. :func:`cached` lets a task build an expensive object (a FEM
model from its mesh) once per worker process.

    from dask.distributed import Client, LocalCluster
    client = Client(LocalCluster(n_workers=2, processes=True))
    snaps = fem.enrich(model, dt, forces, runs=20, executor=client)
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import os
import pickle
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np

from ._validate import integer, progress_callback

__all__ = ["map_tasks", "TaskError", "task_seeds", "DiskArray", "disk_array", "load_complete", "cached", "spec_key",
           "describe", "cpu_count"]

_POLL_S = 0.02  # how often the wait loop wakes: Ctrl-C is seen within this


class TaskError(RuntimeError):
    """A task failed on its retry too.

    Parameters
    ----------
    index : int
        Its position in the task list.
    cause : BaseException
        The exception of the last attempt (also ``__cause__``).
    attempts : int
        How many times it ran.
    """

    def __init__(self, index, cause, attempts):
        super().__init__(f"task {index} failed {attempts} times; last error: {type(cause).__name__}: {cause}")
        self.index = index
        self.cause = cause
        self.attempts = attempts


def task_seeds(seed, n):
    """Independent seeds, one per task, so results do not depend on the worker.

    Parameters
    ----------
    seed : int or None
        Root entropy (``numpy.random.SeedSequence``).
    n : int
        Number of tasks.

    Returns
    -------
    list of numpy.random.SeedSequence
        Task i draws from ``np.random.default_rng(seeds[i])`` whichever
        worker runs it.
    """
    n = integer(n, "n")
    return np.random.SeedSequence(seed).spawn(n)


def cpu_count() -> int:
    """Cores this process may use (the affinity mask where there is one).

    Returns
    -------
    int
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# ---------------------------------------------------------------- worker-side cache

_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 4


def spec_key(*parts) -> str:
    """A content hash: the key under which :func:`cached` keeps an object built from ``parts``.

    Parameters
    ----------
    *parts : object
        Arrays (hashed by their bytes, shape and dtype) or picklable values.

    Returns
    -------
    str
        32 hexadecimal digits.
    """
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        if isinstance(p, np.ndarray):
            a = np.ascontiguousarray(p)
            h.update(repr((a.shape, a.dtype.str)).encode())
            h.update(a.data)
        else:
            h.update(pickle.dumps(p, protocol=4))
    return h.hexdigest()


def cached(key, build):
    """``build()`` once per process for ``key`` (the last few kept).

    A task that needs a model rebuilds it from the shipped mesh and
    parameters only the first time that worker sees them.

    Parameters
    ----------
    key : hashable
        Usually :func:`spec_key` of what ``build`` reads.
    build : callable()
        Makes the object.

    Returns
    -------
    object
        The cached or newly built object.
    """
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    value = build()
    _CACHE[key] = value
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return value


# ---------------------------------------------------------------- on-disk results

class DiskArray:
    """A ``.npy`` file written row by row (``np.lib.format.open_memmap``),
    with a marker file ``<path>.incomplete`` beside it for as long as some
    row is missing. ``map_tasks(out=disk_array)`` writes task i's result to
    row i and removes the marker when every task is done; a run that fails or
    is interrupted leaves the marker, which says how many rows were written.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npy`` file.
    shape : tuple of int
        Its shape; rows are tasks.
    dtype : numpy dtype, optional
        Its type.
    """

    def __init__(self, path, shape, dtype=np.float64):
        self.path = Path(path)
        self.marker = self.path.with_name(self.path.name + ".incomplete")
        self.marker.write_text(f"incomplete: 0 of {shape[0]} rows written\n")
        self.array = np.lib.format.open_memmap(self.path, mode="w+", dtype=dtype, shape=tuple(shape))
        self._written = 0

    @property
    def shape(self):
        """Shape of the array (rows are tasks)."""
        return self.array.shape

    def __len__(self):
        return self.array.shape[0]

    def __setitem__(self, index, value):
        self.array[index] = value
        self._written += 1

    def note_progress(self):
        """Flushes the rows written so far and updates the marker."""
        self.array.flush()
        self.marker.write_text(f"incomplete: {self._written} of {len(self)} rows written\n")

    def finish(self):
        """Flushes and removes the marker.

        Returns
        -------
        numpy.memmap
            The array, read-write.
        """
        self.array.flush()
        self.marker.unlink(missing_ok=True)
        return self.array


def disk_array(path, shape, dtype=np.float64) -> DiskArray:
    """A :class:`DiskArray` at ``path``, marked incomplete until every row is written.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npy`` file.
    shape : tuple of int
        Its shape; rows are tasks.
    dtype : numpy dtype, optional
        Its type.

    Returns
    -------
    DiskArray
    """
    return DiskArray(path, shape, dtype)


def load_complete(path, mmap_mode="r"):
    """Opens a ``.npy`` result written by :func:`map_tasks`.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npy`` file.
    mmap_mode : {"r", "r+", "c", None}, optional
        As for ``numpy.load``.

    Returns
    -------
    ndarray or numpy.memmap

    Raises
    ------
    ValueError
        If its ``.incomplete`` marker is still there.
    """
    path = Path(path)
    marker = path.with_name(path.name + ".incomplete")
    if marker.exists():
        raise ValueError(f"{path} is half-written ({marker.read_text().strip()}); rerun the step that writes it")
    return np.load(path, mmap_mode=mmap_mode)


# ---------------------------------------------------------------- backends

class _Inline:
    name = "in-process"


class _Futures:
    """concurrent.futures executors and adapters with the same protocol."""

    def __init__(self, executor, name):
        self.executor = executor
        self.name = name

    def submit(self, fn, args):
        return self.executor.submit(fn, *args)

    def ready(self, handles):
        return [h for h in handles if h.done()]

    def result(self, handle):
        return handle.result()

    def cancel(self, handles):
        for h in handles:
            h.cancel()


class _Dask(_Futures):
    def submit(self, fn, args):
        # pure=False: each task is a new computation even with equal arguments
        return self.executor.submit(fn, *args, pure=False)

    def cancel(self, handles):
        if handles:
            self.executor.cancel(list(handles))


class _Ray:
    name = "ray"

    def __init__(self, ray):
        self.ray = ray
        self._remote = {}

    def submit(self, fn, args):
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = self.ray.remote(max_retries=0)(fn)
        return remote.remote(*args)

    def ready(self, handles):
        if not handles:
            return []
        done, _ = self.ray.wait(list(handles), num_returns=len(handles), timeout=0)
        return done

    def result(self, handle):
        try:
            return self.ray.get(handle)
        except self.ray.exceptions.RayTaskError as exc:  # the task's own exception, not Ray's wrapper
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, BaseException) else exc) from None

    def cancel(self, handles):
        for h in handles:
            try:
                self.ray.cancel(h)
            except Exception:  # already finished
                pass


def _backend(executor):
    """The backend for ``executor``, or TypeError/ValueError naming ``executor``."""
    if executor is None:
        return _Inline()
    if isinstance(executor, str):
        if executor != "ray":
            raise ValueError(f"executor must be None, a concurrent.futures.Executor, a dask.distributed.Client, "
                             f"'ray' or an object with submit(); got the string {executor!r}")
        try:
            import ray
        except ImportError as exc:
            raise ImportError("executor='ray' needs Ray: pip install 'directable[ray]'") from exc
        if not ray.is_initialized():
            raise ValueError("executor='ray' needs a running Ray: call ray.init() first")
        return _Ray(ray)
    if isinstance(executor, concurrent.futures.Executor):
        if getattr(executor, "_shutdown_thread", False) or getattr(executor, "_shutdown", False):
            raise ValueError(f"executor is a {type(executor).__name__} that was shut down")
        return _Futures(executor, type(executor).__name__)
    mod = type(executor).__module__ or ""
    if mod.startswith("distributed") and type(executor).__name__ == "Client":
        status = getattr(executor, "status", "running")
        if status != "running":
            raise ValueError(f"executor is a dask.distributed.Client that is not running (status {status!r}): "
                             "open a new Client")
        return _Dask(executor, "dask")
    if callable(getattr(executor, "submit", None)):
        return _Futures(executor, type(executor).__name__)
    raise TypeError(f"executor must be None, a concurrent.futures.Executor, a dask.distributed.Client, 'ray' or an "
                    f"object with submit(fn, *args) returning futures; got {type(executor).__name__}")


def describe(executor) -> str:
    """A short name of an executor for tables.

    Parameters
    ----------
    executor : None, concurrent.futures.Executor, dask.distributed.Client or "ray"
        As for :func:`map_tasks`.

    Returns
    -------
    str
        "in-process", "dask (k workers)", "ray", or the executor's class name.
    """
    b = _backend(executor)
    if isinstance(b, _Dask):
        return f"dask ({len(executor.scheduler_info().get('workers', {}))} workers)"
    return b.name


# ---------------------------------------------------------------- the map

def _store(out, i, value):
    if out is None:
        return
    if callable(out) and not isinstance(out, (np.ndarray, DiskArray)):
        out(i, value)
    else:
        out[i] = value


def map_tasks(fn, tasks, executor=None, out=None, progress=None, desc="tasks", retries=1, max_in_flight=None):
    """Runs ``fn(*task)`` for every task on ``executor``; results in task order.

    Parameters
    ----------
    fn : callable
        A module-level function (it is pickled by reference for processes).
    tasks : sequence of tuples
        The arguments of each call; keep them small (a mesh and parameters).
    executor : None, concurrent.futures.Executor, dask.distributed.Client, "ray" or adapter
        Where the tasks run (see the module's docstring).
    out : None, array, DiskArray or callable(i, result)
        None: return a list. An array (len(tasks), ...) or a
        :class:`DiskArray`: row i receives task i's result as it arrives. A
        callable: called in this process as ``out(i, result)`` (to write a
        variable-sized result into a slice of a preallocated array).
    progress : None, bool or callable(done, total)
        One report over all tasks (True: a tqdm bar).
    desc : str
        The bar's label.
    retries : int
        How many times a failed task is resubmitted (default 1) before
        :class:`TaskError` is raised with its index.
    max_in_flight : int, optional
        At most this many tasks submitted and not yet collected (default: all
        at once); bounds the memory of results waiting to be stored.

    Returns
    -------
    list, or ``out`` (a DiskArray's memmap, its marker removed)

    Raises
    ------
    TaskError
        A task failed ``retries + 1`` times; the other tasks are cancelled
        and a DiskArray keeps its ``.incomplete`` marker.
    KeyboardInterrupt
        Ctrl-C: the tasks not yet started are cancelled.
    """
    backend = _backend(executor)
    tasks = [tuple(t) for t in tasks]
    n = len(tasks)
    retries = integer(retries, "retries")
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    if isinstance(out, (np.ndarray, DiskArray)) and len(out) != n:
        raise ValueError(f"out must have {n} rows (one per task), got {len(out)}")
    results = [None] * n if out is None else None
    sink = (lambda i, v: results.__setitem__(i, v)) if out is None else (lambda i, v: _store(out, i, v))
    cb, close = progress_callback(progress, desc)
    try:
        if cb is not None:
            cb(0, n)
        if isinstance(backend, _Inline):
            for i, task in enumerate(tasks):
                sink(i, _run_inline(fn, task, i, retries))
                if cb is not None:
                    cb(i + 1, n)
        else:
            _run_pool(backend, fn, tasks, sink, cb, retries, max_in_flight)
    except BaseException:
        if isinstance(out, DiskArray):
            out.note_progress()
        raise
    finally:
        close()
    if out is None:
        return results
    return out.finish() if isinstance(out, DiskArray) else out


def _run_inline(fn, task, i, retries):
    for attempt in range(retries + 1):
        try:
            return fn(*task)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:
            if attempt == retries:
                raise TaskError(i, exc, retries + 1) from exc


def _run_pool(backend, fn, tasks, sink, cb, retries, max_in_flight):
    n = len(tasks)
    limit = n if max_in_flight is None else max(1, integer(max_in_flight, "max_in_flight"))
    pending = {}        # handle -> task index
    attempts = [0] * n
    next_task = 0
    done = 0
    try:
        while done < n:
            while next_task < n and len(pending) < limit:
                pending[backend.submit(fn, tasks[next_task])] = next_task
                attempts[next_task] = 1
                next_task += 1
            ready = backend.ready(list(pending))
            if not ready:
                time.sleep(_POLL_S)
                continue
            for h in ready:
                i = pending.pop(h)
                try:
                    value = backend.result(h)
                except (KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as exc:  # a worker's exception, a killed worker, a cancelled future
                    if attempts[i] > retries:
                        raise TaskError(i, exc, attempts[i]) from exc
                    attempts[i] += 1
                    pending[backend.submit(fn, tasks[i])] = i
                    continue
                sink(i, value)
                done += 1
                if cb is not None:
                    cb(done, n)
    except BaseException:
        backend.cancel(list(pending))
        raise
