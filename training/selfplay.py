"""Batched self-play PPO with action masking, in one file that reads top to bottom (CleanRL style).

No heuristic anywhere in training: every seat of every game is played by the learner's current
policy, a frozen snapshot of it or a fixed self-play policy (``league``); the heuristics
(random, greedy, tempo) appear only as evaluation opponents.

1. ``VectorEnv`` plays ``num_envs`` games at once on the compiled fast path.
2. Each step, the seats to move are grouped by who plays them: the learner (one batched forward
   of the current network, its decisions stored for training) and each snapshot in the pool
   (one batched forward each); observations are stored as the network reads them, the active
   cells packed once (``training.packed_rows``). A new game is a pure self-play game (the
   learner in every seat) or, with chance ``snapshot_fraction`` once the pool is not empty, a
   game of the learner in one seat against one opponent of the pool in all the others. The
   pool: the snapshots, and the fixed self-play policies of ``league``
   (``training.selfplay_league``: a main policy for an exploiter run, exploiters for a main run).
3. Returns per seat: each seat's decisions form their own trajectory; a seat's end-of-game
   reward (the loser's too) is credited to that seat's last decision; GAE runs along each
   seat's own chain of decisions (``_gae``). With ``reward_shaping`` (``path_potential`` or
   ``score_potential``, ``training.shaping``), each decision also gets ``gamma * phi(next own
   decision) - phi(this one)`` (phi is 0 once the game is over), which sums to the same return
   over a game.
4. PPO update (clipped objective, value loss, entropy bonus; logits of illegal ids at -1e9).
   With ``hand_critic``, the value (training only) also reads the other seats' hands
   (``training.hand_critic``); the policy reads its observation alone.
5. Every ``eval_every`` steps: checkpoint, then evaluation against the baselines, curves
   (``curve.jsonl``, TensorBoard, ``learning_curve.png``), OpenSkill ratings across checkpoints.

Outputs in ``<runs_dir>/<run_name>/``: ``config.yaml``, ``checkpoints/step_N.pt`` (+ ``.json``),
``curve.jsonl``, ``tb/``, ``learning_curve.png``, and at the end ``policy`` file and
``evaluation.json``. ``--resume`` continues from the newest intact checkpoint.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.agents.selfplay_net import PlaneNet
from arboretum_env.engine.jit_playout import compile_kernel
from arboretum_env.vector import VectorEnv

from .batch_eval import evaluate_policy
from .hand_critic import HAND_INPUTS, HandCritic, other_hands
from .packed_rows import PackedRows
from .selfplay_config import SelfPlayConfig, network_kwargs
from .selfplay_export import export_selfplay_policy
from .selfplay_io import RunFolder, RunFolderError, restore_trainer, trainer_state, write_curve_plot
from .selfplay_league import initial_weights, league_opponents
from .shaping import VIEW_COLUMNS, potential

LEARNER = -1
ILLEGAL_LOGIT = -1e9


# ----------------------------------------------------------------------------- returns
def _gae(values, rewards, dones, nexts, bootstrap, gamma, lam, advantages):  # pragma: no cover
    """GAE along each seat's chain of decisions: ``nexts[j]`` is the buffer index of the same
    seat's next decision (-1 if it is not in this rollout: then ``bootstrap[j]`` is the value
    of that seat's view now); ``dones[j]``: ``j`` was the seat's last decision of its game;
    ``rewards[j]``: what decision ``j`` earned (the end-of-game reward, plus shaping if on)."""
    for j in range(values.shape[0] - 1, -1, -1):
        if dones[j]:
            advantages[j] = rewards[j] - values[j]
        elif nexts[j] < 0:
            advantages[j] = rewards[j] + gamma * bootstrap[j] - values[j]
        else:
            k = nexts[j]
            advantages[j] = rewards[j] + gamma * values[k] - values[j] + gamma * lam * advantages[k]


_gae = compile_kernel(_gae)


def masked_logits(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Illegal ids at -1e9: zero probability, and finite (no NaN in the entropy). Probabilities
    come from ``softmax`` of these, not ``exp`` of their log-softmax: ``exp`` of values that
    underflow is about 10x slower on CPUs, ``softmax`` is not."""
    return logits.masked_fill(masks == 0, ILLEGAL_LOGIT)


def log_probs(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(masked_logits(logits, masks), dim=1)


# ----------------------------------------------------------------------------- the trainer
class SelfPlayTrainer:
    def __init__(self, config: SelfPlayConfig, folder: RunFolder, start=None, league=None):
        """``start``, ``league``: ``initial_weights(config)`` and ``league_opponents(config)``
        when the caller has read them already (train_selfplay reads them before it claims the
        run folder, so that a bad file leaves no folder behind)."""
        self.c, self.folder = config, folder
        torch.set_num_threads(config.torch_threads)
        torch.manual_seed(config.seed)
        self.generator = torch.Generator().manual_seed(config.seed)  # the policy's samples
        self.rng = np.random.default_rng(config.seed)
        self.net = PlaneNet(**network_kwargs(config))
        start = initial_weights(config) if start is None else start
        if start is not None:
            self.net.load_state_dict(start)
        self.league = league_opponents(config) if league is None else league  # never evicted
        # hand_critic: the learner's value also reads the other seats' hands (training only)
        self.critic = HandCritic(config.hidden, config.hand_critic) if config.hand_critic else None
        self.trained = list(self.net.parameters()) + (list(self.critic.parameters()) if self.critic else [])
        self.optimizer = torch.optim.Adam(self.trained, lr=config.learning_rate, eps=1e-5,
                                          fused=True)  # one kernel per step: 0.2 against 0.55 ms here
        self.snapshots: list[PlaneNet] = []
        self.snapshot_steps: list[int] = []
        self.steps = 0  # learner decisions trained on
        self.wall = 0.0  # seconds of training (collection and updates), evaluations excluded
        self.next_eval = config.eval_every
        self.next_snapshot = 0 if config.snapshot_every else None  # the first snapshot: the untrained net
        self.venv = VectorEnv(config.num_envs, config.num_players, config.reward_mode)
        n, p = config.num_envs, config.num_players
        self.controller = np.full((n, p), LEARNER, np.int64)  # per game and seat: who plays it
        size = n * config.rollout_steps
        # observations are stored as PlaneNet reads them, their active cells packed (packed_rows);
        # the opponents' rows go to a scratch store, re-used every step
        self.rollout = PackedRows(size, card_frontier=self.net.cards is not None, card_gains=self.net.card_gains)
        self.scratch = PackedRows(n, card_frontier=any(net.cards is not None for net in [self.net, *self.league]),
                                  card_gains=any(net.card_gains for net in [self.net, *self.league]))
        self.buf_mask = np.zeros((size, NUM_ACTIONS), np.int8)
        self.buf_action = np.zeros(size, np.int64)
        self.buf_logp = np.zeros(size, np.float32)
        self.buf_value = np.zeros(size, np.float32)
        self.buf_phi = np.zeros(size, np.float32)  # reward_shaping's phi of each decision's position
        self.buf_hands = np.zeros((size if self.critic else 0, HAND_INPUTS), np.float32)  # the critic's
        self.buf_reward = np.zeros(size, np.float32)
        self.buf_done = np.zeros(size, np.bool_)
        self.buf_next = np.full(size, -1, np.int64)
        self.buf_game_seat = np.zeros((size, 2), np.int64)
        self.open = np.full((n, p), -1, np.int64)  # buffer index of each seat's last decision

    # ------------------------------------------------------------------ acting
    def act(self, net: PlaneNet, obs: np.ndarray, masks: np.ndarray, greedy: bool = False):
        """``net``'s actions (and their log-probabilities and values) for observations ``obs``."""
        with torch.inference_mode():
            return self.choose(*net(torch.from_numpy(obs)), masks, greedy)

    def act_stored(self, net: PlaneNet, store: PackedRows, first: int, last: int, masks: np.ndarray,
                   hands: np.ndarray | None = None):
        """``act`` on rows ``first .. last - 1`` of a ``PackedRows`` store; ``hands``: the other
        seats' hands, for the learner's critic (its values then include the critic's part)."""
        with torch.inference_mode():
            if hands is None:
                return self.choose(*store.forward(net, first, last), masks)
            return self.choose(*self.with_critic(store.forward(net, first, last, with_summary=True), hands), masks)

    def with_critic(self, out: tuple, hands) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits, value)`` from a forward ``with_summary``, the critic's part added to the value."""
        logits, value, h = out
        return logits, value + self.critic(h, torch.as_tensor(hands))

    def choose(self, logits: torch.Tensor, value: torch.Tensor, masks: np.ndarray, greedy: bool = False):
        """Sample (or, ``greedy``, take the most likely of) the legal actions from ``logits``."""
        masked = masked_logits(logits, torch.from_numpy(masks))
        logp = torch.log_softmax(masked, dim=1)
        if not torch.isfinite(logits).all():
            raise FloatingPointError("the policy's logits are not finite: training diverged")
        if greedy:
            return logp.argmax(1).numpy(), None, None
        # inverse-CDF sampling (cheaper than torch.multinomial on wide rows)
        cdf = torch.softmax(masked, dim=1).cumsum(1)
        u = (1.0 - torch.rand(cdf.shape[0], 1, generator=self.generator)) * cdf[:, -1:]  # in (0, total]
        action = (cdf < u).sum(1).clamp_(max=NUM_ACTIONS - 1)
        return action.numpy(), logp.gather(1, action[:, None]).squeeze(1).numpy(), value.numpy()

    def greedy_policy(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.act(self.net, obs, masks, greedy=True)[0]

    def opponents(self) -> list[PlaneNet]:
        """The pool a game's opponents are drawn from: the league, then the snapshots."""
        return self.league + self.snapshots

    def _deal_controllers(self, games: np.ndarray) -> None:
        """Who plays each seat of the new games in rows ``games``."""
        pool = len(self.league) + len(self.snapshots)
        for g in games:
            self.controller[g] = LEARNER
            if pool and self.rng.random() < self.c.snapshot_fraction:
                seat = int(self.rng.integers(self.c.num_players))
                self.controller[g] = int(self.rng.integers(pool))
                self.controller[g, seat] = LEARNER

    # ------------------------------------------------------------------ collection
    def collect(self) -> int:
        """One rollout; returns the number of learner decisions stored."""
        venv, c = self.venv, self.c
        obs, masks, to_move = venv.observations, venv.masks, venv.to_move
        rows = np.arange(c.num_envs)
        size = 0
        self.open[:] = -1
        self.buf_next[:] = -1
        self.buf_done[:] = False
        self.buf_reward[:] = 0.0
        actions = np.zeros(c.num_envs, np.int64)
        pool = self.opponents()
        for _ in range(c.rollout_steps):
            who = self.controller[rows, to_move]
            mine = np.flatnonzero(who == LEARNER)
            j = np.arange(size, size + len(mine))
            self.rollout.write(obs, mine, size)
            self.buf_mask[j] = masks[mine]
            hands = None
            if self.critic is not None:
                hands = self.buf_hands[j] = other_hands(venv.tables, mine, to_move[mine])
            a, logp, value = self.act_stored(self.net, self.rollout, size, size + len(mine), masks[mine], hands)
            actions[mine] = a
            self.buf_action[j], self.buf_logp[j], self.buf_value[j] = a, logp, value
            if c.reward_shaping != "none":  # of the table before the move
                self.buf_phi[j] = potential(c.reward_shaping, venv.tables, obs[mine, :VIEW_COLUMNS],
                                            mine, to_move[mine])
            self.buf_game_seat[j, 0], self.buf_game_seat[j, 1] = mine, to_move[mine]
            previous = self.open[mine, to_move[mine]]
            self.buf_next[previous[previous >= 0]] = j[previous >= 0]
            self.open[mine, to_move[mine]] = j
            size += len(mine)
            for k in np.unique(who[who != LEARNER]):
                theirs = np.flatnonzero(who == k)
                self.scratch.write(obs, theirs, 0)
                actions[theirs] = self.act_stored(pool[k], self.scratch, 0, len(theirs), masks[theirs])[0]
            obs, masks, to_move, rewards, dones = venv.step(actions)
            ended = np.flatnonzero(dones)
            for g in ended:
                for seat in range(c.num_players):
                    last = self.open[g, seat]
                    if last >= 0:
                        self.buf_reward[last] = rewards[g, seat]
                        self.buf_done[last] = True
                        self.open[g, seat] = -1
            if len(ended):
                self._deal_controllers(ended)
        # bootstrap: the value of each open seat's view now
        self.bootstrap = np.zeros(size, np.float32)
        shaping = c.reward_shaping != "none"
        boot_phi = np.zeros(size, np.float32)  # phi of those views (0 for chains that ended)
        for seat in range(c.num_players):
            games = np.flatnonzero(self.open[:, seat] >= 0)
            if len(games):
                views = venv.observe(np.full(len(games), seat), rows=games)
                with torch.no_grad():
                    out = self.net(torch.from_numpy(views), with_summary=self.critic is not None)
                    if self.critic is not None:
                        out = self.with_critic(out, other_hands(venv.tables, games, np.full(len(games), seat)))
                    self.bootstrap[self.open[games, seat]] = out[1].numpy()
                if shaping:
                    boot_phi[self.open[games, seat]] = potential(c.reward_shaping, venv.tables, views, games,
                                                                 np.full(len(games), seat))
        if shaping:
            phi = self.buf_phi[:size]
            nxt = self.buf_next[:size]
            following = np.where(nxt >= 0, phi[np.maximum(nxt, 0)], boot_phi)  # 0 after a game's end
            self.buf_reward[:size] += c.gamma * following - phi
        return size

    # ------------------------------------------------------------------ update
    def update(self, size: int) -> dict:
        c = self.c
        advantages = np.zeros(size, np.float32)
        _gae(self.buf_value[:size], self.buf_reward[:size], self.buf_done[:size], self.buf_next[:size],
             self.bootstrap, c.gamma, c.gae_lambda, advantages)
        returns = advantages + self.buf_value[:size]
        frac = min(1.0, self.steps / c.total_steps)
        for group in self.optimizer.param_groups:
            group["lr"] = c.learning_rate * (1.0 - 0.9 * frac)
        illegal = torch.from_numpy(self.buf_mask[:size]) == 0  # once, not per minibatch
        actions, old_logp = torch.from_numpy(self.buf_action[:size]), torch.from_numpy(self.buf_logp[:size])
        adv_all, ret_all = torch.from_numpy(advantages), torch.from_numpy(returns)
        rollout = self.rollout.minibatches(size)  # prepared once for every minibatch
        hands = torch.from_numpy(self.buf_hands[:size]) if self.critic is not None else None
        stats = []
        for _ in range(c.update_epochs):
            order = torch.from_numpy(self.rng.permutation(size))
            # equal minibatches of at least minibatch_size (no tiny tail: its advantage std)
            for mb in torch.tensor_split(order, max(1, size // c.minibatch_size)):
                if hands is None:
                    logits, value = rollout.forward(self.net, mb)
                else:
                    logits, value = self.with_critic(rollout.forward(self.net, mb, with_summary=True), hands[mb])
                masked = logits.masked_fill(illegal[mb], ILLEGAL_LOGIT)
                logp_all = torch.log_softmax(masked, dim=1)
                logp = logp_all.gather(1, actions[mb][:, None]).squeeze(1)
                ratio = torch.exp(logp - old_logp[mb])
                adv = adv_all[mb]
                adv = (adv - adv.mean()) / (adv.std(unbiased=False) + 1e-8)
                policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - c.clip_coef, 1 + c.clip_coef)).mean()
                value_loss = 0.5 * ((value - ret_all[mb]) ** 2).mean()
                entropy = -(torch.softmax(masked, dim=1) * logp_all).sum(1).mean()
                loss = policy_loss + c.vf_coef * value_loss - c.ent_coef * entropy
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.trained, c.max_grad_norm)
                self.optimizer.step()
                stats.append((policy_loss.item(), value_loss.item(), entropy.item(),
                              ((ratio - 1).abs() > c.clip_coef).float().mean().item()))
        pl, vl, ent, clip = np.mean(stats, axis=0)
        return {"policy_loss": pl, "value_loss": vl, "entropy": ent, "clip_fraction": clip}

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, games: int, opponents) -> dict:
        out = {}
        for b, name in enumerate(opponents):
            result = evaluate_policy(self.greedy_policy, name, self.c.num_players, games,
                                     seed=10_000_019 * (b + 1), concurrency=64)
            out[name] = result
        return out

    # ------------------------------------------------------------------ the loop
    def train(self, progress: bool = True) -> dict:
        c = self.c
        from tqdm import tqdm

        self.folder.forget_after(self.steps)  # rows of a later, damaged checkpoint's run
        if self.steps == 0 and not self.folder.curve():
            self.checkpoint_and_evaluate()  # the curve starts at step 0
        elif all(row["step"] != self.steps for row in self.folder.curve()):
            # interrupted during the evaluation of this checkpoint: do it again
            self.folder.record_evaluation(self, self.evaluate(c.eval_games, c.eval_opponents))
        bar = tqdm(total=c.total_steps, initial=self.steps, disable=not progress, unit="step",
                   dynamic_ncols=True)
        obs_ready = False
        while self.steps < c.total_steps:
            if self.next_snapshot is not None and self.steps >= self.next_snapshot:
                self.add_snapshot()  # the untrained net first (next_snapshot starts at 0)
                self.next_snapshot = (self.steps // c.snapshot_every + 1) * c.snapshot_every
            if not obs_ready:
                self.venv.reset(seed=int(self.rng.integers(2**62)))
                self._deal_controllers(np.arange(c.num_envs))
                obs_ready = True
            start = time.perf_counter()
            size = self.collect()
            stats = self.update(size)
            self.wall += time.perf_counter() - start
            self.steps += size
            bar.update(size)
            bar.set_postfix(steps_per_s=f"{self.steps / max(self.wall, 1e-9):,.0f}", **self.folder.latest_rates())
            self.folder.log_scalars(self.steps, stats)
            if self.steps >= self.next_eval or self.steps >= c.total_steps:
                self.checkpoint_and_evaluate()
                self.next_eval = (self.steps // c.eval_every + 1) * c.eval_every
        bar.close()
        final = self.evaluate(c.final_eval_games, c.final_eval_opponents)
        export_selfplay_policy(self, self.folder.path / "policy.safetensors")
        return self.folder.finish(self, final)

    def add_snapshot(self) -> None:
        snapshot = PlaneNet(**network_kwargs(self.c))
        snapshot.load_state_dict(self.net.state_dict())
        snapshot.eval()
        self.snapshots.append(snapshot)
        self.snapshot_steps.append(self.steps)
        if len(self.snapshots) > self.c.pool_size:
            self.snapshots.pop(0)
            self.snapshot_steps.pop(0)

    def checkpoint_and_evaluate(self) -> None:
        self.folder.save_checkpoint(self.steps, *trainer_state(self))
        evaluation = self.evaluate(self.c.eval_games, self.c.eval_opponents)
        self.folder.record_evaluation(self, evaluation)


def train_selfplay(config: SelfPlayConfig, resume: bool = False, progress: bool = True,
                   overwrite: bool = False) -> dict:
    """Run (or resume) a self-play run; returns its final evaluation. The folder is locked and
    claimed as ``training.run_folder`` does it (``overwrite`` is its ``replace``)."""
    start, league = initial_weights(config), league_opponents(config)  # bad files: before the folder
    folder = RunFolder(Path(config.runs_dir) / config.run_name, config, resume=resume, overwrite=overwrite)
    with folder.lock():
        if resume:  # one line, not a failed load, if the network differs; before any set-up
            tensors, meta = folder.load_newest_checkpoint()
            folder.check_resumable(meta)
        trainer = SelfPlayTrainer(config, folder, start, league)
        if resume:
            try:
                restore_trainer(trainer, tensors, meta)
            except (RuntimeError, KeyError, ValueError, TypeError, IndexError) as exc:
                first = (str(exc).splitlines() or [type(exc).__name__])[0][:160]
                raise RunFolderError(f"{folder.path}: its newest checkpoint does not fit the config's "
                                     f"trainer ({type(exc).__name__}: {first})") from None
        return trainer.train(progress)


__all__ = ["SelfPlayTrainer", "train_selfplay", "write_curve_plot"]
