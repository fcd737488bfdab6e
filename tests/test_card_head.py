"""``PlaneNet``'s card head: the frontier it reads agrees with the engine, its logits reach only
the card decisions, and networks and policy files without it are unchanged."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from arboretum_env import actions as A
from arboretum_env.agents.card_head import NUM_CARDS, CardHead, frontier_flags
from arboretum_env.agents.networks import NetworkSpecError, build_network
from arboretum_env.agents.selfplay_net import PlaneNet
from arboretum_env.engine import GameConfig, new_game, pack_cell, unpack_cell
from arboretum_env.observation import encode
from arboretum_env.table_view import table_view


def _positions(num_players: int, seed: int, every: int = 7):
    """``(facts, observation)`` along one random game; facts, taken at that moment (a view
    shares the live state): each seat's frontier flags and discard pile top (or None)."""
    rng = np.random.default_rng(seed)
    state, pending, mask, out = new_game(GameConfig(num_players), seed), None, np.zeros(A.NUM_ACTIONS, np.int8), []
    for step in range(10_000):
        if state.game_over:
            return out
        A.write_mask(state, pending, mask)
        tv = table_view(state, state.current_player, pending)
        if step % every == 0:
            view = tv.view
            facts = {"frontier": [_expected_frontier(view.arboretums[k]) for k in range(2)],
                     "tops": [view.discards[k][-1] if k < view.num_players and view.discards[k] else None
                              for k in range(A.MAX_PLAYERS)]}
            out.append((facts, encode(tv)))
        pending = A.apply_id(state, pending, int(rng.choice(np.flatnonzero(mask))))
    raise AssertionError("game did not end")


def _expected_frontier(arboretum) -> np.ndarray:
    flags = np.zeros(NUM_CARDS, np.float32)
    for cell, card in arboretum.items():
        row, col = unpack_cell(cell)
        near = [(row - 1, col), (row + 1, col), (row, col - 1), (row, col + 1)]
        if any(pack_cell(r, c) not in arboretum for r, c in near):
            flags[card] = 1.0
    return flags


@pytest.mark.parametrize("num_players", [2, 4])
def test_the_frontier_read_off_the_planes_matches_the_engine(num_players):
    net = PlaneNet(4, 16, card_hidden=8)
    positions = _positions(num_players, seed=num_players)
    obs = torch.from_numpy(np.stack([o for _, o in positions]))
    _, cells = net.split(obs)
    got = frontier_flags(cells).numpy()
    checked = 0
    for i, (facts, _) in enumerate(positions):
        for seat in range(2):
            expected = facts["frontier"][seat]
            assert np.array_equal(got[i, :, seat], expected), (i, seat)
            checked += int(expected.sum())
    assert checked > 50  # the games reached real arboretums


def test_the_card_head_reaches_only_the_card_decisions():
    torch.manual_seed(0)
    net = PlaneNet(4, 16, card_hidden=8)
    torch.nn.init.normal_(net.cards.out.weight)  # make its logits large enough to see
    positions = _positions(2, seed=5, every=3)
    obs = torch.from_numpy(np.stack([o for _, o in positions]))
    seen = []
    net.cards.register_forward_hook(lambda module, args, output: seen.append(output))
    with torch.no_grad():
        logits, value = net(obs)
        per_card = seen[0].numpy()  # [B, 80, 3]: play, discard, take
        head, net.cards = net.cards, None
        plain, plain_value = net(obs)
    extra = (logits - plain).numpy()
    assert torch.equal(value, plain_value)
    assert np.allclose(extra[:, A.PLAY_CARD:A.PLAY_CARD + NUM_CARDS], per_card[:, :, 0], atol=1e-6)
    assert np.allclose(extra[:, A.DISCARD:A.DISCARD + NUM_CARDS], per_card[:, :, 1], atol=1e-6)
    assert not extra[:, :A.DRAW_DISCARD].any() and not extra[:, A.PLAY_CELL:A.DISCARD].any()
    tops_seen = 0
    for i, (facts, _) in enumerate(positions):
        for k, top in enumerate(facts["tops"]):
            want = 0.0 if top is None else per_card[i, top, 2]
            assert extra[i, A.DRAW_DISCARD + k] == pytest.approx(want, abs=1e-6)
            tops_seen += top is not None
    assert tops_seen > 20


def test_networks_without_the_card_head_keep_their_parameters():
    plain = PlaneNet(8, 32)
    assert plain.cards is None and not any(k.startswith("cards.") for k in plain.state_dict())
    assert build_network("plane_net", {"channels": 8, "hidden": 32}).state_dict().keys() == plain.state_dict().keys()
    with_head = build_network("plane_net", {"channels": 8, "hidden": 32, "card_hidden": 16})
    assert isinstance(with_head.cards, CardHead)
    extra = with_head.size_report()["parameters"] - plain.size_report()["parameters"]
    assert extra == sum(p.numel() for p in with_head.cards.parameters())
    assert with_head.size_report()["multiply_adds"] > plain.size_report()["multiply_adds"]
    with pytest.raises(NetworkSpecError, match="card_hidden must be an integer 0"):
        build_network("plane_net", {"channels": 8, "hidden": 32, "card_hidden": -1})
    with pytest.raises(NetworkSpecError, match="card_gains needs the card head"):
        build_network("plane_net", {"channels": 8, "hidden": 32, "card_gains": True})
    gains = build_network("plane_net", {"channels": 8, "hidden": 32, "card_hidden": 16, "card_gains": True})
    assert gains.size_report()["parameters"] > with_head.size_report()["parameters"]


def test_card_gains_reach_the_head_and_an_exported_input_gives_the_same():
    from arboretum_env.batch.card_gains import GAIN_INPUTS, with_card_gains

    torch.manual_seed(1)
    net = PlaneNet(4, 16, card_hidden=8, card_gains=True)
    for p in net.cards.parameters():
        torch.nn.init.normal_(p, std=0.5)
    obs = np.stack([o for _, o in _positions(2, seed=7, every=5)])
    wide = with_card_gains(obs)
    assert wide.shape == (len(obs), obs.shape[1] + GAIN_INPUTS) and np.array_equal(wide[:, :obs.shape[1]], obs)
    assert np.array_equal(with_card_gains(obs[3]), wide[3])
    with torch.no_grad():
        logits, value = net(torch.from_numpy(obs))
        given, given_value = net(torch.from_numpy(wide))
        net.sparse = False
        dense_logits, _ = net(torch.from_numpy(obs))
        blind = torch.from_numpy(wide.copy())
        blind[:, obs.shape[1]:] = 0.0  # the same observation with every gain hidden
        blind_logits, _ = net(blind)
    torch.testing.assert_close(given, logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(dense_logits, logits, rtol=1e-5, atol=1e-5)
    assert torch.equal(value, given_value)
    moved = (blind_logits - given).abs()
    assert moved[:, A.PLAY_CARD:A.PLAY_CARD + NUM_CARDS].max() > 1e-3  # the head reads the gains
    assert moved[:, :A.DRAW_DISCARD].max() < 1e-6 and moved[:, A.PLAY_CELL:A.DISCARD].max() < 1e-6


def test_a_run_with_the_card_head_plays_and_exports_it(tmp_path):
    from arboretum_env.agents.arena import play_game
    from arboretum_env.agents.policy import PolicyAgent
    from arboretum_env.agents import make_agent
    from training.selfplay import train_selfplay
    from training.selfplay_config import selfplay_config
    from training.selfplay_export import export_selfplay_checkpoint

    config = {"run_name": "cards", "runs_dir": str(tmp_path), "num_envs": 4, "rollout_steps": 16,
              "total_steps": 64, "eval_every": 64, "eval_games": 2, "final_eval_games": 2,
              "minibatch_size": 32, "torch_threads": 1, "channels": 4, "hidden": 16, "card_hidden": 8,
              "eval_opponents": ["random"], "final_eval_opponents": ["random"]}
    train_selfplay(selfplay_config(config), progress=False)
    folder = tmp_path / "cards"
    agent = PolicyAgent(folder / "policy.safetensors")
    assert agent.module.cards is not None and agent.module.cards.card_hidden == 8
    assert play_game([agent, make_agent("random", seed=1)], 2, seed=3).totals
    newest = max(folder.glob("checkpoints/step_*.pt"), key=lambda p: int(p.stem[5:]))
    exported = PolicyAgent(export_selfplay_checkpoint(newest, tmp_path / "exported.safetensors"))
    obs = np.stack([o for _, o in _positions(2, seed=9, every=11)])
    assert np.allclose(exported.logits(obs[0]), agent.logits(obs[0]), atol=1e-6)


def test_a_run_with_card_gains_records_them_in_its_policy_file(tmp_path):
    from arboretum_env.agents.policy import PolicyAgent
    from arboretum_env.agents.policy_file import read_policy_file
    from training.selfplay import train_selfplay
    from training.selfplay_config import ConfigKeyError, selfplay_config

    config = {"run_name": "gains", "runs_dir": str(tmp_path), "num_envs": 4, "rollout_steps": 16,
              "total_steps": 64, "eval_every": 64, "eval_games": 2, "final_eval_games": 2,
              "minibatch_size": 32, "torch_threads": 1, "channels": 4, "hidden": 16, "card_hidden": 8,
              "card_gains": True, "eval_opponents": ["random"], "final_eval_opponents": ["random"]}
    with pytest.raises(ConfigKeyError, match="card_gains needs the card head"):
        selfplay_config({**config, "card_hidden": 0})
    train_selfplay(selfplay_config(config), progress=False)
    policy = tmp_path / "gains" / "policy.safetensors"
    assert read_policy_file(policy)[1]["network_kwargs"] == {"channels": 4, "hidden": 16, "card_hidden": 8,
                                                              "card_gains": True}
    assert PolicyAgent(policy).module.card_gains


def test_depth_adds_its_layers_and_a_run_records_it(tmp_path):
    from arboretum_env.agents.policy import PolicyAgent
    from arboretum_env.agents.policy_file import read_policy_file
    from training.selfplay import train_selfplay
    from training.selfplay_config import ConfigKeyError, selfplay_config

    plain, deep = PlaneNet(4, 16, card_hidden=8), PlaneNet(4, 16, card_hidden=8, depth=2)
    extra = sum(p.numel() for p in deep.parameters()) - sum(p.numel() for p in plain.parameters())
    # two blocks of two 16 x 16 layers, the cells' 4 -> 16 -> 1 for 4 -> 1, the card head's 8 x 8
    assert extra == 2 * 2 * (16 * 16 + 16) + (4 * 16 + 16 + 16 + 1 - 5) + (8 * 8 + 8)
    assert deep.size_report()["multiply_adds"] > plain.size_report()["multiply_adds"]
    kept = set(plain.state_dict()) - {"cell_out.weight", "cell_out.bias", "cards.out.weight", "cards.out.bias"}
    assert kept < set(deep.state_dict())  # the rest keeps its names
    config = {"run_name": "deep", "runs_dir": str(tmp_path), "num_envs": 4, "rollout_steps": 16,
              "total_steps": 64, "eval_every": 64, "eval_games": 2, "final_eval_games": 2,
              "minibatch_size": 32, "torch_threads": 1, "channels": 4, "hidden": 16, "card_hidden": 8,
              "depth": 2, "eval_opponents": ["random"], "final_eval_opponents": ["random"]}
    with pytest.raises(ConfigKeyError, match="depth"):
        selfplay_config({**config, "depth": -1})
    train_selfplay(selfplay_config(config), progress=False)
    policy = tmp_path / "deep" / "policy.safetensors"
    assert read_policy_file(policy)[1]["network_kwargs"] == {"channels": 4, "hidden": 16, "card_hidden": 8,
                                                              "depth": 2}
    assert len(PolicyAgent(policy).module.blocks) == 2
