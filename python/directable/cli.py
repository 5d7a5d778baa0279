"""Command line: ``directable demo`` (also ``python -m directable demo``)."""
from __future__ import annotations

import argparse
import sys


def _positive_int(minimum):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="directable",
        description="Real-time directable simulation: time-varying LQR tracking of reduced models.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="LQR vs PD vs uncontrolled on the built-in spring chain after a user push",
        description="Builds the Duffing spring chain, a reference trajectory and a user push; runs it "
                    "uncontrolled, with PD (gain matched to LQR's feedback effort) and with LQR; prints a "
                    "summary table and writes PNG plots.",
    )
    demo.add_argument("--out", default="demo-output", help="folder for the PNG plots (default: %(default)s)")
    demo.add_argument("--masses", type=_positive_int(1), default=8, help="masses in the chain (default: %(default)s)")
    demo.add_argument("--steps", type=_positive_int(20), default=800,
                      help="time steps of dt=0.01 s (default: %(default)s)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the reference force program (default: %(default)s)")
    demo.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    demo.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "demo":
        if not args.no_plots:
            import os

            # Plots are written to files only: never need a display.
            os.environ.setdefault("MPLBACKEND", "Agg")
        from .experiments.demo import run_demo

        try:
            run_demo(out_dir=args.out, masses=args.masses, steps=args.steps, plots=not args.no_plots,
                     progress=not args.no_progress, seed=args.seed)
        except (ValueError, TypeError, RuntimeError) as exc:
            print(f"directable demo: error: {exc}", file=sys.stderr)
            return 1
        return 0
    parser.error(f"unknown command {args.command!r}")  # pragma: no cover
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
