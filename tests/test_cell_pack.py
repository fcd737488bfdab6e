"""``PlaneNet`` computes only the active cells (``agents.cell_pack``): the same logits, values and
gradients as the dense layout every cell goes through when traced, on real observations of
2-4 player games (first placements, whose gain plane fills every cell, included)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from arboretum_env.actions import FRAME_CELLS, NUM_ACTIONS
from arboretum_env.agents.cell_pack import GAIN_PLANE, MAX_ACTIVE, pack_cells
from arboretum_env.agents.selfplay_net import PlaneNet
from arboretum_env.batch import table as T
from arboretum_env.observation import OBS_SIZE
from arboretum_env.vector import VectorEnv

pytestmark = pytest.mark.skipif(not T.available, reason="numba is not installed")


def observations(num_players: int, games: int = 16, steps: int = 60, seed: int = 0) -> torch.Tensor:
    """Every observation of random legal play on the vector env (games restart as they end)."""
    rng = np.random.default_rng(seed)
    venv = VectorEnv(games, num_players)
    obs, masks, _ = venv.reset(seed=seed)
    seen = []
    for _ in range(steps):
        seen.append(obs.copy())
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, masks, *_ = venv.step(actions)
    return torch.from_numpy(np.concatenate(seen))


def trained_like(channels: int = 8, hidden: int = 32, seed: int = 1, **kwargs) -> PlaneNet:
    """A network whose output layers are not near zero (the fresh init's are), so that every
    part of the function shows in the comparison."""
    torch.manual_seed(seed)
    net = PlaneNet(channels, hidden, **kwargs)
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.3)
    return net


def both(net: PlaneNet, obs: torch.Tensor, **packing):
    net.sparse = False
    dense = net(obs)
    net.sparse = True
    other, cells = net.split(obs)
    sparse = net.forward_parts(other, cells, pack_cells(cells, **packing))
    return dense, sparse


@pytest.mark.parametrize("kwargs", [{}, {"depth": 2, "card_hidden": 8}], ids=["plain", "depth"])
@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_sparse_equals_dense(num_players, kwargs):
    obs = observations(num_players)
    pack = pack_cells(PlaneNet().split(obs)[1])
    assert (pack.background > 0).any()  # first placements: the gain plane fills the frame
    assert not pack.crowded.all()
    assert pack.inputs.shape[1] <= MAX_ACTIVE
    assert pack.active.sum(1).float().mean() < FRAME_CELLS / 4  # most cells are blank
    net = trained_like(**kwargs)
    (dl, dv), (sl, sv) = both(net, obs)
    assert sl.shape == (obs.shape[0], NUM_ACTIONS) and sv.shape == (obs.shape[0],)
    tol = 1e-4 if kwargs else 1e-5  # the deeper network's larger values: float32 sums in another order
    torch.testing.assert_close(sl, dl, rtol=tol, atol=tol)
    torch.testing.assert_close(sv, dv, rtol=tol, atol=tol)


def test_gradients_equal():
    obs = observations(2, steps=40)
    net = trained_like()
    grads = []
    for sparse in (False, True):
        net.sparse = sparse
        net.zero_grad()
        logits, value = net(obs)
        (logits.tanh().square().sum() + value.sum()).backward()
        grads.append([p.grad.clone() for p in net.parameters()])
    for dense, sparse in zip(*grads):
        torch.testing.assert_close(sparse, dense, rtol=1e-4, atol=1e-4)


def test_crowding_threshold_and_minibatch_rows_do_not_change_the_function():
    obs = observations(3, steps=30)
    net = trained_like()
    (dl, dv), (sl, sv) = both(net, obs, max_active=4)  # nearly every row densely
    torch.testing.assert_close(sl, dl, rtol=1e-5, atol=1e-5)
    other, cells = net.split(obs)
    pack = pack_cells(cells, max_active=20)
    rows = torch.from_numpy(np.random.default_rng(0).permutation(obs.shape[0])[:100])
    part = pack.rows(rows)
    assert torch.equal(part.crowded, pack.crowded[rows])
    logits, value = net.forward_parts(other[rows], None, part)
    torch.testing.assert_close(logits, dl[rows], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(value, dv[rows], rtol=1e-5, atol=1e-5)


def test_any_input_is_packed_exactly():
    """Negative values (not in observations, possible in a user's input) cannot hide a cell."""
    obs = torch.zeros(3, OBS_SIZE)
    net = trained_like()
    at = net.planes_at
    obs[0, at + 5 * FRAME_CELLS + 40] = -0.5  # a plane value below zero
    obs[1, at + 7] = 0.25  # the observer's rank plane, top row: it and its 3 neighbours are active
    obs[1, at + 3 * FRAME_CELLS + 100] = 0.5  # another seat's species plane: that cell only
    pack = pack_cells(net.split(obs)[1])
    assert pack.active[0].sum() == 1 and pack.active[0, 40]
    assert pack.active[1, [7, 6, 8, 7 + 18, 100]].all() and pack.active[1].sum() == 5
    assert pack.active[2].sum() == 0 and pack.inputs.shape[1] == 5
    (dl, dv), (sl, sv) = both(net, obs)
    torch.testing.assert_close(sl, dl, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(sv, dv, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("num_players", [2, 4])
def test_compiled_packer_agrees_with_torch(num_players):
    from arboretum_env.batch.cells import pack_rows

    obs = observations(num_players, games=8, steps=50, seed=3).numpy()
    net = PlaneNet()
    rows = np.random.default_rng(1).permutation(obs.shape[0])[:-5]  # some rows, in any order
    n, width = len(rows), net.n_planes + 8
    inputs = np.full((n + 2, MAX_ACTIVE, width), 7.0, np.float32)  # stale values are overwritten
    where = np.full((n + 2, MAX_ACTIVE), 5, np.int64)
    active = np.ones((n + 2, FRAME_CELLS), np.bool_)
    count = np.zeros(n + 2, np.int64)
    background = np.full(n + 2, 9.0, np.float32)
    pack_rows(obs, rows, MAX_ACTIVE, 2, inputs, where, active, count, background)
    reference = pack_cells(net.split(torch.from_numpy(obs[rows]))[1])
    k = reference.inputs.shape[1]
    assert np.array_equal(count[2:] > MAX_ACTIVE, reference.crowded.numpy())
    assert np.array_equal(background[2:], reference.background.numpy()) and (background[2:] > 0).any()
    assert np.array_equal(active[2:], reference.active.numpy())
    assert np.array_equal(where[2:, :k], reference.where.numpy()) and (where[2:, k:] == FRAME_CELLS).all()
    assert np.array_equal(inputs[2:, :k], reference.inputs.numpy())
    spare = np.zeros_like(inputs[2:, k:])
    spare[:, :, GAIN_PLANE] = background[2:, None]
    assert np.array_equal(inputs[2:, k:], spare)  # blank cells of their row
