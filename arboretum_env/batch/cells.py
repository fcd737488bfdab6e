"""Compiled packing of the observation's planes into ``PlaneNet``'s active cells.

``pack_rows`` does for rows of a ``[N, OBS_SIZE]`` observation array (plane-major, as the
vector env writes it) what ``agents.cell_pack.pack_cells`` does in torch for cell-major planes:
it finds the cells with any input that is not zero (any plane value on the cell, or a card of
the observer's on one of its four neighbours) and writes their 27 inputs. The batched
self-play trainer packs each decision once, at collection, straight into its rollout buffers;
tests/test_cell_pack.py checks that both packers agree.
"""

from __future__ import annotations

import numpy as np

from ..actions import FRAME, FRAME_CELLS
from ..engine.jit_playout import available, compile_kernel

NEIGHBOUR_PLANES = 2  # the layout of agents.cell_pack (which this layer cannot import)


def pack_rows(obs, rows, planes_at, n_planes, max_active, first, inputs, where, active, count):  # pragma: no cover - compiled
    """Pack ``obs[rows[i]]`` into row ``first + i`` of ``inputs [., max_active, n_planes + 8]``
    (each active cell's planes, then the observer's two own planes above, below, left and
    right of it; spare slots zero), ``where [., max_active]`` (cell ids; 324 for a spare slot)
    and ``active [., 324]``; ``count[first + i]``: its active cells. A row with more than
    ``max_active`` is crowded: its count is written, and nothing of it is packed (all slots
    spare, no cell active)."""
    filled = np.zeros(FRAME_CELLS, np.float32)  # per cell: the sum of its planes' magnitudes
    mine = np.zeros(FRAME_CELLS, np.float32)  # the same over the NEIGHBOUR_PLANES
    for i in range(rows.shape[0]):
        o = obs[rows[i]]
        out = first + i
        filled[:] = 0.0
        for p in range(n_planes):  # plane by plane: contiguous reads
            start = planes_at + p * FRAME_CELLS
            for cell in range(FRAME_CELLS):
                filled[cell] += abs(o[start + cell])
            if p == NEIGHBOUR_PLANES - 1:
                mine[:] = filled
        n = 0
        for cell in range(FRAME_CELLS):
            y, x = cell // FRAME, cell % FRAME
            on = (filled[cell] > 0.0 or (y > 0 and mine[cell - FRAME] > 0.0)
                  or (y < FRAME - 1 and mine[cell + FRAME] > 0.0)
                  or (x > 0 and mine[cell - 1] > 0.0) or (x < FRAME - 1 and mine[cell + 1] > 0.0))
            active[out, cell] = on
            n += on
        count[out] = n
        k = 0
        if n <= max_active:
            for cell in range(FRAME_CELLS):
                if not active[out, cell]:
                    continue
                y, x = cell // FRAME, cell % FRAME
                where[out, k] = cell
                for p in range(n_planes):
                    inputs[out, k, p] = o[planes_at + p * FRAME_CELLS + cell]
                j = n_planes
                for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                    ny, nx = y + dy, x + dx
                    inside = 0 <= ny < FRAME and 0 <= nx < FRAME
                    for p in range(NEIGHBOUR_PLANES):
                        inputs[out, k, j] = o[planes_at + p * FRAME_CELLS + ny * FRAME + nx] if inside else 0.0
                        j += 1
                k += 1
        else:
            active[out, :] = False
        for spare in range(k, max_active):
            where[out, spare] = FRAME_CELLS
            inputs[out, spare, :] = 0.0


if available:
    pack_rows = compile_kernel(pack_rows)
