"""Plot helpers: each returns an Axes, draws on a given Axes, never shows."""
import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

import directable as dr  # noqa: E402
from directable import plotting  # noqa: E402

T, M, DT = 60, 3, 0.01


@pytest.fixture(scope="module")
def runs():
    ones = np.ones(M)
    model = dr.models.spring_chain(ones, stiffness=40 * ones, cubic=400 * ones, damping=0.2 * ones)
    w_ff = np.sin(np.arange(T)[:, None] * DT * np.arange(1, M + 1))
    z0 = np.zeros(2 * M)
    z_ref = dr.models.rollout(model, z0, w_ff, DT)
    push = dr.sim.push(T, M, 20, np.full(M, 5.0), 3)
    unc = dr.simulate(model, z0, T, DT, None, disturbance=push, open_loop=w_ff)
    pd = dr.simulate(model, z0, T, DT, dr.lqr.pd_tracker(4.0, 4.0, z_ref, w_ff), disturbance=push)
    return z_ref, {"uncontrolled": unc, "PD": pd}


@pytest.fixture(autouse=True)
def no_show(monkeypatch):
    calls = []
    monkeypatch.setattr(plt, "show", lambda *a, **k: calls.append(1))
    yield
    plt.close("all")
    assert not calls, "a plot helper called plt.show()"


def helpers(z_ref, res):
    effort = (res["PD"].effort, res["PD"].effort * 2)
    return [
        lambda ax: plotting.plot_trajectories(res, z_ref, coords=[0, M], dt=DT, push=(20, 23), ax=ax),
        lambda ax: plotting.plot_trajectories({"states": res["PD"].states}, z_ref, ax=ax),  # plain arrays, steps
        lambda ax: plotting.plot_tracking_error(res, z_ref, dt=DT, push=(20, 23), ax=ax),
        lambda ax: plotting.plot_control_effort({"PD": res["PD"]}, dt=DT, ax=ax),
        lambda ax: plotting.plot_control_effort([("PD", res["PD"].feedback), ("x2", effort[1])], dt=DT,
                                                cumulative=True, ax=ax),
        lambda ax: plotting.plot_error_vs_effort({"PD": (1.0, 0.5), "LQR": (1.0, 1e-3), "none": (0.0, 2.0)},
                                                 curve=([0.5, 1, 2], [1, 0.5, 0.1]), ax=ax),
        lambda ax: plotting.plot_error_vs_effort([("a", 1.0, 0.1)], log=False, ax=ax),
    ]


def test_each_helper_creates_and_returns_axes(runs):
    z_ref, res = runs
    for draw in helpers(z_ref, res):
        before = set(plt.get_fignums())
        ax = draw(None)
        assert isinstance(ax, Axes)
        assert set(plt.get_fignums()) - before, "no new figure was created for ax=None"
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
        assert ax.lines or ax.collections


def test_each_helper_draws_on_given_axes(runs):
    z_ref, res = runs
    fns = helpers(z_ref, res)
    fig, axs = plt.subplots(1, len(fns))
    for draw, ax in zip(fns, axs):
        assert draw(ax) is ax
        assert ax.figure is fig
    assert plt.get_fignums() == [fig.number]


def test_values_drawn_are_the_data(runs):
    z_ref, res = runs
    ax = plotting.plot_tracking_error({"uncontrolled": res["uncontrolled"]}, z_ref, dt=DT, log=False)
    line = ax.lines[0]
    expected = np.linalg.norm(res["uncontrolled"].states - z_ref, axis=1)
    np.testing.assert_allclose(line.get_ydata(), expected)
    np.testing.assert_allclose(line.get_xdata(), np.arange(T + 1) * DT)
    assert expected[-1] > 0  # uncontrolled: computed from states, not the result's zeros

    ax = plotting.plot_control_effort({"PD": res["PD"]}, dt=DT, cumulative=True)
    total = dr.sim.summary(res["PD"], DT)["feedback_effort"]
    assert ax.lines[0].get_ydata()[-1] == pytest.approx(total)


def test_bad_input_names_the_problem(runs):
    z_ref, res = runs
    with pytest.raises(ValueError, match="coords"):
        plotting.plot_trajectories(res, z_ref, coords=[99])
    with pytest.raises(TypeError, match="runs"):
        plotting.plot_tracking_error(42, z_ref)
    with pytest.raises(ValueError, match="z_ref"):
        plotting.plot_tracking_error({"a": res["PD"].states})
    with pytest.raises(ValueError, match="points"):
        plotting.plot_error_vs_effort([("a", 1.0)])


def test_module_imports_without_matplotlib_import():
    import subprocess
    import sys

    code = "import sys, directable.plotting; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
