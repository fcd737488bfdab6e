"""Policy files (agents/policy_file.py) and the networks they name (agents/networks.py): round
trip, the advice branch, one-line refusals (versions, hints, checksum, damage, TorchScript), and a
PolicyAgent that never leaves the mask whatever the weights say (issue 13 point 12, issue 16)."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from arboretum_env import actions as A
from arboretum_env.agents import make_agent
from arboretum_env.agents.arena import play_game
from arboretum_env.agents.hints import ADVICE_OFFSET, HINT_SIZE, HintSpecError, hint_spec
from arboretum_env.agents.networks import NETWORKS, NetworkSpecError, build_network, input_size
from arboretum_env.agents.policy import PolicyAgent, choose
from arboretum_env.agents.policy_file import (FORMAT, META_KEY, PolicyFileError, load_policy_file,
                                              save_policy_file)
from arboretum_env.errors import UserError
from arboretum_env.observation import OBS_SIZE
from arboretum_env.versions import VersionMismatchError

REPO = Path(__file__).resolve().parents[1]
SMALL = {"cnn": {"channels": 4, "hidden": 16}, "mlp": {"hidden": 16}, "plane_net": {"channels": 4, "hidden": 16}}


def small_file(path: Path, network: str = "cnn", hints: bool = False, advisor: str = "greedy", seed: int = 0,
               edit=None) -> Path:
    torch.manual_seed(seed)
    kwargs = {**SMALL[network], "hints": hints}
    net = build_network(network, kwargs)
    state = net.state_dict()
    if edit is not None:
        edit(state)
    return save_policy_file(path, network, kwargs, state, {"hints": hints, "advisor": advisor, "timesteps": 7,
                                                           "trained_from": "a test"})


def rewrite_description(src: Path, out: Path, **changes) -> Path:
    """The same tensors under an edited description (the checksum stays valid)."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    with safe_open(str(src), "pt") as f:
        description = json.loads(f.metadata()[META_KEY])
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    for key, value in changes.items():
        if callable(value):
            value(description)
        else:
            description[key] = value
    save_file(tensors, str(out), metadata={META_KEY: json.dumps(description)})
    return out


def cli(*args):
    return subprocess.run([sys.executable, "-m", "training.cli", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=600)


# ----------------------------------------------------------------------------- networks
def _reads_hints(network: str) -> bool:
    return "hints" in inspect.signature(NETWORKS[network].__init__).parameters


@pytest.mark.parametrize("network", sorted(NETWORKS))
@pytest.mark.parametrize("hints", [False, True])
def test_every_network_maps_observations_to_logits_and_values(network, hints):
    if hints and not _reads_hints(network):
        pytest.skip(f"{network} reads no hints")
    net = build_network(network, {**SMALL[network], **({"hints": True} if hints else {})}).eval()
    obs = torch.rand(3, input_size(hints))
    logits, value = net(obs)
    assert logits.shape == (3, A.NUM_ACTIONS) and value.shape == (3,)
    assert torch.isfinite(logits).all() and torch.isfinite(value).all()


def test_the_advice_branch_adds_the_gated_advice_to_the_logits():
    """The advice one-hot reaches the logits straight, through the gate (it also feeds the MLP)."""
    net = build_network("cnn", {"channels": 4, "hidden": 16, "hints": True}).eval()
    obs = torch.rand(1, OBS_SIZE + HINT_SIZE)
    obs[0, OBS_SIZE + ADVICE_OFFSET:] = 0.0
    obs[0, OBS_SIZE + ADVICE_OFFSET + 123] = 1.0
    with torch.no_grad():
        gated = net(obs)[0]
        assert float(net.action_net.gate) == pytest.approx(2.0)
        net.action_net.gate.fill_(0.0)
        ungated = net(obs)[0]
    delta = gated - ungated
    assert float(delta[0, 123]) == pytest.approx(2.0, abs=1e-5)
    assert float(torch.cat([delta[0, :123], delta[0, 124:]]).abs().max()) < 1e-6
    plain = build_network("cnn", {"channels": 4, "hidden": 16, "hints": False})
    assert not plain.action_net.advice and plain.features.features_dim + A.NUM_ACTIONS == net.features.features_dim


@pytest.mark.parametrize("name, kwargs, message", [
    ("transformer", {}, "unknown network 'transformer'"),
    ("cnn", {"channels": 4, "width": 3}, "unknown argument"),
    ("cnn", {"channels": -1}, "channels must be an integer"),
    ("cnn", {"channels": 10**9}, "channels must be an integer"),
    ("cnn", {"hints": "yes"}, "hints must be true or false"),
    ("cnn", [1, 2], "must be a JSON object"),
])
def test_bad_network_descriptions_are_one_line(name, kwargs, message):
    with pytest.raises(NetworkSpecError, match=message) as info:
        build_network(name, kwargs)
    assert "\n" not in str(info.value)


# ----------------------------------------------------------------------------- files
@pytest.mark.parametrize("network", sorted(NETWORKS))
def test_round_trip_gives_the_same_network_and_description(network, tmp_path):
    torch.manual_seed(1)
    hints = _reads_hints(network)
    kwargs = {**SMALL[network], **({"hints": True} if hints else {})}
    net = build_network(network, kwargs).eval()
    path = save_policy_file(tmp_path / "p.safetensors", network, kwargs, net.state_dict(),
                            {"hints": hints, "advisor": "tempo", "timesteps": 5, "trained_from": "x.zip"})
    loaded, meta = load_policy_file(path)
    assert not loaded.training
    obs = torch.rand(4, input_size(hints))
    with torch.no_grad():
        for a, b in zip(net(obs), loaded(obs)):
            torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert meta["format"] == FORMAT and meta["network"] == network and meta["network_kwargs"] == kwargs
    if hints:
        assert meta["hints"]["advisor"] == "tempo" and meta["hints"]["advisor_params"]["tempo_bonus"] == 5.0
    else:
        assert meta["hints"] is None
    assert meta["timesteps"] == 5 and meta["trained_from"] == "x.zip" and meta["checksum"].startswith("sha256:")
    assert not list(tmp_path.glob(".*.tmp"))  # written through a temporary name


def test_a_file_of_another_version_is_refused(tmp_path):
    path = small_file(tmp_path / "p.safetensors")
    old = rewrite_description(path, tmp_path / "old.safetensors",
                              versions=lambda d: d["versions"].update(env="arboretum_v9"))
    with pytest.raises(VersionMismatchError, match="env 'arboretum_v9'"):
        PolicyAgent(old)


@pytest.mark.parametrize("change, message", [
    (lambda d: d["hints"].update(layout=0), "layout 0"),
    (lambda d: d["hints"]["advisor_params"].update(tempo_bonus=4.0), "advisor_params"),
    (lambda d: d["hints"].update(advisor="oracle"), "unknown hint advisor 'oracle'"),
    (lambda d: d.update(hints=None), "do not match its hints"),
])
def test_a_policy_trained_with_other_hints_is_refused(change, message, tmp_path):
    path = small_file(tmp_path / "p.safetensors", hints=True, advisor="tempo")
    assert PolicyAgent(path).hints.advisor == "tempo"
    other = rewrite_description(path, tmp_path / "other.safetensors", hints=change)
    with pytest.raises(UserError, match=message) as info:
        PolicyAgent(other)
    assert "\n" not in str(info.value)


def test_hints_come_from_the_description_not_from_sizes(tmp_path):
    plain = PolicyAgent(small_file(tmp_path / "a.safetensors", hints=False))
    hinted = PolicyAgent(small_file(tmp_path / "b.safetensors", hints=True, advisor="greedy_plus"))
    assert plain.hints is None and hinted.hints.advisor == "greedy_plus"
    with pytest.raises(ValueError, match="expected the env's observation"):
        hinted.act(np.zeros(OBS_SIZE + HINT_SIZE, np.float32), np.ones(A.NUM_ACTIONS, np.int8))


def test_a_file_whose_checksum_does_not_match_is_refused(tmp_path):
    path = small_file(tmp_path / "p.safetensors")
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x10  # a bit of the last tensor's data
    path.write_bytes(bytes(data))
    with pytest.raises(PolicyFileError, match="checksum does not match"):
        PolicyAgent(path)
    proc = cli("evaluate", str(path), "random", "--games", "2")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "checksum" in proc.stderr and "Traceback" not in proc.stderr


def test_bit_flips_anywhere_are_refused_or_harmless(tmp_path):
    """Flipped bits all over a file: a one-line refusal, or (a flip in padding) the same agent."""
    path = small_file(tmp_path / "p.safetensors")
    clean = path.read_bytes()
    rng = np.random.default_rng(0)
    mask = np.zeros(A.NUM_ACTIONS, np.int8)
    mask[[3, 90, 400]] = 1
    refused = 0
    for position in rng.choice(len(clean), 150, replace=False):
        data = bytearray(clean)
        data[position] ^= 1 << int(rng.integers(8))
        damaged = tmp_path / "d.safetensors"
        damaged.write_bytes(bytes(data))
        try:
            agent = PolicyAgent(damaged)
        except UserError as exc:
            assert "\n" not in str(exc)
            refused += 1
            continue
        assert agent.act(np.zeros(OBS_SIZE, np.float32), mask) in (3, 90, 400)
    assert refused >= 140


@pytest.mark.parametrize("bad", ["nan", "inf", "huge"])
def test_policy_agent_never_leaves_the_mask_whatever_the_weights(bad, tmp_path):
    """Weights that make illegal actions score highest (or NaN everything) still give legal moves."""
    def edit(state):
        bias = state["action_net.linear.bias"]
        bias[:] = {"nan": float("nan"), "inf": float("inf"), "huge": 1e30}[bad]
        state["features.cell.bias"][:] = -1e30 if bad == "huge" else float(bad)
    agent = PolicyAgent(small_file(tmp_path / "p.safetensors", edit=edit), seed=0)
    sampler = PolicyAgent(small_file(tmp_path / "q.safetensors", edit=edit), seed=0, deterministic=False)
    for player in (agent, sampler):
        result = play_game([player, make_agent("random", 1)], 2, seed=5)  # an illegal move would raise
        assert len(result.players) == 2


def test_choose_picks_among_legal_actions_only():
    mask = np.zeros(A.NUM_ACTIONS, np.int8)
    mask[[10, 20]] = 1
    logits = np.zeros(A.NUM_ACTIONS)
    logits[5] = 1e9  # illegal and highest
    logits[20] = 1.0
    assert choose(logits, mask) == 20
    logits[20] = np.nan
    assert choose(logits, mask) == 10
    rng = np.random.default_rng(0)
    assert {choose(logits, mask, rng) for _ in range(50)} == {10}
    assert {choose(np.full(A.NUM_ACTIONS, np.nan), mask, rng) for _ in range(50)} == {10, 20}


@pytest.mark.parametrize("content, message", [
    (b"\x00garbage", "not a policy file"),
    (b"PK\x03\x04rest of a zip", "TorchScript or pickle file"),
    (b"\x80\x04\x95pickle", "TorchScript or pickle file"),
])
def test_bad_files_are_one_line(content, message, tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(content)
    with pytest.raises(PolicyFileError, match=message):
        PolicyAgent(bad)
    with pytest.raises(PolicyFileError, match="no such policy file"):
        PolicyAgent(tmp_path / "missing.safetensors")


def test_a_safetensors_file_without_our_description_is_refused(tmp_path):
    from safetensors.torch import save_file

    save_file({"w": torch.zeros(2)}, str(tmp_path / "x.safetensors"), metadata={"other": "1"})
    with pytest.raises(PolicyFileError, match="without an arboretum policy description"):
        PolicyAgent(tmp_path / "x.safetensors")


def test_weights_that_do_not_fit_the_network_are_refused(tmp_path):
    path = small_file(tmp_path / "p.safetensors")
    wide = rewrite_description(path, tmp_path / "w.safetensors",
                               network_kwargs={"channels": 8, "hidden": 16, "hints": False})
    with pytest.raises(PolicyFileError, match="do not fit network 'cnn'"):
        PolicyAgent(wide)


def test_torchscript_export_is_for_deployment_and_never_read_back(tmp_path):
    path = small_file(tmp_path / "p.safetensors", hints=True, advisor="tempo")
    proc = cli("export", str(path), "--format", "torchscript", "-o", str(tmp_path / "p.pt"))
    assert proc.returncode == 0, proc.stderr
    scripted = torch.jit.load(str(tmp_path / "p.pt"))  # deployment elsewhere: same choices
    net, _ = load_policy_file(path)
    obs = torch.rand(2, input_size(True))
    mask = torch.zeros(2, A.NUM_ACTIONS, dtype=torch.int8)
    mask[:, [7, 100, 300]] = 1
    action, _ = scripted(obs, mask)
    expected = [choose(row, m) for row, m in zip(net(obs)[0].detach().numpy(), mask.numpy())]
    assert action.tolist() == expected
    with pytest.raises(PolicyFileError, match="TorchScript or pickle file .* --trust-torchscript"):
        PolicyAgent(tmp_path / "p.pt")
    proc = cli("evaluate", str(tmp_path / "p.pt"), "random", "--games", "2")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_sb3_checkpoints_from_before_the_move_still_load():
    """The SB3 policy's extractor keeps its modules under ``.features`` now; a state dict with the
    older keys (``features_extractor.conv...``) loads into it unchanged."""
    import gymnasium as gym

    from training.network import ArboretumPolicy, sb3_network_state

    space = gym.spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
    make = lambda: ArboretumPolicy(space, gym.spaces.Discrete(A.NUM_ACTIONS), lambda _: 1e-3,  # noqa: E731
                                   channels=4, hidden=16)
    torch.manual_seed(3)
    policy = make()
    old = {k.replace("_extractor.features.", "_extractor."): v for k, v in policy.state_dict().items()}
    assert any(k.startswith("features_extractor.conv.") for k in old)
    fresh = make()
    fresh.load_state_dict(old)
    for key, value in policy.state_dict().items():
        torch.testing.assert_close(fresh.state_dict()[key], value)
    name, kwargs, state = sb3_network_state(fresh, hints=False)
    net = build_network(name, kwargs)
    net.load_state_dict(state)


def test_an_old_torchscript_policy_file_converts_once_when_trusted(tmp_path):
    """The documented conversion: a TorchScript file in the old export layout (``features``,
    ``actor``, ``action_net``, mask applied inside) becomes a policy file with the same choices,
    and only with --trust-torchscript."""
    from arboretum_env.agents.networks import CnnFeatures, SplitHead
    from arboretum_env.versions import current_versions
    from training.export import convert_torchscript

    class OldMaskedPolicy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.features, self.actor = CnnFeatures(4, 16, hints=True), torch.nn.Sequential()
            self.action_net = SplitHead(16, advice=True)

        def forward(self, obs, mask):
            masked = self.action_net(self.actor(self.features(obs))).masked_fill(mask == 0, -1e9)
            return masked.argmax(dim=1), masked

    torch.manual_seed(5)
    old = OldMaskedPolicy().eval()
    obs = torch.rand(6, input_size(True))
    mask = (torch.rand(6, A.NUM_ACTIONS) < 0.1).to(torch.int8)
    mask[:, 0] = 1
    meta = {"hints": True, "advisor": "tempo", "timesteps": 9, "versions": current_versions(),
            "format": "arboretum-policy/1"}
    with torch.no_grad():
        expected, _ = old(obs, mask)
        torch.jit.save(torch.jit.trace(old, (obs, mask)), str(tmp_path / "old.pt"),
                       _extra_files={"metadata.json": json.dumps(meta)})
    with pytest.raises(PolicyFileError, match="--trust-torchscript"):
        convert_torchscript(tmp_path / "old.pt", tmp_path / "new.safetensors")
    assert not (tmp_path / "new.safetensors").exists()
    converted = convert_torchscript(tmp_path / "old.pt", tmp_path / "new.safetensors", trust=True)
    net, description = load_policy_file(converted)
    assert description["hints"]["advisor"] == "tempo" and description["timesteps"] == 9
    logits, value = net(obs)
    assert [choose(row, m) for row, m in zip(logits.detach().numpy(), mask.numpy())] == expected.tolist()
    assert not value.any()  # the old files had no value head


def test_saving_refuses_a_hint_description_of_another_version(tmp_path):
    kwargs = {"channels": 4, "hidden": 16, "hints": True}
    state = build_network("cnn", kwargs).state_dict()
    with pytest.raises(HintSpecError, match="layout 0"):
        save_policy_file(tmp_path / "p.safetensors", "cnn", kwargs, state,
                         {"hints": {**hint_spec("greedy"), "layout": 0}})


def test_any_header_length_is_read_as_safetensors(tmp_path):
    """A header whose length starts with byte 0x80 (a pickle's first byte) is still safetensors."""
    kwargs = {"channels": 4, "hidden": 16, "hints": False}
    state = build_network("cnn", kwargs).state_dict()
    for pad in range(300):
        path = save_policy_file(tmp_path / "p.safetensors", "cnn", kwargs, state, {"trained_from": "x" * pad})
        if path.read_bytes()[0] == 0x80:
            assert load_policy_file(path)[1]["trained_from"] == "x" * pad
            break
    else:
        pytest.fail("no padding gave a header length starting with 0x80")
