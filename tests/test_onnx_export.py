"""``arboretum export --format onnx`` (issue 15 point 4): the exported model, run under
onnxruntime, picks the same actions as the policy (``PolicyAgent``: the torch network with the mask)
on 1,000 observations from real games, for the shipped agent (which reads hints: its ONNX input
is the observation followed by the hints) and a small ``plane_net``, with and without its card
head, and with the card gains (its input: the observation followed by them). Skipped without the
``[onnx]`` extra."""

from __future__ import annotations

import copy
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from arboretum_env.agents.hints import with_hints
from arboretum_env.agents.networks import build_network
from arboretum_env.agents.policy import PolicyAgent
from arboretum_env.agents.policy_file import save_policy_file
from arboretum_env.batch.card_gains import with_card_gains
from arboretum_env.env import raw_env
from training.cli import main

ort = pytest.importorskip("onnxruntime", reason="the [onnx] extra is not installed (pip install -e '.[onnx]')")
pytest.importorskip("onnx", reason="the [onnx] extra is not installed (pip install -e '.[onnx]')")

SHIPPED = Path(__file__).resolve().parents[1] / "models" / "shipped" / "policy.safetensors"
DECISIONS = 1000


def real_decisions(count: int, seed: int = 0):
    """(observation, mask, table view) of the seat to move, from random play (the view copied:
    a live one holds the state's containers)."""
    rng = np.random.default_rng(seed)
    env = raw_env(num_players=2)
    out, game = [], 0
    while len(out) < count:
        env.reset(seed=seed + game)
        game += 1
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            out.append((obs["observation"].copy(), obs["action_mask"].copy(), copy.deepcopy(env.table_view(agent))))
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            if len(out) == count:
                break
    return out


@pytest.fixture(scope="module")
def decisions():
    return real_decisions(DECISIONS)


def agreement(policy: Path, onnx_path: Path, decisions) -> int:
    agent = PolicyAgent(policy)
    inputs = np.stack([obs if agent.hints is None else with_hints(obs, view, agent.hints, mask)
                       for obs, mask, view in decisions])
    if getattr(agent.module, "card_gains", False):
        inputs = with_card_gains(inputs)
    masks = np.stack([mask for _, mask, _ in decisions]).astype(np.int8)
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    actions, masked = session.run(["action", "masked_logits"], {"observation": inputs, "action_mask": masks})
    assert actions.shape == (len(decisions),) and masked.shape == masks.shape
    assert np.all(masked[masks == 0] <= -1e8)
    expected = np.array([agent.act(obs, mask, view) for obs, mask, view in decisions])
    assert np.all(masks[np.arange(len(decisions)), actions] == 1)  # never outside the mask
    return int(np.sum(actions == expected))


@pytest.mark.slow  # about a minute: the tempo advisor's hints for 1,000 decisions
def test_shipped_agent_onnx_picks_the_policys_actions(tmp_path, decisions, capsys):
    out = tmp_path / "shipped.onnx"
    assert main(["export", str(SHIPPED), "--format", "onnx", "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    same = agreement(SHIPPED, out, decisions)
    print(f"shipped agent: onnxruntime agrees on {same}/{len(decisions)} decisions")
    assert same == len(decisions)


@pytest.mark.parametrize("kwargs", [{"channels": 4, "hidden": 16}, {"channels": 4, "hidden": 16, "card_hidden": 8},
                                    {"channels": 4, "hidden": 16, "card_hidden": 8, "card_gains": True},
                                    {"channels": 4, "hidden": 16, "card_hidden": 8, "depth": 2}],
                         ids=["plain", "card_head", "card_gains", "depth"])
def test_small_plane_net_onnx_picks_the_policys_actions(tmp_path, decisions, kwargs):
    torch.manual_seed(3)
    policy = save_policy_file(tmp_path / "small.safetensors", "plane_net", kwargs,
                              build_network("plane_net", kwargs).state_dict(), {"hints": False, "timesteps": 1})
    out = tmp_path / "small.onnx"
    assert main(["export", str(policy), "--format", "onnx", "-o", str(out)]) == 0
    same = agreement(policy, out, decisions)
    print(f"plane_net: onnxruntime agrees on {same}/{len(decisions)} decisions")
    assert same == len(decisions)
    scripted_path = tmp_path / "small.pt"  # and with the TorchScript export of the same file
    assert main(["export", str(policy), "--format", "torchscript", "-o", str(scripted_path)]) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.load(str(scripted_path))  # our own file, just written
    obs = np.stack([o for o, _, _ in decisions])
    obs = torch.as_tensor(with_card_gains(obs) if kwargs.get("card_gains") else obs)
    masks = np.stack([m for _, m, _ in decisions]).astype(np.int8)
    with torch.no_grad():
        by_torchscript = scripted(obs, torch.as_tensor(masks))[0].numpy()
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    by_onnx = session.run(["action"], {"observation": obs.numpy(), "action_mask": masks})[0]
    assert np.array_equal(by_onnx, by_torchscript)


def test_onnx_without_the_extra_is_one_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "onnx", None)  # as if not installed
    assert main(["export", str(SHIPPED), "--format", "onnx", "-o", str(tmp_path / "x.onnx")]) == 2
    assert "pip install 'arboretum-rl[onnx]'" in capsys.readouterr().err
    assert not (tmp_path / "x.onnx").exists()


def test_onnx_model_records_the_policy_description(tmp_path):
    import json

    import onnx

    out = tmp_path / "x.onnx"
    main(["export", str(SHIPPED), "--format", "onnx", "-o", str(out)])
    meta = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    assert json.loads(meta["arboretum"])["hints"]["advisor"] == "tempo"
