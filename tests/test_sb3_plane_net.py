"""The SB3 path trains the self-play trainer's network (``network: plane_net``, with or without
the card head, card gains and depth): its policy file names ``plane_net`` with those arguments
and plays what the SB3 policy plays; hints, and the plane_net fields with another network, are
refused in one line."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from training.config import ConfigKeyError, config_from_dict


def test_plane_net_with_hints_is_refused_in_one_line():
    with pytest.raises(ConfigKeyError, match="plane_net reads the observation alone"):
        config_from_dict({"network": "plane_net", "hints": True})
    assert config_from_dict({"network": "plane_net", "hints": False}).network == "plane_net"


@pytest.mark.parametrize("fields, message", [
    ({"network": "cnn", "card_hidden": 8}, "are plane_net's"),
    ({"network": "mlp", "depth": 1}, "are plane_net's"),
    ({"network": "plane_net", "hints": False, "card_gains": True}, "card_gains needs the card head"),
])
def test_plane_net_fields_are_refused_in_one_line_where_they_mean_nothing(fields, message):
    with pytest.raises(ConfigKeyError, match=message):
        config_from_dict(fields)


NETWORKS = [{"channels": 4, "hidden": 16},
            {"channels": 4, "hidden": 16, "card_hidden": 8, "card_gains": True, "depth": 1}]


@pytest.mark.parametrize("network", NETWORKS, ids=["plain", "card_head_gains_depth"])
def test_a_plane_net_run_writes_a_plane_net_policy_file_that_plays_the_same(tmp_path, network):
    from arboretum_env.agents.policy import PolicyAgent
    from arboretum_env.agents.selfplay_net import PlaneNet
    from arboretum_env.vector import VectorEnv
    from training import train as TR
    from training.export import load_checkpoint

    config = config_from_dict({
        "run_name": "plane", "runs_dir": str(tmp_path), "total_timesteps": 96, "n_envs": 1, "n_steps": 48,
        "batch_size": 24, "n_epochs": 1, "network": "plane_net", **network,
        "eval_every": 48, "eval_games": 1, "final_eval_games": 1, "snapshot_every": 0, "bc_games": 0,
        "hints": False, "opponents": ["random"], "torch_threads": 1})
    TR.train(config, show_progress=False)
    model = load_checkpoint(tmp_path / "plane")[0]  # the last checkpoint: the policy file's weights
    agent = PolicyAgent(tmp_path / "plane" / "policy.safetensors")
    assert isinstance(agent.module, PlaneNet) and agent.metadata["hints"] is None
    net = agent.module  # the policy file's network is the one the config asked for
    assert (net.channels, net.hidden, net.card_hidden, net.card_gains, net.depth) == (
        4, 16, network.get("card_hidden", 0), network.get("card_gains", False), network.get("depth", 0))
    obs = VectorEnv(3, num_players=2).reset(seed=5)[0]
    with torch.no_grad():
        sb3_logits = model.policy.get_distribution(torch.from_numpy(obs)).distribution.logits
        expected = torch.log_softmax(model.policy.features_extractor.net(torch.from_numpy(obs))[0], dim=1)
    torch.testing.assert_close(sb3_logits, expected)  # the SB3 policy's actions are the net's logits
    for i in range(3):
        mine = torch.log_softmax(torch.from_numpy(agent.logits(obs[i])), dim=0)
        torch.testing.assert_close(mine, expected[i], atol=1e-4, rtol=1e-4)


def test_a_policy_saved_before_net_kwargs_builds_the_same_network():
    """SB3 checkpoints of a plane_net run written before ``net_kwargs`` name ``channels`` and
    ``hidden`` in their policy_kwargs: those still build that network."""
    from gymnasium import spaces

    from arboretum_env.actions import NUM_ACTIONS
    from arboretum_env.observation import OBS_SIZE
    from training.sb3_plane import PlanePolicy

    obs_space = spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
    old = PlanePolicy(obs_space, spaces.Discrete(NUM_ACTIONS), lambda _: 1e-3, channels=4, hidden=16)
    assert old.net_kwargs == {"channels": 4, "hidden": 16}
    net = old.features_extractor.net
    assert (net.channels, net.hidden, net.card_hidden, net.depth) == (4, 16, 0, 0)
