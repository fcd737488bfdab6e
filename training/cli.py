"""``arboretum train``: config + overrides -> training run -> evaluation table and plot."""

from __future__ import annotations

import yaml

from training.config import ConfigKeyError, load_config


def parse_overrides(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigKeyError(f"--set {pair!r}: expected KEY=VALUE")
        try:
            out[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            raise ConfigKeyError(f"--set {pair!r}: the value is not valid YAML") from None
    return out


def format_evaluation(result: dict) -> str:
    lines = [f"{'opponent':<10}{'games':>7}{'win':>8}{'draw':>8}{'loss':>8}{'margin':>9}"]
    for name, s in result.items():
        if not isinstance(s, dict) or "win_rate" not in s:
            continue
        lines.append(f"{name:<10}{s['games']:>7}{s['win_rate']:>8.1%}{s['draw_rate']:>8.1%}"
                     f"{s['loss_rate']:>8.1%}{s['mean_margin']:>9.2f}")
    return "\n".join(lines)


def train_command(config_path: str, overrides: list[str], resume: bool, progress: bool) -> str:
    config = load_config(config_path, parse_overrides(overrides))
    from training.plots import plot_learning_curve
    from training.train import run_folder, train

    final = train(config, resume=resume, show_progress=progress)
    folder = run_folder(config)
    plot = plot_learning_curve(folder)
    return (f"run {folder} after {final['timesteps']} steps ({final['wall_s']} s):\n"
            f"{format_evaluation(final)}\npolicy: {folder / 'policy.safetensors'}\nplot: {plot}")
