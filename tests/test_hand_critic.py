"""The asymmetric critic (``hand_critic``): it reads the other seats' hands as the rules engine
holds them, it starts as the plain value, it is trained and kept in checkpoints, and the policy
(its logits, its file, its snapshots) never reads or holds it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from arboretum_env.batch import table as batch_table
from arboretum_env.engine.cards import NUM_CARDS
from arboretum_env.env import raw_env
from arboretum_env.vector import VectorEnv
from training.hand_critic import HAND_INPUTS, HandCritic, other_hands
from training.selfplay_config import ConfigKeyError, selfplay_config

needs_numba = pytest.mark.skipif(not batch_table.available, reason="numba is not installed")


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_other_hands_are_the_engines_hands_of_the_next_seats(num_players):
    n = 3
    venv = VectorEnv(n, num_players=num_players)
    obs, masks, to_move = venv.reset(seed=40)
    envs = []
    for i in range(n):
        e = raw_env(num_players=num_players)
        e.reset(seed=int(venv.game_seeds[i]))
        envs.append(e)
    rng = np.random.default_rng(num_players)
    for _ in range(120):
        rows = np.arange(n)
        got = other_hands(venv.tables, rows, to_move).reshape(n, 3, NUM_CARDS)
        for i, e in enumerate(envs):
            state = e._state
            seat = int(to_move[i])
            for k in range(1, num_players):
                hand = np.zeros(NUM_CARDS)
                hand[sorted(state.hands[(seat + k) % num_players])] = 1
                assert np.array_equal(got[i, k - 1], hand), (i, k)
            assert not got[i, num_players - 1:].any()  # no such seats: zeros
        actions = np.array([np.flatnonzero(m)[int(rng.random() * m.sum())] for m in masks])
        for i, e in enumerate(envs):
            e.step(int(actions[i]))
        obs, masks, to_move, rewards, dones = venv.step(actions)
        for i in np.flatnonzero(dones):
            envs[i] = raw_env(num_players=num_players)
            envs[i].reset(seed=int(venv.game_seeds[i]))


def test_the_critic_starts_as_the_plain_value_and_reads_the_hands():
    torch.manual_seed(0)
    critic = HandCritic(16, 8)
    h, hands = torch.randn(5, 16), torch.randint(0, 2, (5, HAND_INPUTS)).float()
    assert torch.equal(critic(h, hands), torch.zeros(5))  # its last layer starts at zero
    torch.nn.init.normal_(critic.out.weight)
    other = hands.clone()
    other[:, 3] = 1 - other[:, 3]
    assert not torch.allclose(critic(h, hands), critic(h, other))  # a different hand, another value
    assert critic.multiply_adds() == (16 + HAND_INPUTS) * 8 + 8


def test_hand_critic_is_checked_by_name():
    with pytest.raises(ConfigKeyError, match="hand_critic"):
        selfplay_config({"hand_critic": -1}, "test")
    assert selfplay_config({"hand_critic": 32}).hand_critic == 32


@needs_numba
def test_a_run_with_the_critic_trains_it_keeps_it_and_the_policy_never_reads_it(tmp_path, monkeypatch):
    from arboretum_env.agents.policy import PolicyAgent
    from arboretum_env.agents.policy_file import read_policy_file
    from training.selfplay import SelfPlayTrainer, train_selfplay
    from training.selfplay_io import RunFolder

    base = {"run_name": "critic", "runs_dir": str(tmp_path), "num_envs": 8, "rollout_steps": 16,
            "total_steps": 256, "eval_every": 128, "eval_games": 2, "final_eval_games": 2,
            "snapshot_every": 100, "minibatch_size": 64, "torch_threads": 1, "hidden": 16,
            "channels": 4, "card_hidden": 8, "hand_critic": 8, "reward_mode": "score_margin",
            "reward_shaping": "score_potential", "eval_opponents": ["random"],
            "final_eval_opponents": ["random"]}
    train_selfplay(selfplay_config(base), progress=False)
    folder = tmp_path / "critic"
    newest = max(folder.glob("checkpoints/step_*.pt"), key=lambda p: int(p.stem[5:]))
    tensors = torch.load(newest, weights_only=True)
    assert tensors["critic"]["out.weight"].abs().sum() > 0  # trained away from its zero start
    assert not any("critic" in key or key.startswith("layer") for key in tensors["net"])
    state, description = read_policy_file(folder / "policy.safetensors")[:2]
    assert set(state) == set(tensors["net"])  # the policy file holds the network only
    assert description["hand_critic"] == 8  # and says what its training read

    # resumed with another network or critic: one line, before anything is loaded or written
    # (and before the trainer's set-up: no vector env or buffers built for nothing)
    from training import selfplay
    from training.selfplay_io import RunFolderError
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*")}
    built = []
    monkeypatch.setattr(selfplay, "SelfPlayTrainer", lambda *args: built.append(args))
    for change, message in (({"hand_critic": 0}, "hand_critic: 8, the config 0"),
                            ({"card_hidden": 16}, "card_hidden: 8, the config 16"),
                            ({"channels": 8}, "channels: 4, the config 8")):
        with pytest.raises(RunFolderError, match=message):
            train_selfplay(selfplay_config(dict(base, total_steps=400, **change)), resume=True, progress=False)
    assert built == []
    monkeypatch.undo()
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*")} == before

    # resumed: the critic comes back as saved
    config = selfplay_config(dict(base, total_steps=400))
    trainer = SelfPlayTrainer(config, RunFolder(folder, config, resume=True))
    from training.selfplay_io import restore_trainer
    restore_trainer(trainer, *trainer.folder.load_newest_checkpoint())
    for key, value in tensors["critic"].items():
        assert torch.equal(trainer.critic.state_dict()[key], value)

    # the policy's logits do not depend on the hands: the critic changes only the value
    agent = PolicyAgent(folder / "policy.safetensors")
    venv = VectorEnv(4, num_players=2)
    obs, masks, to_move = venv.reset(seed=3)
    rows = np.arange(4)
    logits, value, h = trainer.net(torch.from_numpy(obs), with_summary=True)
    hands = other_hands(venv.tables, rows, to_move)
    with_hands = trainer.with_critic((logits, value, h), hands)
    shuffled = trainer.with_critic((logits, value, h), hands[::-1].copy())
    assert torch.equal(with_hands[0], logits) and torch.equal(shuffled[0], logits)
    assert not torch.allclose(with_hands[1], shuffled[1])
    assert np.allclose(agent.logits(obs[0]), logits[0].detach().numpy(), atol=1e-5)


def test_the_critic_is_off_by_default():
    assert selfplay_config({}).hand_critic == 0
