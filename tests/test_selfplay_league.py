"""Self-play policies as the starting point (``init_policy``) and fixed opponents (``league``)
of a self-play run: they are met, they start the learner, they are named in the policy file,
and files that would bring anything but self-play into training are refused by name."""

from __future__ import annotations

import pytest
import torch

from arboretum_env.agents.policy_file import PolicyFileError, save_policy_file
from arboretum_env.agents.selfplay_net import PlaneNet
from arboretum_env.batch import table as batch_table
from training.selfplay_config import ConfigKeyError, selfplay_config

needs_numba = pytest.mark.skipif(not batch_table.available, reason="numba is not installed")
SMALL = {"channels": 2, "hidden": 8}


def _policy(path, num_players=2, trainer="selfplay", **kwargs):
    torch.manual_seed(3)
    net = PlaneNet(**(kwargs or SMALL))
    save_policy_file(path, "plane_net", kwargs or SMALL, net.state_dict(),
                     {"hints": False, "trainer": trainer, "num_players": num_players,
                      "trained_from": "a test"})
    return str(path), net


def _config(tmp_path, **extra):
    return selfplay_config({"run_name": "league", "runs_dir": str(tmp_path), "num_envs": 8,
                            "rollout_steps": 16, "total_steps": 200, "eval_every": 200,
                            "eval_games": 2, "final_eval_games": 2, "minibatch_size": 64,
                            "torch_threads": 1, "eval_opponents": ["random"],
                            "final_eval_opponents": ["random"], **SMALL, **extra})


@needs_numba
def test_the_league_is_met_and_the_init_policy_starts_the_learner(tmp_path):
    from training.selfplay import LEARNER, SelfPlayTrainer
    from training.selfplay_io import RunFolder

    path, net = _policy(tmp_path / "main.safetensors")
    config = _config(tmp_path, league=[path], init_policy=path, snapshot_every=0, snapshot_fraction=1.0)
    with RunFolder(tmp_path / "league", config).lock() as folder:
        trainer = SelfPlayTrainer(config, folder)
        for key, value in net.state_dict().items():
            assert torch.equal(trainer.net.state_dict()[key], value), key
        assert len(trainer.opponents()) == 1 and not trainer.snapshots
        trainer.venv.reset(seed=1)
        trainer._deal_controllers(torch.arange(8).numpy())
        # every game: the learner in one seat, the league's policy (pool index 0) in the other
        assert ((trainer.controller == LEARNER).sum(axis=1) == 1).all()
        assert ((trainer.controller == 0).sum(axis=1) == 1).all()
        size = trainer.collect()
    # only the learner's decisions are stored: about half of the 8 x 16 moves
    assert 16 <= size <= 96


@needs_numba
def test_a_league_run_names_what_it_learned_from(tmp_path):
    from arboretum_env.agents import make_agent
    from training.selfplay import train_selfplay

    path, _ = _policy(tmp_path / "main.safetensors")
    train_selfplay(_config(tmp_path, league=[path], snapshot_fraction=1.0), progress=False)
    agent = make_agent(str(tmp_path / "league" / "policy.safetensors"))
    said = agent.metadata["trained_from"]
    assert "fixed self-play policies" in said and path in said and "from scratch" not in said
    assert "no heuristic" in said


def test_files_that_are_not_self_play_policies_are_refused_by_name(tmp_path):
    from training.selfplay_league import initial_weights, league_opponents

    sb3, _ = _policy(tmp_path / "sb3.safetensors", trainer="sb3")
    with pytest.raises(ConfigKeyError, match="^league: .*not written by the self-play trainer"):
        league_opponents(_config(tmp_path, league=[sb3]))
    three, _ = _policy(tmp_path / "three.safetensors", num_players=3)
    with pytest.raises(ConfigKeyError, match="plays 3 players, this run 2"):
        league_opponents(_config(tmp_path, league=[three]))
    with pytest.raises(ConfigKeyError, match="league must be a list of policy file paths, got \\[5\\]"):
        _config(tmp_path, league=[5])  # the config's own check, before any file is read
    with pytest.raises(PolicyFileError, match="no such policy file"):
        league_opponents(_config(tmp_path, league=[str(tmp_path / "missing.safetensors")]))
    wide, _ = _policy(tmp_path / "wide.safetensors", channels=4, hidden=8)
    with pytest.raises(ConfigKeyError, match="^init_policy: .* has network .* this config"):
        initial_weights(_config(tmp_path, init_policy=wide))
    assert initial_weights(_config(tmp_path)) is None


def test_a_bad_league_file_leaves_no_run_folder(tmp_path):
    from training.selfplay import train_selfplay

    sb3, _ = _policy(tmp_path / "sb3.safetensors", trainer="sb3")
    with pytest.raises(ConfigKeyError, match="league"):
        train_selfplay(_config(tmp_path, league=[sb3]), progress=False)
    assert not (tmp_path / "league").exists()  # checked before the run folder is claimed
