"""Shared fixtures of the foundation test suite (LQR core, models, simulation, IO)."""
from __future__ import annotations

import os
import zlib

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    """A generator seeded from the test's name: reproducible, different per
    test. Set DIRECTABLE_TEST_SEED to draw another set of random problems."""
    salt = os.environ.get("DIRECTABLE_TEST_SEED", "")
    return np.random.default_rng(zlib.crc32((request.node.nodeid + salt).encode()))


def _chain(m=4, mass=1.0, stiffness=40.0, cubic=400.0, damping=0.2, actuated=None):
    """``directable.models.spring_chain`` with every per-mass parameter passed
    as an (m,) array (scalar broadcasting is tested separately, see
    test_models.py::test_spring_chain_broadcasts_scalars)."""
    from directable import models

    full = lambda v: np.array(np.broadcast_to(np.asarray(v, float), (m,)))  # noqa: E731
    return models.spring_chain(full(mass), stiffness=full(stiffness), cubic=full(cubic), damping=full(damping),
                               actuated=actuated)


@pytest.fixture
def make_chain():
    return _chain


@pytest.fixture(scope="session")
def dask_client():
    """A real two-process ``dask.distributed.LocalCluster`` shared by the
    executor tests (started once: about 5 s)."""
    import logging

    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                       silence_logs=logging.CRITICAL)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
