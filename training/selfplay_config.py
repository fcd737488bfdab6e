"""The self-play trainer's typed config (``SelfPlayConfig``): every field documented, with its
allowed range (``training.config_check.checked``), checked before any work (one line naming the
field, ``ConfigKeyError``)."""

from __future__ import annotations

from dataclasses import dataclass

from arboretum_env.agents import BASELINES
from arboretum_env.errors import UserError

from .config_check import FOLDER_NAME, checked, config_from_mapping

MAX_DEPTH = 16
"""The largest ``depth`` (``PlaneNet``'s residual blocks) a config or a benchmark accepts."""

EVAL_BASELINES = tuple(BASELINES)
"""The evaluation opponents a config may name: the agents known by name (``agents.BASELINES``)."""


class ConfigKeyError(UserError):
    """A bad training config (unknown key, wrong type, value out of range)."""


@dataclass
class SelfPlayConfig:
    trainer: str = checked("selfplay", choices=("selfplay",))
    """Which trainer reads this config: ``selfplay`` (``training.selfplay``)."""
    # --- the run
    run_name: str = checked("selfplay", **FOLDER_NAME)
    """Outputs go to ``<runs_dir>/<run_name>/``."""
    runs_dir: str = checked("models", min_len=1)
    """Folder that holds the runs."""
    num_players: int = checked(2, choices=(2, 3, 4))
    """Table size (every seat is played by the learner or a snapshot of it)."""
    seed: int = checked(0, ge=0, le=2**62)
    """Seeds the games, torch and the snapshot choices: the same seed gives the same run."""
    reward_mode: str = checked("win_loss", choices=("win_loss", "score_margin"))
    """End-of-game reward (see the env docs)."""
    reward_shaping: str = checked("none", choices=("none", "path_potential", "score_potential"))
    """``none``: the end-of-game reward only. Else potential-based shaping from the game's own
    score (``training.shaping``), which leaves every game's return unchanged and moves credit
    to the decisions that change the potential: ``path_potential`` (own best-path points minus
    the best other seat's, / 20, read from the observation) or ``score_potential`` (the seat's
    score margin if the game ended now, rights included, / 20). Not a heuristic agent or
    advice: the rules' score."""
    total_steps: int = checked(1_000_000, ge=1, le=10**11)
    """Learner decisions to train for (every decision of a seat played by the current policy)."""
    torch_threads: int = checked(1, ge=1, le=256)
    """Threads torch may use. 1 by default: with the vector env in the same process, a second
    torch thread gains little on 2 cores and, on a busy machine, torch's spinning threads
    slowed a run several times over (measured: 211 steps/s with 2 threads, 1,247 with 1)."""

    # --- collection
    num_envs: int = checked(128, ge=1, le=65_536)
    """Games played at once (one batched forward per policy per step)."""
    rollout_steps: int = checked(32, ge=1, le=100_000)
    """Vector steps per rollout; a rollout holds up to ``num_envs * rollout_steps`` decisions."""

    # --- PPO
    learning_rate: float = checked(3e-4, ge=1e-8, le=1.0)
    """Adam step size, annealed linearly to 10% over the run."""
    update_epochs: int = checked(3, ge=1, le=100)
    """Passes over each rollout."""
    minibatch_size: int = checked(1024, ge=8, le=1_000_000)
    """Decisions per gradient step."""
    gamma: float = checked(1.0, ge=0.0, le=1.0)
    """Discount per own decision (rewards come only at the end of a game)."""
    gae_lambda: float = checked(0.95, ge=0.0, le=1.0)
    """GAE smoothing."""
    clip_coef: float = checked(0.2, ge=1e-6, le=10.0)
    """PPO clip range (a positive number)."""
    ent_coef: float = checked(0.01, ge=0.0, le=10.0)
    """Entropy bonus."""
    vf_coef: float = checked(0.5, ge=0.0, le=100.0)
    """Value-loss weight."""
    max_grad_norm: float = checked(0.5, ge=1e-6, le=1e6)
    """Gradient clipping."""

    # --- network (arboretum_env.agents.selfplay_net.PlaneNet)
    channels: int = checked(8, ge=1, le=512)
    """Convolution channels over the 19 planes."""
    hidden: int = checked(128, ge=8, le=4096)
    """Width of the global summary."""
    card_hidden: int = checked(0, ge=0, le=4096)
    """Units of the per-card head (``agents.card_head.CardHead``: logits for playing,
    discarding and taking each card, one small network shared by all cards); 0: no card head."""
    card_gains: bool = checked(False, choices=(True, False))
    """With the card head: each card in view (hand, pending, pile tops) also reads what it would
    add to the best path of its species in the observer's and the next seat's arboretum
    (``arboretum_env.batch.card_gains``, a fixed function of the observation); needs
    ``card_hidden > 0``."""
    depth: int = checked(0, ge=0, le=MAX_DEPTH)
    """Residual blocks (two layers of ``hidden`` units each) over the global summary; above 0
    the cell logits and the card head's logits also get a hidden layer each. 0: the plain
    network (every policy file written before this field existed)."""

    hand_critic: int = checked(0, ge=0, le=4096)
    """Units of an asymmetric critic (``training.hand_critic``): the learner's value, used only in
    training, also reads every other seat's hand from the trainer's tables (a baseline that
    leaves the policy gradient unbiased); the policy never reads them, and the policy file does
    not hold the critic. 0: the value reads the observation only."""

    # --- snapshots of the learner as opponents
    snapshot_every: int = checked(100_000, ge=0, le=10**11)
    """Learner steps between frozen copies joining the pool (0: never)."""
    pool_size: int = checked(5, ge=1, le=1000)
    """Newest snapshots kept."""
    snapshot_fraction: float = checked(0.3, ge=0.0, le=1.0)
    """Share of new games where the learner plays one seat and a snapshot all others (else the
    learner plays every seat)."""
    league: list = checked([], test=lambda paths: all(isinstance(p, str) and p for p in paths),
                           meaning="a list of policy file paths")
    """Self-play policy files (written by this trainer, same player count) that stay in the
    snapshot pool for the whole run, beside the snapshots: fixed opponents. An exploiter run
    names the main policy here (with ``snapshot_every: 0, snapshot_fraction: 1.0``); a main
    run names its exploiters (``training.selfplay_league``)."""
    init_policy: str = checked("")
    """A self-play policy file whose weights start the learner (its network must match
    ``channels``, ``hidden``, ``card_hidden``, ``card_gains`` and ``depth``); empty: a fresh network. The optimizer starts
    fresh."""

    # --- evaluation and checkpoints
    eval_every: int = checked(100_000, ge=1, le=10**11)
    """Learner steps between evaluations (and checkpoints)."""
    eval_games: int = checked(60, ge=1, le=1_000_000)
    """Games per baseline per evaluation (seats alternate)."""
    eval_opponents: list = checked(["random", "greedy"], each=EVAL_BASELINES, min_len=1)
    """Baselines evaluated against: random, greedy, greedy_plus, tempo (heuristics only ever
    appear here, never in training)."""
    final_eval_games: int = checked(200, ge=1, le=1_000_000)
    """Games per baseline in the evaluation at the end."""
    final_eval_opponents: list = checked(["random", "greedy"], each=EVAL_BASELINES, min_len=1)
    """Baselines of the final evaluation."""


CARD_GAINS_NEED_THE_HEAD = (lambda c: c.card_hidden or not c.card_gains,
                            "card_gains needs the card head (set card_hidden above 0)")
"""The relation (``config_check``) of ``card_hidden`` and ``card_gains``, in every config that
builds a ``PlaneNet`` (this one, and the SB3 config's ``plane_net``)."""
MAX_ROLLOUT = 1 << 20
"""The most decisions one rollout may hold, in either trainer (its buffers are in memory: about
7 KB a decision in the self-play trainer, 1,048,576 decisions about 7 GB)."""
RELATIONS = (
    CARD_GAINS_NEED_THE_HEAD,
    (lambda c: c.num_envs * c.rollout_steps <= MAX_ROLLOUT,
     f"num_envs * rollout_steps must be at most {MAX_ROLLOUT:,} (one rollout's buffers are held in memory)"),
)
"""Rules over several fields, checked after each field's own range."""


def selfplay_config(data: dict, source: str = "config") -> SelfPlayConfig:
    """A checked ``SelfPlayConfig`` from a mapping (unknown keys, types and ranges checked)."""
    return config_from_mapping(SelfPlayConfig, data, source, RELATIONS, error=ConfigKeyError)


def config_getter(config):
    """``get(key, default)`` over a config object or a checkpoint's config dict."""
    return config.get if isinstance(config, dict) else lambda key, default=None: getattr(config, key, default)


def network_kwargs(config) -> dict:
    """``PlaneNet``'s arguments from a config (an object or a checkpoint's dict); ``card_hidden``,
    ``card_gains`` and ``depth`` only when on, so that files without them read as before."""
    get = config_getter(config)
    kwargs = {"channels": int(get("channels")), "hidden": int(get("hidden"))}
    if int(get("card_hidden", 0) or 0):
        kwargs["card_hidden"] = int(get("card_hidden"))
    if get("card_gains", False):
        kwargs["card_gains"] = True
    if int(get("depth", 0) or 0):
        kwargs["depth"] = int(get("depth"))
    return kwargs
