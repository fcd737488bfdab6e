"""RLlib integration (arboretum_env/integrations/rllib.py): RLlib's env pre-check, the turn-based
conventions, reward crediting in RLlib's MultiAgentEpisode, the illegal-action count, the policy
mapping, and examples/rllib_selfplay.py --smoke on a local Ray instance."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray", reason="RLlib not installed: pip install -e .[rllib] (make test-frameworks installs it)")
pytest.importorskip("ray.rllib", reason="RLlib not installed: pip install -e .[rllib] (make test-frameworks installs it)")
import torch  # noqa: E402
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode  # noqa: E402
from ray.rllib.utils.metrics.metrics_logger import MetricsLogger  # noqa: E402
from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402

from arboretum_env.actions import NUM_ACTIONS  # noqa: E402
from arboretum_env.env import win_loss_rewards  # noqa: E402
from arboretum_env.integrations.rllib import (  # noqa: E402
    ILLEGAL_ACTIONS_METRIC,
    MAIN_POLICY,
    ArboretumMultiAgentEnv,
    PoolMapping,
    count_illegal_actions,
    module_spec,
    ppo_config,
)
from arboretum_env.observation import OBS_SIZE  # noqa: E402

pytestmark = pytest.mark.frameworks
ROOT = Path(__file__).resolve().parents[1]
torch.set_num_threads(1)


def _episode(env):
    return MultiAgentEpisode(observation_space=env.observation_spaces,
                             action_space=env.action_spaces,
                             agent_to_module_mapping_fn=lambda agent, episode: MAIN_POLICY)


def _play(env, seed, illegal_at=None):
    """A game of uniformly random legal actions (an illegal one at decision ``illegal_at``),
    recorded into an RLlib MultiAgentEpisode. Returns (episode, last step, decisions per seat)."""
    rng = np.random.default_rng(seed)
    obs, infos = env.reset(seed=seed)
    episode = _episode(env)
    episode.add_env_reset(observations=obs, infos=infos)
    decisions = {a: 0 for a in env.possible_agents}
    t = 0
    while True:
        assert len(obs) == 1, "turn-based: only the agent to move observes"
        (agent, o), = obs.items()
        assert env.observation_spaces[agent].contains(o)
        legal = np.flatnonzero(o["action_mask"])
        if t == illegal_at:
            action = int(np.flatnonzero(o["action_mask"] == 0)[0])
        else:
            action = int(rng.choice(legal))
        step = env.step({agent: action})
        obs, rewards, terminateds, truncateds, infos = step
        decisions[agent] += 1
        episode.add_env_step(observations=obs, actions={agent: action}, rewards=rewards,
                             infos=infos, terminateds=terminateds, truncateds=truncateds)
        t += 1
        if terminateds["__all__"]:
            return episode, step, decisions


def test_rllib_env_precheck_passes_and_counts_the_illegal_action():
    env = ArboretumMultiAgentEnv({"num_players": 2})
    check_multiagent_environments(env)  # reset(seed=42), one unmasked random action
    assert env.illegal_actions <= 1
    space = env.observation_spaces["player_0"]
    assert space["observations"].shape == (OBS_SIZE,) and space["observations"].dtype == np.float32
    assert space["action_mask"].shape == (NUM_ACTIONS,) and space["action_mask"].dtype == np.float32


@pytest.mark.parametrize("num_players", [2, 3])
def test_every_seat_gets_its_final_reward_on_its_last_decision(num_players):
    env = ArboretumMultiAgentEnv({"num_players": num_players})
    episode, (obs, rewards, terminateds, truncateds, infos), decisions = _play(env, seed=11)
    assert set(obs) == set(rewards) == set(env.possible_agents)
    assert all(terminateds.values()) and not any(truncateds.values())
    assert all(not o["action_mask"].any() for o in obs.values())
    winners = [p for p, w in enumerate(infos["player_0"]["winners"]) if w]
    expected = win_loss_rewards(num_players, winners)
    assert episode.is_done
    for p, agent in enumerate(env.possible_agents):
        assert rewards[agent] == pytest.approx(expected[p])
        sa = episode.agent_episodes[agent]
        returns = list(sa.get_rewards())
        # The seats that did not act on the last step (the loser(s) included) get the reward
        # added to their last (hanging) action: one reward per decision, only the last nonzero.
        assert len(sa.get_actions()) == len(returns) == decisions[agent]
        assert returns[-1] == pytest.approx(expected[p])
        assert sum(abs(r) for r in returns[:-1]) == 0.0
        assert sa.is_terminated
        assert infos[agent]["illegal_action"] == 0


def test_illegal_action_ends_the_game_minus_one_for_the_offender():
    env = ArboretumMultiAgentEnv({"num_players": 3})
    episode, (obs, rewards, terminateds, _, infos), decisions = _play(env, seed=5, illegal_at=7)
    offender = [a for a, i in infos.items() if i["illegal_action"]]
    assert len(offender) == 1 and env.illegal_actions == 1
    assert rewards == {a: (-1.0 if a == offender[0] else 0.0) for a in env.possible_agents}
    assert terminateds["__all__"] and sum(decisions.values()) == 8
    with pytest.raises(RuntimeError):
        env.step({env.game.agent_selection: 0})
    logger = MetricsLogger()
    count_illegal_actions(episode=episode, metrics_logger=logger)
    count_illegal_actions(episode=_play(env, seed=6)[0], metrics_logger=logger)
    assert logger.peek(ILLEGAL_ACTIONS_METRIC) == 1


def test_reset_seed_replays_the_games():
    def first_observations(seed):
        env = ArboretumMultiAgentEnv({"num_players": 2})
        out = [env.reset(seed=seed)[0]]
        out += [env.reset()[0] for _ in range(2)]
        return [(a, o["observations"]) for d in out for a, o in d.items()]

    a, b = first_observations(3), first_observations(3)
    assert all(x[0] == y[0] and np.array_equal(x[1], y[1]) for x, y in zip(a, b))


def test_shipped_action_masking_module_never_picks_an_illegal_action():
    env = ArboretumMultiAgentEnv({"num_players": 2})
    spec = module_spec()
    spec.observation_space = env.observation_spaces["player_0"]
    spec.action_space = env.action_spaces["player_0"]
    module = spec.build()
    obs, _ = env.reset(seed=1)
    for _ in range(30):
        (agent, o), = obs.items()
        batch = {"obs": {k: torch.from_numpy(v[None]) for k, v in o.items()}}
        with torch.no_grad():
            logits = module.forward_exploration(batch)["action_dist_inputs"][0]
        action = int(torch.distributions.Categorical(logits=logits).sample())
        assert o["action_mask"][action] == 1
        obs = env.step({agent: action})[0]


def test_ppo_config_self_play_and_pool_mapping():
    config = ppo_config(num_players=2)
    assert set(config.policies) == {MAIN_POLICY}
    assert config.policy_mapping_fn("player_1", None) == MAIN_POLICY
    config = ppo_config(num_players=4, pool=["past_1", "past_2"])
    assert set(config.policies) == {MAIN_POLICY, "past_1", "past_2"}
    assert list(config.policies_to_train) == [MAIN_POLICY]
    mapping = PoolMapping(4, ["past_1", "past_2"])
    for _ in range(20):
        episode = MultiAgentEpisode()
        seats = [mapping(f"player_{p}", episode) for p in range(4)]
        assert seats.count(MAIN_POLICY) == 1 and set(seats) <= {MAIN_POLICY, "past_1", "past_2"}
        assert seats == [mapping(f"player_{p}", episode) for p in range(4)]
    with pytest.raises(ValueError):
        ppo_config(pool=[MAIN_POLICY])


def test_example_smoke_with_two_env_runners():
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_ADDRESS")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run(
        [sys.executable, "examples/rllib_selfplay.py", "--smoke", "--num-env-runners", "2"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["framework"] == "rllib" and summary["num_env_runners"] == 2
    assert summary["illegal_actions"] == 0
    assert summary["env_steps"] > 0 and summary["steps_per_s"] > 0
    assert summary["games"] > 0
