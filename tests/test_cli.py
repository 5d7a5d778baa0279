"""The command line: --version, every option's minimum, no traceback for an
expected condition, and a progress bar that counts time steps."""
import os
import subprocess
import sys

import numpy as np
import pytest

import directable
from directable import cli

DEMO_FAST = ["--masses", "1", "--steps", str(cli.DEMO_MIN_STEPS), "--seed", "0", "--no-progress"]


def _run(args, tmp_path, prelude=""):
    """``directable ARGS`` in a fresh interpreter; ``prelude`` runs first."""
    code = f"import sys\n{prelude}\nfrom directable.cli import main\nsys.exit(main({args!r}))"
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, "MPLBACKEND": "Agg"},
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)


def test_version(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "directable", "--version"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"directable {directable.__version__} ")
    assert directable.build_info()["kernels"] in proc.stdout


def test_info_prints_the_build(capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    for key in ("kernels", "eigen", "openmp", "compiler"):
        assert key in out


def test_every_option_at_its_minimum_with_plots(tmp_path):
    out = tmp_path / "plots"
    proc = _run(["demo", "--out", str(out), *DEMO_FAST], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "LQR" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["trajectories.png", "tracking_error.png", "control_effort.png", "error_vs_effort.png"])


@pytest.mark.parametrize("option, value", [("--steps", str(cli.DEMO_MIN_STEPS - 1)), ("--masses", "0"),
                                           ("--seed", "-1"), ("--steps", "many")])
def test_below_the_minimum_is_a_usage_error(option, value, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["demo", option, value])
    assert exc.value.code == 2
    assert option in capsys.readouterr().err


def test_without_matplotlib_the_table_and_the_extra_to_install(tmp_path):
    out = tmp_path / "never"
    proc = _run(["demo", "--out", str(out), *DEMO_FAST], tmp_path, prelude="sys.modules['matplotlib'] = None")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "LQR" in proc.stdout and "final dist" in proc.stdout
    assert 'pip install "directable[plot]"' in proc.stderr
    assert not out.exists()  # no empty folder left behind


def test_an_unusable_out_folder_is_one_line(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    proc = _run(["demo", "--out", str(blocker), *DEMO_FAST], tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "--out" in proc.stderr and "not a folder" in proc.stderr


def test_ctrl_c_is_reported_not_traced(monkeypatch, capsys):
    from directable.experiments import demo

    def interrupted(**kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(demo, "run_demo", interrupted)
    assert cli.main(["demo", "--no-plots"]) == cli.EXIT_INTERRUPTED
    assert "interrupted" in capsys.readouterr().err


def test_no_command_prints_help(capsys):
    assert cli.main([]) == 2
    assert "demo" in capsys.readouterr().err


class _Bar:
    """Stands in for tqdm: records what the bar would show."""

    made = []

    def __init__(self, total=None, **kwargs):
        self.total, self.n, self.shown = total, 0, []
        _Bar.made.append(self)

    def refresh(self):
        self.shown.append((self.n, self.total))

    def close(self):
        pass


def test_progress_bar_counts_time_steps(monkeypatch):
    import tqdm
    import tqdm.auto

    monkeypatch.setattr(tqdm, "tqdm", _Bar)
    monkeypatch.setattr(tqdm.auto, "tqdm", _Bar)
    _Bar.made.clear()
    T, n = 50, 4
    rng = np.random.default_rng(0)
    A = np.tile(0.1 * rng.standard_normal((n, n)), (T, 1, 1))
    directable.lqr.solve_continuous(A, np.eye(n), 0.01, 1.0, 1.0, 10.0, progress=True)
    (bar,) = _Bar.made
    assert bar.shown, "the bar was never drawn"
    assert all(total == T for _, total in bar.shown)
    assert bar.shown[-1] == (T, T)
    assert all(0 <= done <= T for done, _ in bar.shown)
