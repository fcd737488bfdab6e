"""Scoring per RULES.md: the worked examples 1-8 and every settled scoring point."""

from __future__ import annotations

import json
from pathlib import Path

from arboretum_env.engine import (
    SPECIES,
    best_path,
    make_card,
    pack_cell,
    rank_of,
    rights,
    score_position,
    species_of,
    unpack_cell,
)
from arboretum_env.engine.position import parse_position
from arboretum_env.engine.scoring import species_sums

ROOT = Path(__file__).resolve().parents[1]
S = {name: i for i, name in enumerate(SPECIES)}
CASSIA, DOGWOOD, OLIVE, LILAC, MAPLE, OAK, WILLOW = (
    S["cassia"], S["dogwood"], S["olive"], S["lilac"], S["maple"], S["oak"], S["willow"])


def c(name: str, rank: int) -> int:
    return make_card(S[name], rank)


def arb(*cards: tuple[int, int, str, int]) -> dict[int, int]:
    """An arboretum from ``(row, col, species, rank)`` entries."""
    return {pack_cell(r, col): c(name, rank) for r, col, name, rank in cards}


def line(name_ranks: list[tuple[str, int]], row: int = 0) -> dict[int, int]:
    """Cards in one row from column 0 rightwards."""
    return arb(*((row, i, name, rank) for i, (name, rank) in enumerate(name_ranks)))


def path_cards(arboretum: dict[int, int], cells) -> list[int]:
    return [arboretum[pack_cell(r, col)] for r, col in cells]


def check_path(arboretum, species, packed_cells) -> None:
    """The cells form a legal path of ``species``: adjacent, strictly climbing, right ends."""
    assert len(packed_cells) >= 2
    cards = [arboretum[x] for x in packed_cells]
    assert species_of(cards[0]) == species and species_of(cards[-1]) == species
    for a, b in zip(packed_cells, packed_cells[1:]):
        (r1, c1), (r2, c2) = unpack_cell(a), unpack_cell(b)
        assert abs(r1 - r2) + abs(c1 - c2) == 1
    ranks = [rank_of(x) for x in cards]
    assert ranks == sorted(set(ranks))


# ---------------------------------------------------------------- worked examples (RULES.md)

def test_example_1_five_card_all_maple_path_scores_13() -> None:
    a = line([("maple", 1), ("maple", 3), ("maple", 5), ("maple", 6), ("maple", 8)])
    points, cells = best_path(a, MAPLE)
    assert points == 13 == 5 * 2 + 1 + 2
    assert [rank_of(a[x]) for x in cells] == [1, 3, 5, 6, 8]
    # with the right to maple (the player holds a maple), the same 13 is scored
    result = score_position([{c("maple", 2)}, set()], [a, {}], [MAPLE, OAK])
    assert result.players[0].species[MAPLE].right
    assert result.players[0].species[MAPLE].points == 13
    assert not result.players[1].species[MAPLE].right


def test_example_2_four_card_all_oak_path_scores_11() -> None:
    a = line([("oak", 1), ("oak", 4), ("oak", 6), ("oak", 8)])
    assert best_path(a, OAK)[0] == 11 == 4 + 4 + 1 + 2


def test_example_3_mixed_path_oak_willow_oak_scores_4_for_oak() -> None:
    a = line([("oak", 1), ("willow", 3), ("oak", 5)])
    points, cells = best_path(a, OAK)
    assert points == 4 == 3 + 1
    assert len(cells) == 3
    # the same cards give no willow path (one willow card)
    assert best_path(a, WILLOW) == (0, ())


def test_example_4_three_card_pure_path_is_not_doubled() -> None:
    a = line([("cassia", 2), ("cassia", 4), ("cassia", 6)])
    assert best_path(a, CASSIA) == (3, (pack_cell(0, 0), pack_cell(0, 1), pack_cell(0, 2)))


def test_example_5_two_card_path_ending_on_8_scores_4() -> None:
    a = line([("olive", 3), ("olive", 8)])
    assert best_path(a, OLIVE)[0] == 4 == 2 + 2


def test_example_6_maple_1_cancels_maple_8() -> None:
    hands = [{c("maple", 8)}, {c("maple", 1)}]
    assert species_sums(hands, MAPLE) == [0, 1]
    assert rights(hands, MAPLE) == [False, True]
    both = [line([("maple", 2), ("maple", 3)]), line([("maple", 4), ("maple", 5)])]
    result = score_position(hands, both, [MAPLE])
    assert [p.species[MAPLE].points for p in result.players] == [0, 2]
    assert [p.species[MAPLE].right for p in result.players] == [False, True]


def test_example_7_nobody_holds_dogwood_so_everyone_may_score_it() -> None:
    hands = [{c("oak", 3)}, {c("maple", 4)}, set()]
    assert rights(hands, DOGWOOD) == [True, True, True]
    arbs = [line([("dogwood", 1), ("dogwood", 2)]), line([("dogwood", 3), ("dogwood", 5)]),
            line([("dogwood", 4), ("dogwood", 8)])]
    result = score_position(hands, arbs, [DOGWOOD, OAK, MAPLE])
    assert [p.species[DOGWOOD].points for p in result.players] == [3, 2, 4]


def _emma() -> dict:
    return json.loads((ROOT / "examples" / "emma.json").read_text())


def test_example_8_emma_scores_20() -> None:
    result = parse_position(_emma()).score()
    emma = result.players[0]
    assert emma.species[MAPLE].points == 13 and len(emma.species[MAPLE].path) == 5
    assert emma.species[OLIVE].points == 3 and len(emma.species[OLIVE].path) == 3
    assert emma.species[CASSIA].points == 4 and len(emma.species[CASSIA].path) == 2
    assert emma.total == 20
    assert result.winners == (0,)


def test_example_8_emma_built_by_hand() -> None:
    a = arb((0, 0, "maple", 1), (0, 1, "maple", 3), (0, 2, "maple", 5), (0, 3, "maple", 6),
            (0, 4, "maple", 8), (1, 0, "olive", 2), (2, 0, "lilac", 4), (3, 0, "olive", 7),
            (1, 4, "cassia", 3), (2, 4, "cassia", 8))
    hands = [{c("maple", 7), c("olive", 6), c("cassia", 5)}, {c("dogwood", 4)}]
    in_play = [CASSIA, DOGWOOD, S["jacaranda"], OLIVE, LILAC, MAPLE]
    result = score_position(hands, [a, {}], in_play)
    emma = result.players[0]
    assert {s for s, sc in emma.species.items() if sc.right} == {CASSIA, S["jacaranda"], OLIVE,
                                                                 LILAC, MAPLE}
    assert {s: sc.points for s, sc in emma.species.items() if sc.points} == {
        MAPLE: 13, OLIVE: 3, CASSIA: 4}
    assert emma.total == 20
    assert path_cards(a, emma.species[OLIVE].path) == [c("olive", 2), c("lilac", 4), c("olive", 7)]


# ---------------------------------------------------------------- rights

def test_one_cancels_eight_only_for_the_other_player() -> None:
    hands = [{c("oak", 8), c("oak", 3)}, {c("oak", 1)}]
    assert species_sums(hands, OAK) == [3, 1]
    assert rights(hands, OAK) == [True, False]


def test_holding_both_own_1_and_8_keeps_the_8() -> None:
    hands = [{c("oak", 1), c("oak", 8)}, {c("oak", 7)}]
    assert species_sums(hands, OAK) == [9, 7]
    assert rights(hands, OAK) == [True, False]


def test_the_1_is_always_worth_1() -> None:
    hands = [{c("oak", 8)}, {c("oak", 1)}, {c("oak", 2)}]
    assert species_sums(hands, OAK) == [0, 1, 2]
    assert rights(hands, OAK) == [False, False, True]
    assert species_sums([{c("oak", 1), c("oak", 2)}, {c("oak", 8)}], OAK) == [3, 0]


def test_one_cancels_eight_is_per_species() -> None:
    hands = [{c("oak", 8)}, {c("willow", 1)}]
    assert species_sums(hands, OAK) == [8, 0]
    assert species_sums(hands, WILLOW) == [0, 1]


def test_tied_sums_all_get_the_right() -> None:
    hands = [{c("oak", 5)}, {c("oak", 2), c("oak", 3)}, {c("oak", 4)}]
    assert rights(hands, OAK) == [True, True, False]
    arbs = [line([("oak", 1), ("oak", 6)]), line([("oak", 7), ("oak", 8)]),
            line([("maple", 3), ("maple", 4)])]
    result = score_position(hands, arbs, [OAK])
    assert [p.species[OAK].points for p in result.players] == [3, 4, 0]


def test_zero_zero_tie_all_score() -> None:
    hands = [{c("maple", 2)}, {c("maple", 3)}]
    arbs = [line([("oak", 2), ("oak", 5)]), line([("oak", 1), ("oak", 4)])]
    result = score_position(hands, arbs, [OAK, MAPLE])
    assert [p.species[OAK].right for p in result.players] == [True, True]
    assert [p.species[OAK].points for p in result.players] == [2, 3]
    assert result.totals == (2, 3)


def test_right_to_an_absent_species_scores_0_but_blocks_others() -> None:
    hands = [{c("maple", 5)}, {c("maple", 2)}]
    arbs = [line([("oak", 2), ("oak", 5)]), line([("maple", 1), ("maple", 3)])]
    result = score_position(hands, arbs, [OAK, MAPLE])
    p0, p1 = result.players
    assert p0.species[MAPLE].right and p0.species[MAPLE].points == 0
    assert p0.species[MAPLE].path == ()
    assert not p1.species[MAPLE].right and p1.species[MAPLE].points == 0
    assert result.totals == (2, 0)  # player 1's 3-point maple path does not count


def test_species_without_right_scores_0_even_with_a_path() -> None:
    hands = [{c("oak", 6)}, set()]
    a = line([("oak", 1), ("oak", 2), ("oak", 3), ("oak", 4)])
    result = score_position(hands, [{}, a], [OAK])
    assert result.players[1].species[OAK].right is False
    assert result.totals == (0, 0)


# ---------------------------------------------------------------- paths

def test_highest_scoring_path_is_not_the_longest() -> None:
    a = arb(
        (0, 0, "oak", 3), (0, 1, "oak", 4), (0, 2, "oak", 5), (0, 3, "oak", 6),  # pure: 8
        (1, 0, "willow", 1),  # connects; equal rank to oak 1, starts no oak path
        (2, 0, "oak", 1), (2, 1, "willow", 2), (2, 2, "willow", 3), (2, 3, "willow", 4),
        (2, 4, "willow", 5), (2, 5, "oak", 7),  # mixed, 6 cards: 6 + 1 = 7
    )
    longest = [pack_cell(2, i) for i in range(6)]
    check_path(a, OAK, longest)  # the 6-card path is a legal oak path worth 7
    points, cells = best_path(a, OAK)
    assert points == 8
    assert cells == tuple(pack_cell(0, i) for i in range(4))
    assert len(cells) < len(longest)


def test_same_card_serves_several_species() -> None:
    a = line([("oak", 1), ("willow", 2), ("oak", 3), ("willow", 4)])
    oak_points, oak_cells = best_path(a, OAK)
    willow_points, willow_cells = best_path(a, WILLOW)
    assert oak_points == 4 and willow_points == 3
    assert set(oak_cells) & set(willow_cells) == {pack_cell(0, 1), pack_cell(0, 2)}
    result = score_position([set(), set()], [a, {}], [OAK, WILLOW])
    assert result.players[0].total == 7


def test_paths_may_turn() -> None:
    a = arb((0, 0, "maple", 1), (0, 1, "maple", 2), (1, 1, "maple", 3), (1, 0, "maple", 4),
            (2, 0, "maple", 5))
    points, cells = best_path(a, MAPLE)
    assert points == 5 * 2 + 1
    assert [unpack_cell(x) for x in cells] == [(0, 0), (0, 1), (1, 1), (1, 0), (2, 0)]


def test_cards_in_between_may_be_of_any_species() -> None:
    a = line([("oak", 2), ("maple", 3), ("willow", 4), ("lilac", 5), ("oak", 8)])
    assert best_path(a, OAK)[0] == 5 + 2


def test_mixed_path_is_not_doubled() -> None:
    a = line([("oak", 1), ("oak", 2), ("willow", 3), ("oak", 4), ("oak", 5)])
    assert best_path(a, OAK)[0] == 5 + 1


def test_ranks_must_strictly_increase() -> None:
    assert best_path(line([("oak", 3), ("willow", 3), ("oak", 5)]), OAK) == (0, ())
    a = line([("oak", 2), ("willow", 6), ("oak", 4)])  # 2 -> 6 -> 4 climbs, then falls
    assert best_path(a, OAK) == (0, ())
    # reading direction does not matter: a descending row is a climbing path
    points, cells = best_path(line([("oak", 7), ("oak", 5), ("oak", 2)]), OAK)
    assert points == 3 and [unpack_cell(x) for x in cells] == [(0, 2), (0, 1), (0, 0)]


def test_path_needs_at_least_two_cards() -> None:
    assert best_path(arb((0, 0, "oak", 8)), OAK) == (0, ())
    assert best_path(arb((0, 0, "oak", 1)), OAK) == (0, ())
    assert best_path(line([("oak", 1), ("willow", 8)]), OAK) == (0, ())
    result = score_position([set()], [arb((0, 0, "oak", 1))], [OAK])
    assert result.players[0].species[OAK].points == 0


def test_path_must_start_and_end_with_the_species() -> None:
    a = line([("willow", 1), ("oak", 4), ("oak", 5), ("willow", 8)])
    assert best_path(a, OAK)[0] == 2  # only oak 4 -> oak 5
    assert best_path(a, WILLOW)[0] == 4 + 1 + 2


def test_start_bonus_counts_for_a_1_only() -> None:
    assert best_path(line([("oak", 1), ("oak", 2)]), OAK)[0] == 3
    assert best_path(line([("oak", 2), ("oak", 3)]), OAK)[0] == 2


# ---------------------------------------------------------------- winners

def test_highest_total_wins() -> None:
    result = score_position([set(), set()], [line([("oak", 1), ("oak", 2)]),
                                             line([("oak", 3), ("oak", 4)])], [OAK])
    assert result.totals == (3, 2) and result.winners == (0,)


def test_tie_break_most_different_species_in_arboretum() -> None:
    a0 = line([("oak", 2), ("oak", 3), ("maple", 1), ("lilac", 1)])  # 3 species, 2 points
    a1 = line([("oak", 5), ("oak", 6), ("willow", 8), ("oak", 1)])  # 2 species, 2 points
    result = score_position([set(), set()], [a0, a1], [OAK, MAPLE, LILAC, WILLOW])
    assert result.totals == (2, 2)
    assert result.winners == (0,)


def test_tie_break_ignores_arboretum_size() -> None:
    a0 = line([("oak", 2), ("oak", 3), ("maple", 1)])  # 3 cards, 2 species
    a1 = line([("maple", 7), ("oak", 5), ("oak", 6), ("maple", 4)])  # 4 cards, 2 species
    result = score_position([set(), set()], [a0, a1], [OAK, MAPLE])
    assert result.players[0].total == result.players[1].total == 2
    assert result.winners == (0, 1)


def test_still_tied_players_share_the_win() -> None:
    a0 = line([("oak", 2), ("oak", 3), ("maple", 1)])
    a1 = line([("oak", 5), ("oak", 6), ("maple", 2)])
    a2 = line([("oak", 7)])
    result = score_position([set(), set(), set()], [a0, a1, a2], [OAK, MAPLE])
    assert result.totals == (2, 2, 0)
    assert result.winners == (0, 1)
