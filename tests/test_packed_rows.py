"""The self-play trainer's rollout store (``training.packed_rows``): what the network computes from
it, per step and per minibatch (non-plane values cut to the columns in use), equals the network
on the plain observations, with and without a ``CardHead``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from arboretum_env.agents.cell_pack import MAX_ACTIVE
from arboretum_env.agents.selfplay_net import PlaneNet
from arboretum_env.batch import table as T

from test_cell_pack import observations

pytestmark = pytest.mark.skipif(not T.available, reason="numba is not installed")


def network(card_hidden: int, card_gains: bool = False) -> PlaneNet:
    torch.manual_seed(4)
    net = PlaneNet(8, 32, card_hidden, card_gains)
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.3)
    return net


def dense(net: PlaneNet, obs: np.ndarray):
    """The reference: every cell, every column."""
    net.sparse = False
    try:
        return net(torch.from_numpy(obs))
    finally:
        net.sparse = True


@pytest.mark.parametrize("num_players,card_hidden,max_active,card_gains",
                         [(2, 0, MAX_ACTIVE, False), (3, 0, 10, False), (2, 16, MAX_ACTIVE, False),
                          (3, 16, 10, False), (2, 16, MAX_ACTIVE, True), (3, 16, 10, True)])
def test_store_gives_the_networks_outputs(num_players, card_hidden, max_active, card_gains):
    from training.packed_rows import PackedRows

    obs = observations(num_players, games=8, steps=40, seed=num_players).numpy()
    net = network(card_hidden, card_gains)
    store = PackedRows(len(obs) + 3, card_frontier=card_hidden > 0, max_active=max_active, card_gains=card_gains)
    order = np.random.default_rng(0).permutation(len(obs))
    store.write(obs, order[:100], 0)  # written in steps, as collection does
    store.write(obs, order[100:], 100)
    assert (store.background[:len(obs)] > 0).any()  # first placements among them
    assert (store.count[:len(obs)] > max_active).any() == (max_active < MAX_ACTIVE)  # crowded rows
    with torch.no_grad():
        want_logits, want_value = dense(net, obs[order])
        logits, value = store.forward(net, 0, 50)
    torch.testing.assert_close(logits, want_logits[:50], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(value, want_value[:50], rtol=1e-5, atol=1e-5)

    rollout = store.minibatches(len(obs))
    if card_hidden:
        assert rollout.columns is None
    else:
        assert 0 < len(rollout.columns) < net.planes_at  # some non-plane values are never set
    rows = torch.from_numpy(np.random.default_rng(1).permutation(len(obs))[:64])
    grads = []
    for use_store in (False, True):
        net.zero_grad()
        logits, value = rollout.forward(net, rows) if use_store else dense(net, obs[order][rows.numpy()])
        (logits.tanh().square().sum() + value.sum()).backward()
        grads.append([p.grad.clone() for p in net.parameters()])
        if use_store:
            torch.testing.assert_close(logits, want_logits[rows], rtol=1e-5, atol=1e-5)
    for want, got in zip(*grads):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    if card_gains:  # a head without gains (a snapshot of another run) reads the flags only
        plain = network(card_hidden)
        with torch.no_grad():
            torch.testing.assert_close(store.forward(plain, 0, 50)[0], dense(plain, obs[order])[0][:50],
                                       rtol=1e-5, atol=1e-5)
