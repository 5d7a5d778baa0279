"""Command line: ``directable demo`` and ``directable info`` (also ``python -m directable ...``).

Every expected condition (bad option, missing optional dependency, an
unwritable output folder, Ctrl-C) ends with one line on stderr and a
non-zero exit status, never a traceback.
"""
from __future__ import annotations

import argparse
import os
import sys

#: Exit status of a run stopped by Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130

#: Fewest time steps the demo accepts: the push (0.1 s at dt = 0.01 s) starts
#: half-way and leaves room for the controllers to act after it.
DEMO_MIN_STEPS = 40

PLOT_INSTALL_HINT = 'pip install "directable[plot]"  (or: pip install "matplotlib>=3.6")'


def _int_at_least(minimum):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def _version_line() -> str:
    from . import __version__, build_info

    info = build_info()
    return f"directable {__version__} (C++ core: {info['kernels']} kernels, Eigen {info['eigen']}, " \
           f"{'OpenMP' if info['openmp'] else 'no OpenMP'})"


class _VersionAction(argparse.Action):
    """``--version`` that imports the compiled core only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(_version_line())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``directable`` command.

    Returns
    -------
    argparse.ArgumentParser
        Sub-commands ``demo`` and ``info``; ``--version`` on the top level.
    """
    parser = argparse.ArgumentParser(
        prog="directable",
        description="Real-time directable simulation: time-varying LQR tracking of reduced models.",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and the build, then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="LQR vs PD vs uncontrolled on the built-in spring chain after a user push",
        description="Builds the Duffing spring chain, a reference trajectory and a user push; runs it "
                    "uncontrolled, with PD (gain matched to LQR's feedback effort) and with LQR; prints a "
                    "summary table and writes PNG plots (matplotlib; without it the table alone).",
    )
    demo.add_argument("--out", default="demo-output", help="folder for the PNG plots (default: %(default)s)")
    demo.add_argument("--masses", type=_int_at_least(1), default=8, help="masses in the chain (default: %(default)s)")
    demo.add_argument("--steps", type=_int_at_least(DEMO_MIN_STEPS), default=800,
                      help=f"time steps of dt=0.01 s, at least {DEMO_MIN_STEPS} (default: %(default)s)")
    demo.add_argument("--seed", type=_int_at_least(0), default=0,
                      help="seed of the reference force program, >= 0 (default: %(default)s)")
    demo.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    demo.add_argument("--no-progress", action="store_true", help="no progress bar")
    sub.add_parser("info", help="version, build flags and the CPU kernels chosen at import",
                   description="Prints directable's version and build_info(): compiler, flags, the kernel "
                               "variant chosen for this CPU, Eigen, OpenMP, threads.")
    return parser


def _matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _check_out_dir(path: str) -> str | None:
    """Why ``path`` cannot take the plots, or None when it can (created later)."""
    probe = os.path.abspath(path)
    if os.path.exists(probe):
        if not os.path.isdir(probe):
            return f"--out {path!r} exists and is not a folder"
        return None if os.access(probe, os.W_OK) else f"--out {path!r} is not writable"
    parent = os.path.dirname(probe.rstrip(os.sep)) or os.sep
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
        return f"--out {path!r} cannot be created ({parent!r} is not a writable folder)"
    return None


def _demo(args) -> int:
    plots = not args.no_plots
    if plots and not _matplotlib_available():
        print(f"directable demo: matplotlib is not installed: printing the table without plots.\n"
              f"  for the plots: {PLOT_INSTALL_HINT}", file=sys.stderr)
        plots = False
    if plots:
        problem = _check_out_dir(args.out)
        if problem:
            print(f"directable demo: error: {problem} (choose another --out, or --no-plots)", file=sys.stderr)
            return 2
        # Plots are written to files only: never need a display.
        os.environ.setdefault("MPLBACKEND", "Agg")
    from .experiments.demo import run_demo

    try:
        run_demo(out_dir=args.out, masses=args.masses, steps=args.steps, plots=plots,
                 progress=not args.no_progress, seed=args.seed)
    except KeyboardInterrupt:
        print("directable demo: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ValueError, TypeError, RuntimeError, OSError) as exc:
        print(f"directable demo: error: {exc}", file=sys.stderr)
        return 1
    return 0


def _info() -> int:
    from . import build_info

    print(_version_line())
    for key, value in build_info().items():
        print(f"  {key:<16} {value}")
    return 0


def main(argv=None) -> int:
    """Entry point of the ``directable`` command.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; ``sys.argv[1:]`` when None.

    Returns
    -------
    int
        Exit status: 0 on success, 1 for an error of the run, 2 for a usage
        error, 130 after Ctrl-C.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            return _demo(args)
        if args.command == "info":
            return _info()
    except KeyboardInterrupt:
        print("directable: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ImportError as exc:  # a broken install: say what is missing, not where
        print(f"directable: error: {exc} (reinstall with: pip install --force-reinstall directable)",
              file=sys.stderr)
        return 1
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
