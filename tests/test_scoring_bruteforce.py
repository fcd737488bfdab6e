"""The DP scorer (``scoring.best_path``) against a brute-force enumeration of every path, and
``score_position`` against a direct reading of RULES.md, on random connected arboretums."""

from __future__ import annotations

import numpy as np
import pytest

from arboretum_env.engine import best_path, jit_paths, pack_cell, score_position, unpack_cell

NUM_ARBORETUMS = 4000
NEIGHBOURS = ((-1, 0), (0, 1), (1, 0), (0, -1))


# ---------------------------------------------------------------- reference implementation

def path_points(cards: list[int], species: int) -> int | None:
    """RULES.md's formula for the cards of a path (rank order), ``None`` if not a path of
    ``species``."""
    if len(cards) < 2 or cards[0] >> 3 != species or cards[-1] >> 3 != species:
        return None
    ranks = [card & 7 for card in cards]
    if any(a >= b for a, b in zip(ranks, ranks[1:])):
        return None
    n = len(cards)
    points = n
    if n >= 4 and all(card >> 3 == species for card in cards):
        points += n
    if ranks[0] == 0:
        points += 1
    if ranks[-1] == 7:
        points += 2
    return points


def all_paths(grid: dict[tuple[int, int], int]):
    """Every sequence of >= 2 orthogonally adjacent cells with strictly increasing ranks
    (a plain DFS; such a sequence never revisits a cell)."""

    def extend(path):
        if len(path) >= 2:
            yield path
        r, c = path[-1]
        rank = grid[path[-1]] & 7
        for dr, dc in NEIGHBOURS:
            nxt = (r + dr, c + dc)
            if nxt in grid and nxt not in path and grid[nxt] & 7 > rank:
                yield from extend(path + [nxt])

    for start in grid:
        yield from extend([start])


def brute_best(grid: dict[tuple[int, int], int]) -> dict[int, int]:
    """Best points per species (0..9) over all paths."""
    best = dict.fromkeys(range(10), 0)
    for path in all_paths(grid):
        cards = [grid[cell] for cell in path]
        first, last = cards[0] >> 3, cards[-1] >> 3
        if first != last:
            continue
        points = path_points(cards, first)
        if points is not None and points > best[first]:
            best[first] = points
    return best


def reference_score(hands, grids, species_in_play):
    """Totals and winners straight from RULES.md (brute-force paths)."""
    n = len(hands)
    totals = [0] * n
    for s in species_in_play:
        one, eight = s * 8, s * 8 + 7
        sums = []
        for p, hand in enumerate(hands):
            total = 0
            for card in hand:
                if card >> 3 != s:
                    continue
                if card == eight and any(one in hands[q] for q in range(n) if q != p):
                    continue
                total += (card & 7) + 1
            sums.append(total)
        for p in range(n):
            if sums[p] == max(sums):
                totals[p] += brute_best(grids[p])[s]
    top = max(totals)
    tied = [p for p in range(n) if totals[p] == top]
    variety = {p: len({card >> 3 for card in grids[p].values()}) for p in tied}
    winners = tuple(p for p in tied if variety[p] == max(variety.values()))
    return totals, winners


# ---------------------------------------------------------------- random arboretums

def random_grid(rng: np.random.Generator, size: int | None = None) -> dict[tuple[int, int], int]:
    """A random connected arboretum of 1..17 distinct cards, grown one adjacent cell at a time.

    Some are biased: cards from 1 to 3 species only (long pure paths), cards placed in rank
    order along a snake (long climbing paths)."""
    if size is None:
        size = int(rng.integers(1, 18))
    if rng.integers(4) == 0:
        pool = np.arange(80)
    else:
        few = int(rng.integers(-(-size // 8), 4))  # enough species for ``size`` cards
        chosen = rng.choice(10, size=max(few, 1), replace=False)
        pool = np.array([s * 8 + r for s in chosen for r in range(8)])
    cards = [int(x) for x in rng.choice(pool, size=size, replace=False)]
    snake = rng.random() < 0.35
    if snake:
        cards.sort(key=lambda card: (card & 7, rng.random()))
    grid = {(0, 0): cards[0]}
    last = (0, 0)
    for card in cards[1:]:
        frontier = sorted({(r + dr, c + dc) for r, c in grid for dr, dc in NEIGHBOURS}
                          - set(grid))
        if snake and rng.random() < 0.8:
            near = [(last[0] + dr, last[1] + dc) for dr, dc in NEIGHBOURS]
            near = [cell for cell in near if cell not in grid]
            if near:
                frontier = near
        last = frontier[int(rng.integers(len(frontier)))]
        grid[last] = card
    return grid


def packed(grid: dict[tuple[int, int], int]) -> dict[int, int]:
    return {pack_cell(r, c): card for (r, c), card in grid.items()}


def assert_path_matches(grid, species: int, points: int, cells) -> None:
    """The DP's path cells form a legal path of ``species`` worth exactly ``points``."""
    if points == 0:
        assert tuple(cells) == ()
        return
    coords = [unpack_cell(cell) for cell in cells]
    assert len(set(coords)) == len(coords)
    for (r1, c1), (r2, c2) in zip(coords, coords[1:]):
        assert abs(r1 - r2) + abs(c1 - c2) == 1, f"cells {coords} are not adjacent"
    assert all(cell in grid for cell in coords)
    assert path_points([grid[cell] for cell in coords], species) == points


def compiled_paths(arboretum: dict[int, int]):
    """Per species (0..9): (points, path cells as (row, col)) from the compiled DP, or None
    where numba is not installed."""
    if not jit_paths.available:
        return None
    rows = jit_paths.best_paths(np.array(list(arboretum), np.int64),
                                np.array(list(arboretum.values()), np.int64),
                                np.arange(10, dtype=np.int64)).tolist()
    return [(row[0], tuple(zip(row[2:2 + 2 * row[1]:2], row[3:3 + 2 * row[1]:2]))) for row in rows]


# ---------------------------------------------------------------- tests

def test_reference_formula_agrees_with_rules_examples() -> None:
    """The reference itself is right (else comparing to it proves nothing)."""
    oak, willow, maple = 8, 9, 6
    assert path_points([maple * 8 + r - 1 for r in (1, 3, 5, 6, 8)], maple) == 13
    assert path_points([oak * 8, willow * 8 + 2, oak * 8 + 4], oak) == 4
    assert path_points([oak * 8 + 1, oak * 8 + 3, oak * 8 + 5], oak) == 3
    assert path_points([oak * 8 + 4, oak * 8 + 2], oak) is None
    grid = {(0, 0): oak * 8, (0, 1): willow * 8 + 2, (0, 2): oak * 8 + 4, (1, 2): oak * 8 + 7}
    assert brute_best(grid)[oak] == 4 + 1 + 2


def test_random_grids_are_connected_and_distinct() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        grid = random_grid(rng)
        assert 1 <= len(grid) <= 17
        assert len(set(grid.values())) == len(grid)
        seen, todo = {(0, 0)}, [(0, 0)]
        while todo:
            r, c = todo.pop()
            for dr, dc in NEIGHBOURS:
                if (r + dr, c + dc) in grid and (r + dr, c + dc) not in seen:
                    seen.add((r + dr, c + dc))
                    todo.append((r + dr, c + dc))
        assert seen == set(grid)


@pytest.mark.parametrize("chunk", range(4))
def test_best_path_matches_brute_force(chunk: int) -> None:
    rng = np.random.default_rng(1000 + chunk)
    long_pure = 0
    for _ in range(NUM_ARBORETUMS // 4):
        grid = random_grid(rng)
        expected = brute_best(grid)
        arboretum = packed(grid)
        compiled = compiled_paths(arboretum)
        for species in range(10):
            points, cells = best_path(arboretum, species)
            assert points == expected[species], (grid, species, points, cells)
            assert_path_matches(grid, species, points, cells)
            if compiled is not None:  # the scorer's compiled DP: the same path, cell for cell
                assert compiled[species] == (points, tuple(map(unpack_cell, cells))), (grid, species)
            if len(cells) >= 4 and all(grid[unpack_cell(x)] >> 3 == species for x in cells):
                long_pure += 1
    assert long_pure > 20  # the biased growth does produce doubled paths


def test_best_path_on_full_size_arboretums() -> None:
    rng = np.random.default_rng(99)
    for _ in range(300):
        grid = random_grid(rng, size=17)
        assert len(grid) == 17
        expected = brute_best(grid)
        for species in range(10):
            points, cells = best_path(packed(grid), species)
            assert points == expected[species]
            assert_path_matches(grid, species, points, cells)


def test_best_path_ignores_translation() -> None:
    rng = np.random.default_rng(5)
    for _ in range(200):
        grid = random_grid(rng)
        moved = {(r - 40, c + 37): card for (r, c), card in grid.items()}
        for species in range(10):
            assert best_path(packed(grid), species)[0] == best_path(packed(moved), species)[0]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_score_position_matches_reference(num_players: int) -> None:
    rng = np.random.default_rng(num_players)
    for _ in range(150):
        species_in_play = sorted(int(s) for s in rng.choice(10, size={2: 6, 3: 8, 4: 10}[num_players],
                                                            replace=False))
        cards = [s * 8 + r for s in species_in_play for r in range(8)]
        rng.shuffle(cards)
        grids, hands = [], []
        for _p in range(num_players):
            size = int(rng.integers(0, 10))
            grid = {}
            cell = (0, 0)
            for _k in range(size):
                grid[cell] = cards.pop()
                frontier = sorted({(r + dr, c + dc) for r, c in grid for dr, dc in NEIGHBOURS}
                                  - set(grid))
                cell = frontier[int(rng.integers(len(frontier)))]
            grids.append(grid)
            hand_size = int(rng.integers(0, 8))
            hands.append({cards.pop() for _k in range(hand_size)})
        # force some 1-and-8 situations
        if rng.random() < 0.5:
            s = species_in_play[int(rng.integers(len(species_in_play)))]
            for card in (s * 8, s * 8 + 7):
                for h in hands:
                    h.discard(card)
                if all(card not in g.values() for g in grids):
                    hands[int(rng.integers(num_players))].add(card)
        result = score_position(hands, [packed(g) for g in grids], species_in_play)
        totals, winners = reference_score(hands, grids, species_in_play)
        assert list(result.totals) == totals
        assert tuple(result.winners) == winners
        for p, ps in enumerate(result.players):
            assert sorted(ps.species) == species_in_play
            assert ps.total == sum(sc.points for sc in ps.species.values())
            for s, sc in ps.species.items():
                assert sc.right or sc.points == 0
                if sc.points:
                    coords = list(sc.path)
                    assert path_points([grids[p][cell] for cell in coords], s) == sc.points
