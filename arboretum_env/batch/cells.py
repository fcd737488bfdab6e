"""Compiled packing of the observation's planes into ``PlaneNet``'s active cells.

``pack_rows`` does for rows of a ``[N, OBS_SIZE]`` observation array (plane-major, as the
vector env writes it) what ``agents.cell_pack.pack_cells`` does in torch for cell-major planes:
it finds the cells with any input that is not zero (any plane value on the cell, or a card of
the observer's on one of its four neighbours; in a first placement, whose gain plane holds one
value everywhere, a gain other than that background) and writes their 27 inputs. The batched
self-play trainer packs each decision once, at collection, straight into its rollout buffers;
tests/test_cell_pack.py checks that both packers agree.
"""

from __future__ import annotations

import numpy as np

from ..actions import FRAME, FRAME_CELLS
from ..engine.jit_playout import available, compile_kernel
from ..observation import OBS_SIZE, OFFSETS
from .. import observation as _observation

NEIGHBOUR_PLANES = 2  # the layout of agents.cell_pack (which this layer cannot import)
PLANES_AT = OFFSETS["arboretum_planes"]  # the planes: from there to the end of the observation
N_PLANES = (OBS_SIZE - PLANES_AT) // FRAME_CELLS
GAIN_AT = OFFSETS["gain_plane"]
GAIN_PLANE = (GAIN_AT - PLANES_AT) // FRAME_CELLS
assert PLANES_AT + N_PLANES * FRAME_CELLS == OBS_SIZE and PLANES_AT < GAIN_AT < OBS_SIZE
# (compiled in as constants: with the loop bounds known, the plane sums vectorise, 7x faster)


def pack_rows(obs, rows, max_active, first, inputs, where, active, count, background):  # pragma: no cover - compiled
    """Pack ``obs[rows[i]]`` into row ``first + i`` of ``inputs [., max_active, N_PLANES + 8]``
    (each active cell's planes, then the observer's two own planes above, below, left and
    right of it; spare slots zero but for the background gain), ``where [., max_active]``
    (cell ids; 324 for a spare slot) and ``active [., 324]``; ``count[first + i]``: its active
    cells; ``background[first + i]``: the gain of a blank cell (the gain plane's value if it
    holds one value other than 0 on every cell, else 0). A row with more than ``max_active``
    is crowded: its count is written, and nothing of it is packed (all slots spare, no cell
    active)."""
    side = FRAME + 2
    filled = np.zeros(FRAME_CELLS, np.float32)  # per cell: the sum of its planes' magnitudes
    mine = np.zeros((side, side), np.float32)  # the same over the NEIGHBOUR_PLANES, with a border of 0
    for i in range(rows.shape[0]):
        o = obs[rows[i]]
        out = first + i
        back = o[GAIN_AT]
        for cell in range(1, FRAME_CELLS):
            if o[GAIN_AT + cell] != back:
                back = 0.0
                break
        background[out] = back
        filled[:] = 0.0
        for p in range(N_PLANES):  # plane by plane: contiguous reads
            start = PLANES_AT + p * FRAME_CELLS
            if p == GAIN_PLANE:  # a blank cell's gain is the background
                for cell in range(FRAME_CELLS):
                    filled[cell] += abs(o[start + cell] - back)
            else:
                for cell in range(FRAME_CELLS):
                    filled[cell] += abs(o[start + cell])
            if p == NEIGHBOUR_PLANES - 1:
                for y in range(FRAME):
                    for x in range(FRAME):
                        mine[y + 1, x + 1] = filled[y * FRAME + x]
        n = 0
        for y in range(FRAME):  # a cell is active if it or a neighbour's own planes are filled
            for x in range(FRAME):
                level = (filled[y * FRAME + x] + mine[y, x + 1] + mine[y + 2, x + 1]
                         + mine[y + 1, x] + mine[y + 1, x + 2])
                active[out, y * FRAME + x] = level > 0.0
        for cell in range(FRAME_CELLS):
            n += active[out, cell]
        count[out] = n
        k = 0
        if n <= max_active:
            for cell in range(FRAME_CELLS):
                if not active[out, cell]:
                    continue
                y, x = cell // FRAME, cell % FRAME
                where[out, k] = cell
                for p in range(N_PLANES):
                    inputs[out, k, p] = o[PLANES_AT + p * FRAME_CELLS + cell]
                j = N_PLANES
                for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                    ny, nx = y + dy, x + dx
                    inside = 0 <= ny < FRAME and 0 <= nx < FRAME
                    for p in range(NEIGHBOUR_PLANES):
                        inputs[out, k, j] = o[PLANES_AT + p * FRAME_CELLS + ny * FRAME + nx] if inside else 0.0
                        j += 1
                k += 1
        else:
            active[out, :] = False
        for spare in range(k, max_active):
            where[out, spare] = FRAME_CELLS
            inputs[out, spare, :] = 0.0
            inputs[out, spare, GAIN_PLANE] = back


if available:
    pack_rows = compile_kernel(pack_rows, depends=(_observation.__file__,))
