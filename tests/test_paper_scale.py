"""The papers' scenes at any size (small here; ``fem_scenes.PAPER_SIZE`` is
the paper's): the full-size parameters build the paper's meshes, the
creature is one rooted solid, the T-shape strikes its balls under LQR and
misses them uncontrolled, and the creature's final-cost LQR beats every PD
of a gain grid run on a Dask cluster (same grid as in-process)."""
from __future__ import annotations

import numpy as np
import pytest

from directable import fem
from directable.experiments import fem_scenes, paper_scale


def test_paper_sizes_build_the_papers_meshes():
    P = fem_scenes.PAPER_SIZE
    t = fem.t_shape(refine=P["t_shape"]["refine"], stem=P["t_shape"]["stem"])
    assert abs(3 * t.num_vertices - 1032) <= 10                     # paper: 1032 dofs
    f = fem.stem(refine=P["flower"]["refine"], leaves=P["flower"]["leaves"])
    assert abs(3 * f.num_vertices - 12705) / 12705 < 0.03           # paper: 12,705 dofs
    assert (P["t_shape"]["r"], P["t_shape"]["T"]) == (24, 501)
    assert (P["flower"]["r"], P["flower"]["T"]) == (24, 1281)
    assert (P["creature"]["r"], P["creature"]["T"]) == (30, 181)


def test_creature_mesh_is_one_rooted_solid():
    m = fem.creature(0.2)
    X = np.asarray(m.vertices)
    assert X[:, 2].min() == 0.0 and 1.7 < X[:, 2].max() < 2.0 and 2.6 < np.ptp(X[:, 0]) < 3.3
    assert np.all(np.asarray(m.volumes) > 0)
    # one body: the tets' vertex graph is connected
    T = np.asarray(m.tets)
    parent = np.arange(len(X))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in np.concatenate([T[:, [0, 1]], T[:, [0, 2]], T[:, [0, 3]]]):
        parent[find(a)] = find(b)
    assert len({find(i) for i in range(len(X))}) == 1
    feet = fem.bottom_vertices(m)
    assert feet.size >= 8 and np.all(X[feet, 2] == 0)
    finer = fem.creature(0.1)
    assert 2 * 3 * m.num_vertices < 3 * finer.num_vertices          # h sets the size (h = 0.033: >= 50,000 dofs)
    with pytest.raises(ValueError, match=r"h must be in \[0.005, 0.5\] m, got 2.0"):
        fem.creature(2.0)


def test_t_shape_strikes_the_balls_the_uncontrolled_one_misses():
    s = fem_scenes.t_shape_scene(r=10, T=100)
    out = paper_scale.t_shape_strike(s)
    c = out["clearance"]
    assert np.all(np.abs(c["reference"]) < 1e-9)         # the reference touches each ball's surface
    assert np.all(c["lqr"] < 2e-3), c["lqr"]             # controlled: within 2 mm of the surface (a strike)
    assert np.all(c["uncontrolled"] > 0.01), c["uncontrolled"]  # the pushed T misses both (by > 1 cm)
    assert out["balls"].centres.shape == (2, 3) and out["balls"].steps[0] != out["balls"].steps[1]


def test_creature_lqr_vs_pd_final_cost_on_dask(dask_client):
    c = fem_scenes.creature_scene(r=6, T=40, runs=2)
    kps = np.geomspace(1.0, 3e3, 6)
    here = paper_scale.lqr_vs_pd_final_cost(c, kps=kps, zetas=(0.5, 1.0))
    there = paper_scale.lqr_vs_pd_final_cost(c, kps=kps, zetas=(0.5, 1.0), executor=dask_client)
    assert np.array_equal(here["pd"]["final_error"], there["pd"]["final_error"])
    assert np.array_equal(here["pd"]["effort"], there["pd"]["effort"])
    e_lqr, j_lqr = here["lqr"]
    assert e_lqr < 0.2 * here["open_loop_error"]
    assert here["effort_ratio"] > 2.0                   # PD needs more effort for LQR's final error (paper 6.3x)
    assert here["pd_at_lqr_effort_error"] > 2.0 * e_lqr  # or misses at LQR's effort
