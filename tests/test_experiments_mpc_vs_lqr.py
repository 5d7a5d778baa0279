"""MPC vs the LQR tracker on the reduced T-shape under a small and a large
push (beyond the paper). Measured at this size (r = 10,
T = 100, H = 10, 3 Gauss-Newton steps per window): small push (24 N per bar
vertex) -- both 0.0015 m mean tip error after the push, effort 1.6e3 each;
large push (240 N) -- LQR 0.0214 m, MPC 0.0170 m, effort 1.53e5 vs 1.18e5."""
from __future__ import annotations

import numpy as np
import pytest

from directable.experiments import fem_scenes, mpc_vs_lqr as me


@pytest.fixture(scope="module")
def runs():
    scene = fem_scenes.t_shape_scene(r=10, T=100, dt=0.02)
    return {p: me.mpc_vs_lqr(push=p, scene=scene) for p in (24.0, 240.0)}


def test_both_track_and_recover(runs):
    for c in runs.values():
        assert c.error["lqr"][:c.push_at + 1].max() < 1e-3  # on the reference before the push
        assert c.error["mpc"][:c.push_at + 1].max() < 1e-3
        for k in ("lqr", "mpc"):
            assert c.mean_error(k) < 0.05 * c.mean_error("open loop")  # both controllers track
            assert c.error[k][-1] < 1e-3  # back on the reference at the end
        assert c.feedback["mpc"].shape == c.feedback["lqr"].shape == (100, 10)


def test_small_push_mpc_matches_lqr(runs):
    c = runs[24.0]
    assert c.mean_error("mpc") == pytest.approx(c.mean_error("lqr"), rel=0.1)
    assert c.effort["mpc"] == pytest.approx(c.effort["lqr"], rel=0.1)


def test_large_push_mpc_beats_lqr(runs):
    """Far from the reference the precomputed linearization no longer holds:
    the LQR's error grows faster than the push, MPC (re-linearised every
    window on the nonlinear model) tracks better with less effort."""
    small, large = runs[24.0], runs[240.0]
    assert large.mean_error("mpc") < 0.9 * large.mean_error("lqr")
    assert large.effort["mpc"] < 0.9 * large.effort["lqr"]
    grow_lqr = large.mean_error("lqr") / small.mean_error("lqr")
    grow_mpc = large.mean_error("mpc") / small.mean_error("mpc")
    assert grow_lqr > 12 and grow_mpc < 0.9 * grow_lqr  # a 10x push: LQR 14x the error, MPC 11x


def test_plot_comparison(runs):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = me.plot_comparison({"24 N": runs[24.0], "240 N": runs[240.0]})
    assert len(ax.lines) >= 6
    plt.close(ax.figure)


@pytest.mark.parametrize("kw,word", [
    (dict(horizon=0), "horizon"),
    (dict(substeps=0), "substeps"),
    (dict(push=float("nan")), "push"),
    (dict(q=-1.0), "q"),
    (dict(push_at=500), "push_at"),
])
def test_bad_input(kw, word):
    with pytest.raises(ValueError, match=word):
        me.mpc_vs_lqr(**kw)
