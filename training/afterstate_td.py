"""Self-play TD(lambda) of an afterstate value (``trainer: afterstate``), read top to bottom.

The agent (``arboretum_env.agents.afterstate``) plays every seat: at each decision of its turn it
values every position its choice can lead to and takes the best (a uniform choice with chance
``epsilon``). Each seat's positions after its own decisions form a chain; at the end of a game
the chain's targets are lambda-returns: ``G_t = (1 - lambda) V(x_{t+1}) + lambda G_{t+1}``, the
last position's target the final score margin / 20 (own total minus the other's). The value is
fitted to them by Adam (squared error), then the next games are played with it.

No heuristic anywhere: no advice, no imitation, no heuristic opponent; the features are the
rules' own quantities (best paths, hand sums) and what the seat sees. Random and greedy (and
tempo) are only evaluation opponents.

The run folder is the self-play trainer's (``training.selfplay_io.RunFolder``): locked and
claimed, ``config.yaml``, checkpoints (``checkpoints/step_N.pt`` + ``.json``, N the learner's
decisions), ``curve.jsonl`` with an OpenSkill rating per checkpoint, TensorBoard, the plot,
``policy.safetensors`` (the value file the agent plays from) and ``evaluation.json``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from arboretum_env.agents import make_agent
from arboretum_env.agents.afterstate import FEATURES, AfterstateAgent, Value, save_value_file
from arboretum_env.agents.arena import play_game

from .config_check import FOLDER_NAME, checked, config_from_mapping
from .selfplay_config import EVAL_BASELINES, ConfigKeyError
from .run_folder import refuse_other_model
from .selfplay_io import RunFolder, RunFolderError


@dataclass
class AfterstateConfig:
    trainer: str = checked("afterstate", choices=("afterstate",))
    """Which trainer reads this config: ``afterstate`` (``training.afterstate_td``)."""
    run_name: str = checked("afterstate", **FOLDER_NAME)
    """Outputs go to ``<runs_dir>/<run_name>/``."""
    runs_dir: str = checked("models", min_len=1)
    """Folder that holds the runs."""
    num_players: int = checked(2, choices=(2,))
    """Table size: the afterstate agent plays 2-player games."""
    seed: int = checked(0, ge=0, le=2**62)
    """Seeds the games, the agents' deck samples and exploration, and torch: the same seed gives
    the same run."""
    total_games: int = checked(5_000, ge=1, le=10**8)
    """Self-play games to train for."""
    games_per_update: int = checked(8, ge=1, le=100_000)
    """Games played with the same value before it is fitted again."""
    td_lambda: float = checked(0.8, ge=0.0, le=1.0)
    """lambda of the lambda-returns: 0 bootstraps on the next position's value, 1 is the game's
    result."""
    epsilon: float = checked(0.03, ge=0.0, le=1.0)
    """Chance of a uniform choice at a decision, in training games only."""
    deck_samples: int = checked(6, ge=1, le=80)
    """Unseen cards sampled to value a deck draw."""
    hidden: int = checked(64, ge=1, le=4096)
    """Width of the two hidden layers of the per-species network."""
    learning_rate: float = checked(1e-3, ge=1e-8, le=1.0)
    """Adam step size."""
    epochs: int = checked(2, ge=1, le=100)
    """Passes over each update's positions."""
    minibatch_size: int = checked(256, ge=1, le=1_000_000)
    """Positions per gradient step."""
    torch_threads: int = checked(1, ge=1, le=256)
    """Threads torch may use (the games run in Python: 1 is enough)."""
    eval_every: int = checked(400, ge=1, le=10**8)
    """Games between checkpoints and evaluations."""
    eval_games: int = checked(60, ge=1, le=1_000_000)
    """Games per baseline at each evaluation (seats alternated, the agent without exploration)."""
    eval_opponents: list = checked(["random", "greedy"], each=EVAL_BASELINES, min_len=1)
    """Baselines of the evaluations during training."""
    final_eval_games: int = checked(200, ge=1, le=1_000_000)
    """Games per baseline in the evaluation at the end."""
    final_eval_opponents: list = checked(["random", "greedy"], each=EVAL_BASELINES, min_len=1)
    """Baselines of the final evaluation."""


def afterstate_config(data: dict, source: str = "config") -> AfterstateConfig:
    """A checked ``AfterstateConfig`` from a mapping (unknown keys, types and ranges checked)."""
    return config_from_mapping(AfterstateConfig, data, source, error=ConfigKeyError)


class ValueNet(torch.nn.Module):
    """The value ``sum_i f(x_i)`` in torch, for training (``agents.afterstate.Value`` plays)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.l1 = torch.nn.Linear(FEATURES, hidden)
        self.l2 = torch.nn.Linear(hidden, hidden)
        self.l3 = torch.nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, species, FEATURES] -> [B]
        return self.l3(torch.relu(self.l2(torch.relu(self.l1(x))))).squeeze(-1).sum(-1)

    def value_weights(self) -> dict[str, np.ndarray]:
        return {k: v.detach().numpy().copy() for k, v in self.state_dict().items()}

    def value(self) -> Value:
        return Value(self.value_weights())


def lambda_returns(values: np.ndarray, result: float, lam: float) -> np.ndarray:
    """Targets of one seat's chain: ``G_T = result`` after the last position, ``G_t = (1 - lam)
    V(x_{t+1}) + lam G_{t+1}``."""
    targets = np.empty(len(values))
    after = result
    for t in range(len(values) - 1, -1, -1):
        targets[t] = after
        after = (1 - lam) * values[t] + lam * after
    return targets


def evaluate(value: Value, baseline: str, games: int, seed: int) -> dict:
    """The agent (no exploration) against ``baseline``, seats alternated on each deal; the
    record format of ``training.batch_eval`` (for the curve and the ratings)."""
    wins = draws = 0
    margins, records = [], []
    for g in range(games):
        seat = g % 2
        agents = [AfterstateAgent(value, seed=seed + g), make_agent(baseline, seed=seed + g)]
        result = play_game(agents if seat == 0 else agents[::-1], 2, seed=seed + g // 2)
        scores, winners = list(result.totals), list(result.winners)
        wins += winners == [seat]
        draws += seat in winners and len(winners) > 1
        margins.append(scores[seat] - scores[1 - seat])
        records.append({"seat": seat, "scores": scores, "winners": winners})
    return {"games": games, "win_rate": wins / games, "draw_rate": draws / games,
            "loss_rate": (games - wins - draws) / games, "mean_margin": float(np.mean(margins)),
            "records": records}


class AfterstateTrainer:
    def __init__(self, config: AfterstateConfig, folder: RunFolder) -> None:
        self.c, self.folder = config, folder
        torch.set_num_threads(config.torch_threads)
        torch.manual_seed(config.seed)
        self.rng = np.random.default_rng(config.seed)
        self.net = ValueNet(config.hidden)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.learning_rate)
        self.steps = self.games = 0
        self.wall = 0.0

    # ------------------------------------------------------------------ checkpoints
    def state(self) -> tuple[dict, dict]:
        tensors = {"net": self.net.state_dict(), "optimizer": self.optimizer.state_dict()}
        meta = {"steps": self.steps, "games": self.games, "wall_s": self.wall,
                "rng": self.rng.bit_generator.state, "config": self.folder.config_dict()}
        return tensors, meta

    def restore(self, tensors: dict, meta: dict) -> None:
        self.net.load_state_dict(tensors["net"])
        self.optimizer.load_state_dict(tensors["optimizer"])
        self.steps, self.games, self.wall = int(meta["steps"]), int(meta["games"]), float(meta["wall_s"])
        self.rng.bit_generator.state = meta["rng"]

    def checkpoint_and_evaluate(self, games: int, opponents) -> dict:
        self.folder.save_checkpoint(self.steps, *self.state())
        value = self.net.value()
        evaluation = {name: evaluate(value, name, games, seed=10_000_019 * (b + 1))
                      for b, name in enumerate(opponents)}
        self.folder.record_evaluation(self, evaluation)
        return evaluation

    # ------------------------------------------------------------------ one update
    def play_games(self) -> tuple[np.ndarray, np.ndarray]:
        """``games_per_update`` self-play games; every position each seat reached, and its target."""
        c, value = self.c, self.net.value()
        chains: dict[int, list] = {}
        agent = AfterstateAgent(value, epsilon=c.epsilon, deck_samples=c.deck_samples,
                                record=lambda seat, x: chains[seat].append(x))
        xs, targets = [], []
        for _ in range(c.games_per_update):
            chains.clear()
            chains.update({0: [], 1: []})
            agent.seed(int(self.rng.integers(2**62)))
            result = play_game([agent, agent], 2, seed=int(self.rng.integers(2**62)))
            for seat, chain in chains.items():
                x = np.stack(chain).astype(np.float32)
                margin = (result.totals[seat] - result.totals[1 - seat]) / 20.0
                xs.append(x)
                targets.append(lambda_returns(value(x), margin, c.td_lambda))
            self.games += 1
        return np.concatenate(xs), np.concatenate(targets).astype(np.float32)

    def fit(self, x: np.ndarray, y: np.ndarray) -> float:
        c, x, y = self.c, torch.from_numpy(x), torch.from_numpy(y)
        losses = []
        for _ in range(c.epochs):
            order = torch.randperm(len(x))
            for k in range(0, len(x), c.minibatch_size):
                rows = order[k:k + c.minibatch_size]
                loss = ((self.net(x[rows]) - y[rows]) ** 2).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                losses.append(loss.item())
        return float(np.mean(losses))

    # ------------------------------------------------------------------ the loop
    def train(self, progress: bool = True) -> dict:
        from tqdm import tqdm

        c = self.c
        self.folder.forget_after(self.steps)
        if not any(row["step"] == self.steps for row in self.folder.curve()):
            self.checkpoint_and_evaluate(c.eval_games, c.eval_opponents)  # step 0, or a lost one
        bar = tqdm(total=c.total_games, initial=self.games, disable=not progress, unit="game",
                   dynamic_ncols=True)
        while self.games < c.total_games:
            start = time.perf_counter()
            games = self.games
            x, y = self.play_games()
            loss = self.fit(x, y)
            self.steps += len(x)
            self.wall += time.perf_counter() - start
            self.folder.log_scalars(self.steps, {"value_loss": loss, "games": self.games})
            bar.update(self.games - games)
            bar.set_postfix(steps_per_s=round(self.steps / max(self.wall, 1e-9)), **self.folder.latest_rates())
            if self.games // c.eval_every > games // c.eval_every and self.games < c.total_games:
                self.checkpoint_and_evaluate(c.eval_games, c.eval_opponents)
        bar.close()
        final = self.checkpoint_and_evaluate(c.final_eval_games, c.final_eval_opponents)
        save_value_file(self.folder.path / "policy.safetensors", self.net.value_weights(),
                        {"trained_from": "self-play from scratch (afterstate TD(lambda)); no heuristic, "
                                         "no hints, no imitation", "hints": None, "num_players": 2,
                         "steps": self.steps, "games": self.games, "run": c.run_name,
                         "config": self.folder.config_dict()})
        return self.folder.finish(self, final)


def train_afterstate(config: AfterstateConfig, resume: bool = False, progress: bool = True,
                     overwrite: bool = False) -> dict:
    """Run (or resume) an afterstate run; returns its ``evaluation.json``."""
    folder = RunFolder(Path(config.runs_dir) / config.run_name, config, resume=resume, overwrite=overwrite)
    with folder.lock():
        trainer = AfterstateTrainer(config, folder)
        if resume:
            tensors, meta = folder.load_newest_checkpoint(("net", "optimizer"),
                                                          ("steps", "games", "wall_s", "rng", "config"))
            hidden = meta["config"].get("hidden") if isinstance(meta["config"], dict) else None
            refuse_other_model(folder.path, {"hidden": hidden}, {"hidden": config.hidden})
            try:
                trainer.restore(tensors, meta)
            except (RuntimeError, KeyError, ValueError, TypeError) as exc:
                raise RunFolderError(f"{folder.path}: its newest checkpoint does not fit the config "
                                     f"({type(exc).__name__})") from None
            if trainer.games >= config.total_games:
                raise RunFolderError(f"{folder.path}: this run finished at {trainer.games} games; raise "
                                     f"total_games to train it further")
        return trainer.train(progress)


__all__ = ["AfterstateConfig", "AfterstateTrainer", "ValueNet", "afterstate_config", "lambda_returns",
           "train_afterstate"]
