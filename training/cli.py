"""The ``arboretum`` command (console script ``arboretum = training.cli:main``).

Each subcommand is one ``_add_<name>`` function that builds its parser and sets a handler;
a handler imports its implementation lazily, so ``arboretum --help`` stays fast and this
module never imports torch. To add a subcommand, write an ``_add_...`` function and list it
in ``SUBCOMMANDS``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

import yaml

from arboretum_env import __version__
from arboretum_env.errors import UserError, unreadable_reason
PROG = "arboretum"


def parse_overrides(pairs: list[str]) -> dict:
    from training.config import ConfigKeyError

    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigKeyError(f"--set {pair!r}: expected KEY=VALUE")
        try:
            out[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            raise ConfigKeyError(f"--set {pair!r}: the value is not valid YAML") from None
        except (ValueError, RecursionError) as exc:  # a 5,000-digit integer, nesting 5,000 deep
            raise ConfigKeyError(f"--set {key.strip()}: the value is {unreadable_reason(exc)}") from None
    return out


def format_evaluation(result: dict) -> str:
    lines = [f"{'opponent':<10}{'games':>7}{'win':>8}{'draw':>8}{'loss':>8}{'margin':>9}"]
    for name, s in result.items():
        if not isinstance(s, dict) or "win_rate" not in s:
            continue
        lines.append(f"{name:<10}{s['games']:>7}{s['win_rate']:>8.1%}{s['draw_rate']:>8.1%}"
                     f"{s['loss_rate']:>8.1%}{s['mean_margin']:>9.2f}")
    return "\n".join(lines)


def train_command(config_path: str, overrides: list[str], resume: bool, progress: bool,
                  replace: bool = False) -> str:
    from training.config import ConfigKeyError, config_from_dict, read_config_data

    data = read_config_data(config_path, parse_overrides(overrides))
    trainer = data.get("trainer", "sb3") if isinstance(data, dict) else "sb3"
    if trainer == "selfplay":
        return selfplay_command(data, config_path, resume, progress, replace)
    if trainer == "afterstate":
        return afterstate_command(data, config_path, resume, progress, replace)
    if trainer != "sb3":
        raise ConfigKeyError(f"{config_path}: trainer must be selfplay, afterstate or sb3 (left out: sb3), "
                             f"got {trainer!r}")
    if isinstance(data, dict):
        data = {key: value for key, value in data.items() if key != "trainer"}
    config = config_from_dict(data, str(config_path))
    from training.plots import plot_learning_curve
    from training.train import run_folder, train

    final = train(config, resume=resume, show_progress=progress, replace=replace)
    folder = run_folder(config)
    plot = plot_learning_curve(folder)
    return (f"run {folder} after {final['timesteps']} steps ({final['wall_s']} s):\n"
            f"{format_evaluation(final)}\npolicy: {folder / 'policy.safetensors'}\nplot: {plot}")


def selfplay_command(data: dict, source: str, resume: bool, progress: bool, replace: bool) -> str:
    """``train`` for a config with ``trainer: selfplay`` (``training.selfplay``)."""
    from training.selfplay import train_selfplay
    from training.selfplay_config import selfplay_config

    config = selfplay_config(data, str(source))
    out = train_selfplay(config, resume=resume, progress=progress, overwrite=replace)
    folder = f"{config.runs_dir}/{config.run_name}"
    return (f"run {folder} after {out['steps']} learner steps ({out['wall_s']} s of training, "
            f"{out['steps_per_s']} steps/s):\n{format_evaluation(out['final'])}\n"
            f"policy: {folder}/policy.safetensors\ncurve: {folder}/learning_curve.png")


def afterstate_command(data: dict, source: str, resume: bool, progress: bool, replace: bool) -> str:
    """``train`` for a config with ``trainer: afterstate`` (``training.afterstate_td``)."""
    from training.afterstate_td import afterstate_config, train_afterstate

    config = afterstate_config(data, str(source))
    out = train_afterstate(config, resume=resume, progress=progress, overwrite=replace)
    folder = f"{config.runs_dir}/{config.run_name}"
    return (f"run {folder} after {out['steps']} learner decisions ({out['wall_s']} s of training):\n"
            f"{format_evaluation(out['final'])}\nvalue file: {folder}/policy.safetensors\n"
            f"curve: {folder}/learning_curve.png")


def _add_score(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="score a position document (JSON)",
        description="Score every player's arboretum in a position document.",
    )
    p.add_argument("path", help="position document (JSON)")
    p.add_argument("--text", action="store_true", help="print a text table of each species' points per player and the winner")

    def run(args: argparse.Namespace) -> int:
        from arboretum_env.engine.position import score_command

        print(score_command(args.path, text=args.text))
        return 0

    p.set_defaults(handler=run)


def _add_train(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train a policy (self-play, afterstate TD(lambda) or the SB3 path)",
                       description="Train a policy from a config: the batched self-play trainer for 'trainer: selfplay', "
                                   "the afterstate TD(lambda) trainer for 'trainer: afterstate', else the SB3 path "
                                   "(MaskablePPO); outputs go to <runs_dir>/<run_name>/ (models/ by default).")
    p.add_argument("--config", default="configs/quickstart.yaml", help="YAML training config")
    p.add_argument("--resume", action="store_true",
                   help="continue the run from its newest intact checkpoint")
    p.add_argument("--replace", action="store_true",
                   help="move an existing run of this run_name aside (to <run_name>.replaced-<time>) "
                        "and start afresh (without it, a fresh run into a used folder is refused)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key (YAML value), e.g. --set total_steps=5000 (SB3 configs: total_timesteps)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

    def run(args: argparse.Namespace) -> int:
        print(train_command(args.config, args.set, args.resume, not args.no_progress, args.replace))
        return 0

    p.set_defaults(handler=run)


def _add_export(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="turn a checkpoint into a standalone policy file",
                       description="Export a checkpoint (.zip, or a run folder: its newest) as a "
                                   "data-only policy file (.safetensors) that PolicyAgent plays from; "
                                   "or a policy file as TorchScript or ONNX (--format torchscript|onnx); or convert "
                                   "an old TorchScript policy file (--trust-torchscript).")
    p.add_argument("checkpoint", help="checkpoint .zip, run folder, or policy file")
    p.add_argument("-o", "--output",
                   help="file to write, never one of the input's (default: beside the source, named after "
                        "it; for a checkpoint in RUN/checkpoints/: RUN/step_N_policy.safetensors, .pt or .onnx)")
    p.add_argument("--format", default="safetensors", choices=("safetensors", "torchscript", "onnx"),
                   help="safetensors: a data-only policy file (default); torchscript or onnx (the onnx "
                        "extra): for deployment elsewhere, the mask applied inside")
    p.add_argument("--trust-torchscript", action="store_true",
                   help="convert an old TorchScript policy file (.pt), running the code inside it: "
                        "only for files from an author you trust")

    def run(args: argparse.Namespace) -> int:
        from training.export import export_command

        print(export_command(args.checkpoint, args.output, args.format, args.trust_torchscript))
        return 0

    p.set_defaults(handler=run)


def _add_evaluate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate", help="a tournament between agents: win rates, confidence intervals, ratings",
        description="Play a seeded tournament between agents (random, greedy, tempo, checkpoint folders "
                    "or .zip files, policy files .safetensors) with seats rotated; print win/draw/"
                    "loss rates with 95% confidence intervals, average scores and OpenSkill ratings.")
    p.add_argument("agents", nargs="+", metavar="AGENT",
                   help="an agent name, a run folder or checkpoint .zip, or a policy file .safetensors "
                        "(list one twice to enter it twice)")
    p.add_argument("--players", type=int, default=2, help="players per table, 2 to 4 (default 2)")
    p.add_argument("--games", type=int, default=100, help="number of games (default 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of the whole tournament (default 0)")
    p.add_argument("--json", metavar="FILE", help="write all results as JSON")
    p.add_argument("--csv", metavar="FILE", help="write one row per entrant as CSV")
    p.add_argument("--plot", metavar="FILE", help="write a PNG: ratings and learning curve")
    p.add_argument("--run", metavar="RUN_FOLDER", help="run folder whose learning curve the plot shows")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

    def run(args: argparse.Namespace) -> int:
        from training.tournament import evaluate_command

        evaluate_command(args.agents, args.players, args.games, args.seed, args.json, args.csv,
                         args.plot, args.run, progress=not args.no_progress and sys.stderr.isatty(),
                         out=sys.stdout)
        return 0

    p.set_defaults(handler=run)


def _add_play(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play", help="play a game in the terminal against agents",
        description="Play Arboretum against agents in the terminal (default opponent: the shipped "
                    "agent models/shipped/policy.safetensors, else greedy).")
    p.add_argument("--opponents", nargs="+", metavar="AGENT",
                   help="opponent agents, in seat order after you (repeated to fill the table)")
    p.add_argument("--players", type=int, help="players at the table, 2 to 4 "
                                                "(default: you plus the opponents, at least 2)")
    p.add_argument("--seat", type=int, default=0, help="your seat, 0 = P0 (default 0)")
    p.add_argument("--seed", type=int, help="game seed (default: a fresh one, printed)")

    def run(args: argparse.Namespace) -> int:
        from training.play import play_command

        play_command(args.opponents, args.players, args.seat, args.seed)
        return 0

    p.set_defaults(handler=run)


SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_score,
    _add_train,
    _add_export,
    _add_evaluate,
    _add_play,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Arboretum: rules engine, RL environment, training and evaluation.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # exits 2 on bad usage, 0 on --help
    try:
        return args.handler(args)
    except UserError as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `arboretum score x.json | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
