"""The compiled helpers the systems' kernels share (pipeline.systems.kernels): strings and player
ids (ids.py) and stable sorting over encoded keys (sort.py), against plain Python."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.systems.eagle import kernel as eagle_kernel
from pipeline.systems.kernels import ids, sort

WORD = 2**64 - 1


def buffers(strings: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Arrow-style int32 offsets and bytes of the strings."""
    offsets = np.zeros(len(strings) + 1, np.int32)
    offsets[1:] = np.cumsum([len(s) for s in strings])
    data = np.frombuffer(b"".join(strings), np.uint8) if any(strings) else np.zeros(0, np.uint8)
    return offsets, data.copy()


def bytes_order(a: bytes, b: bytes) -> int:
    """The comparison the kernels' string orders follow: bytewise, a prefix first."""
    return (a > b) - (a < b)


def python_prefix(text: bytes) -> int:
    return int.from_bytes(text[:8].ljust(8, b"\0"), "little")


def python_hash(text: bytes) -> int:
    mix_1, mix_2 = int(ids.MIX_1), int(ids.MIX_2)
    h = ((python_prefix(text) ^ len(text)) * mix_1) & WORD
    h ^= h >> 29
    for k in range(8, len(text), 8):
        h = ((h ^ python_prefix(text[k:])) * mix_1) & WORD
        h ^= h >> 29
    h = (h * mix_2) & WORD
    return h ^ (h >> 32)


# Strings that probe the encoding: empty, zero bytes, one a prefix of another, equal first chunks
# (7 bytes) and words (8 bytes), several chunks long, and code points of every UTF-8 length.
TRICKY = [
    "",
    "\0",
    "\0\0",
    "a",
    "a\0",
    "a\0\0",
    "ab",
    "abcdefg",
    "abcdefg\0",
    "abcdefgh",
    "abcdefgi",
    "abcdefghijklmn",
    "abcdefghijklmn\0",
    "abcdefghijklmno",
    "abcdefghijklmnopqrstuvwxyz",
    "abcdefgz",
    "p0001",
    "p00010",
    "p0002",
    "\x7f",
    "\x80",
    "é",
    "éa",
    "\u0800",
    "\uffff",
    "\U00010000",
    "\U0010ffff",
]
id_strings = st.text(st.characters(codec="utf-8"), max_size=24) | st.sampled_from(TRICKY)


# --- bytes -------------------------------------------------------------------------------------


@settings(deadline=None)  # a first call may compile
@given(a=st.binary(max_size=20), b=st.binary(max_size=20), pad=st.integers(0, 9))
def test_same_bytes_and_prefix_match_python(a, b, pad):
    data = np.frombuffer(b"#" * pad + a + b + b"#" * pad, np.uint8)
    a_start, b_start = pad, pad + len(a)
    assert ids.same_bytes(data, a_start, a_start + len(a), data, b_start, b_start + len(b)) == (a == b)
    # read in the middle of the buffer, and at its very end (fewer than eight bytes left)
    assert int(ids.prefix(data, a_start, a_start + len(a))) == python_prefix(a)
    tail = np.frombuffer(a, np.uint8) if a else np.zeros(0, np.uint8)
    assert int(ids.prefix(tail, 0, len(a))) == python_prefix(a)
    word = np.uint64(ids.prefix(data, a_start, a_start + len(a)))  # numba hands back a Python int
    assert ids.same_string(data, a_start, a_start + len(a), word, b_start, b_start + len(b)) == (a == b)


@settings(deadline=None)  # a first call may compile
@given(strings=st.lists(st.binary(max_size=20), max_size=6), pad=st.integers(0, 9))
def test_copy_words_appends_each_string_and_touches_only_its_room(strings, pad):
    """Strings copied one after another, from anywhere in the source (its very end too), give
    their concatenation; only the seven bytes of room after it may be written past it."""
    source = np.frombuffer(b"#" * pad + b"".join(strings), np.uint8)
    joined = b"".join(strings)
    target = np.full(len(joined) + 7 + 4, 0xAB, np.uint8)
    at, start = 0, pad
    for text in strings:
        end = ids.copy_words(source, start, start + len(text), target, at)
        assert end == at + len(text)
        at, start = end, start + len(text)
    assert target[: len(joined)].tobytes() == joined
    assert target[len(joined) + 7 :].tobytes() == b"\xab" * 4


@settings(deadline=None)  # a first call may compile
@given(values=st.lists(st.one_of(st.none(), st.booleans()), max_size=40), start=st.integers(0, 12))
def test_bit_at_reads_arrows_value_and_validity_bits_of_a_slice(values, start):
    """A boolean column sliced anywhere (bits starting mid-byte): each row's value bit and
    validity bit, read at the slice's offset, are what Arrow holds."""
    array = pa.array(values, pa.bool_()).slice(min(start, len(values)))
    bits, validity = ids.boolean_bits(array), ids.validity_bits(array)
    for i, value in enumerate(array.to_pylist()):
        present = validity.shape[0] == 0 or ids.bit_at(validity, array.offset + i) == 1
        assert present == (value is not None)
        if value is not None:
            assert ids.bit_at(bits, array.offset + i) == int(value)


NAMES = ["solo", "draw", "survived", "eliminated", "anarchy", "", "sixteen-bytes-id"]
names_and_near_misses = (
    st.sampled_from([n.encode() for n in NAMES])
    | st.sampled_from([n.encode() for n in NAMES]).map(lambda n: n + b"\0")
    | st.binary(max_size=20)
)


@settings(deadline=None)  # a first call may compile
@given(text=names_and_near_misses, name=st.sampled_from(NAMES), pad=st.integers(0, 9))
def test_string_words_tell_a_name_from_every_other_string(text, name, pad):
    # A name is told by length and sixteen bytes: a string with the name's bytes and a zero
    # byte more, or cut short, is not the name; at the buffer's end as in its middle.
    data = np.frombuffer(b"#" * pad + text + b"#" * pad, np.uint8)
    words = ids.string_words(data, pad, pad + len(text))
    assert bool(ids.is_name(words, ids.name_words(name))) == (text == name.encode())
    at_end = np.frombuffer(b"#" * pad + text, np.uint8)
    assert ids.string_words(at_end, pad, pad + len(text)) == words


def test_names_longer_than_sixteen_bytes_are_refused():
    assert ids.name_words("é" * 8) == (16, *np.frombuffer(("é" * 8).encode(), "<i8").tolist())
    with pytest.raises(ValueError, match="longer than sixteen bytes"):
        ids.name_words("seventeen-bytes-x")


def test_same_bytes_tells_apart_one_byte():
    text = np.frombuffer(b"abcdefghijk", np.uint8)
    assert ids.same_bytes(text, 0, 11, text.copy(), 0, 11)
    for at in range(11):  # one byte changed, wherever it is
        other = text.copy()
        other[at] ^= 0x20
        assert not ids.same_bytes(text, 0, 11, other, 0, 11), at
        assert not ids.same_bytes(other, 0, 11, text, 0, 11), at
    assert not ids.same_bytes(text, 0, 10, text, 0, 11)
    assert ids.same_bytes(text, 3, 3, text, 7, 7)


@settings(deadline=None)
@given(strings=st.lists(st.sampled_from([b"g1", b"g2", b"game-000000001", b"game-000000002", b""]), max_size=30))
def test_run_end_finds_runs_of_equal_strings(strings):
    offsets, data = buffers(strings)
    ends, r = [], 0
    while r < len(strings):
        r = ids.run_end(offsets, data, r, len(strings))
        ends.append(r)
    expected = list(itertools.accumulate(len(list(run)) for _, run in itertools.groupby(strings)))
    assert ends == expected
    assert ids.run_starts(offsets, data).tolist() == [0] + expected


@settings(deadline=None)
@given(strings=st.lists(id_strings, min_size=2, max_size=8))
def test_id_less_is_code_point_order(strings):
    offsets, data = buffers([s.encode() for s in strings])
    for a, b in itertools.product(range(len(strings)), repeat=2):
        assert ids.id_less(offsets, data, a, b) == (strings[a] < strings[b]), (strings[a], strings[b])


@settings(deadline=None)
@given(text=st.binary(max_size=40), pad=st.integers(0, 9))
def test_id_hash_is_the_word_at_a_time_mix(text, pad):
    data = np.frombuffer(b"x" * pad + text + b"y" * pad, np.uint8)
    word = np.uint64(ids.prefix(data, pad, pad + len(text)))
    assert int(ids.id_hash(word, data, pad, pad + len(text))) == python_hash(text)


def test_id_hash_depends_on_every_byte_and_the_length():
    texts = [b"", b"\0", b"\0\0", b"abcdefgh", b"abcdefgh\0", b"abcdefghijklmnopq", b"abcdefghijklmnopr"]
    hashes = set()
    for text in texts:
        data = np.frombuffer(text, np.uint8) if text else np.zeros(0, np.uint8)
        hashes.add(int(ids.id_hash(np.uint64(ids.prefix(data, 0, len(text))), data, 0, len(text))))
    assert len(hashes) == len(texts)


# --- the id table ------------------------------------------------------------------------------


@settings(deadline=None)
@given(stream=st.lists(id_strings, max_size=120), data=st.data())
def test_number_rows_numbers_ids_in_order_of_first_appearance(stream, data):
    encoded = [s.encode() for s in stream]
    offsets, id_bytes = buffers(encoded)
    rows = np.array(
        data.draw(
            st.lists(st.integers(0, max(len(stream) - 1, 0)), max_size=2 * len(stream)) if stream else st.just([])
        ),
        np.int64,
    )
    pool_offsets, pool = np.zeros(2, np.int32), np.zeros(1, np.uint8)  # tiny: everything has to grow
    slots = np.full((2, 2), -1, np.int64)
    out = np.empty(len(rows), np.int64)
    seen: dict[bytes, int] = {}
    expected = [seen.setdefault(encoded[r], len(seen)) for r in rows]
    # in two calls, the second going on from the first's count and table
    half = len(rows) // 2
    count, pool_offsets, pool, slots = ids.number_rows(
        offsets, id_bytes, rows[:half], pool_offsets, pool, slots, 0, out[:half]
    )
    count, pool_offsets, pool, slots = ids.number_rows(
        offsets, id_bytes, rows[half:], pool_offsets, pool, slots, count, out[half:]
    )
    assert out.tolist() == expected
    assert count == len(seen) and 2 * count <= slots.shape[0]
    assert [bytes(pool[pool_offsets[v] : pool_offsets[v + 1]]) for v in range(count)] == sorted(seen, key=seen.get)
    # A table rebuilt from the pool numbers the same ids alike and adds nothing.
    rebuilt = ids.id_table(pool_offsets, pool, count, max(4, 2 * slots.shape[0]))
    again = np.empty(len(rows), np.int64)
    numbered = ids.number_rows(offsets, id_bytes, rows, pool_offsets, pool, rebuilt, count, again)
    assert numbered[0] == count and numbered[1] is pool_offsets and numbered[2] is pool
    # rows None: every row in order (ids the rows left out are new)
    every = np.empty(len(stream), np.int64)
    count = ids.number_rows(offsets, id_bytes, None, pool_offsets, pool, rebuilt, count, every)[0]
    assert every.tolist() == [seen.setdefault(text, len(seen)) for text in encoded] and count == len(seen)
    assert again.tolist() == expected


# --- sorting -----------------------------------------------------------------------------------


@settings(deadline=None)
@given(
    keys=st.lists(st.integers(-3, 3), max_size=300)
    | st.lists(st.integers(-(2**63), 2**63 - 1), max_size=60)
    | st.lists(st.sampled_from([-(2**63), -1, 0, 2**62, 2**63 - 1]), max_size=60)
)
def test_stable_order_is_a_stable_sort(keys):
    array = np.array(keys, np.int64)
    assert sort.stable_order(array).tolist() == sorted(range(len(keys)), key=keys.__getitem__)


def test_stable_order_every_way_keeps_ties_in_order():
    rng = np.random.default_rng(5)
    narrow = rng.integers(0, 4, 5_000)
    for keys in (
        narrow,  # radix-sorted, one pass
        narrow * 2**40 + 7,  # radix-sorted, four passes
        (narrow - 2) * 2**62,  # more than 2**63 apart: merge sort
        narrow[:200] * 2**40,
    ):  # a few keys: merge sort
        order = sort.stable_order(keys.astype(np.int64))
        assert order.tolist() == sorted(range(len(keys)), key=lambda k: keys[k])
        assert order.tolist() == np.argsort(keys, kind="stable").tolist()


@settings(deadline=None)
@given(keys=st.lists(st.integers(0, 2**62), max_size=400) | st.lists(st.integers(0, 40), max_size=400))
def test_radix_order_sorts_positions_and_keys(keys):
    array = np.array(keys, np.int64)
    order, ordered = sort.radix_order(array, max(keys, default=0))
    expected = sorted(range(len(keys)), key=keys.__getitem__)
    assert order.tolist() == expected and ordered.tolist() == [keys[k] for k in expected]


@settings(deadline=None)
@given(strings=st.lists(id_strings, max_size=50), data=st.data())
def test_sorted_by_id_is_python_sort_on_the_byte_comparison(strings, data):
    # Ties (equal ids) keep their given order.
    encoded = [s.encode() for s in strings]
    offsets, id_bytes = buffers(encoded)
    players = np.array(data.draw(st.permutations(range(len(strings)))), np.int32)
    expected = sorted(players.tolist(), key=functools.cmp_to_key(lambda a, b: bytes_order(encoded[a], encoded[b])))
    assert sort.sorted_by_id(players, offsets, id_bytes).tolist() == expected
    assert [strings[p] for p in expected] == sorted(strings)


def test_sorted_by_id_on_long_shared_prefixes():
    stems = ["", "x" * 7, "x" * 13, "x" * 14, "x" * 15, "x" * 40]
    strings = [stem + tail for stem in stems for tail in ("", "\0", "a", "ab", "a" * 8, "b")]
    strings += strings[::3]  # and some twice
    encoded = [s.encode() for s in strings]
    offsets, id_bytes = buffers(encoded)
    players = np.random.default_rng(1).permutation(len(strings)).astype(np.int64)
    expected = sorted(players.tolist(), key=lambda p: encoded[p])
    assert sort.sorted_by_id(players, offsets, id_bytes).tolist() == expected


@settings(deadline=None)
@given(strings=st.lists(id_strings, unique=True, max_size=40), data=st.data())
def test_extend_id_order_merges_new_ids_in(strings, data):
    offsets, id_bytes = buffers([s.encode() for s in strings])
    known = data.draw(st.integers(0, len(strings)))
    order = np.zeros(len(strings), np.int32)
    order[:known] = sorted(range(known), key=strings.__getitem__)
    sort.extend_id_order(order, known, len(strings), offsets, id_bytes)
    assert order.tolist() == sorted(range(len(strings)), key=strings.__getitem__)


def table_inputs(rng, n, points_span):
    points = rng.integers(0, points_span, n).astype(np.int64)
    points[: n // 3] = points[0]  # many equal points, games and last games: the id decides
    games = rng.integers(1, 4, n).astype(np.int64)
    last = rng.integers(18_000, 18_003, n).astype(np.int32)
    names = [f"p{int(k):03d}" if k % 5 else f"p{int(k):03d}-long-suffix" for k in rng.permutation(n)]
    offsets, id_bytes = buffers([s.encode() for s in names])
    return (points, games, last, offsets, id_bytes), names


def test_table_sorts_match_the_table_comparison():
    rng = np.random.default_rng(7)
    for points_span in (10, 2**61):  # packed into one key, or one stable sort per key
        keys, names = table_inputs(rng, 400, points_span)
        points, games, last = keys[:3]

        def table_key(p, points=points, games=games, last=last, names=names):
            return (-int(points[p]), int(games[p]), -int(last[p]), names[p].encode())

        players = rng.permutation(400).astype(np.int32)
        expected = sorted(players.tolist(), key=table_key)
        assert eagle_kernel.sort_players(players, *keys).tolist() == expected
        assert eagle_kernel._sort_by_each_key(players, *keys).tolist() == expected


COUNTED_VARIANTS = ["standard", "a-counted-variant-longer-than-16"]


@settings(deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from([b"g1", b"g2", b"game-000000001", b"game-000000002", b""]),
            st.sampled_from(
                [
                    None,
                    "standard",
                    "standar",
                    "standard2",
                    "colonial",
                    "a-counted-variant-longer-than-16",
                    "a-counted-variant-longer-than-17",
                ]
            ),
        ),
        max_size=30,
    ),
    skipped=st.integers(0, 9),
)
def test_counted_games_keeps_the_games_of_counted_variants(rows, skipped):
    """eagle kernel.counted_games against plain Python: a game is a run of rows with equal ids,
    counted when its first row's variant is one of the names (a missing one is not); the kept
    rows, where each game starts among them, and their codes, centres and days. The variants
    are read from an Arrow slice, so the validity bitmap's offset counts."""
    offsets, data = buffers([game for game, _ in rows])
    # A missing variant's bytes say "standard", so only the validity bitmap tells it is missing.
    names = ["x"] * skipped + ["standard" if v is None else v for _, v in rows]
    valid = [True] * skipped + [v is not None for _, v in rows]
    name_offsets, name_bytes = buffers([v.encode() for v in names])
    variant = pa.StringArray.from_buffers(
        len(rows),
        pa.py_buffer(name_offsets),
        pa.py_buffer(name_bytes),
        pa.py_buffer(np.packbits(np.array(valid, np.bool_), bitorder="little")),
        offset=skipped,
    )
    bits = np.zeros(0, np.uint8) if all(valid) else np.frombuffer(variant.buffers()[0], np.uint8)
    codes = np.arange(len(rows), dtype=np.int8) % 5
    centres = np.arange(len(rows), dtype=np.int64) * 3
    days = np.arange(len(rows), dtype=np.int32) + 18_000
    keep, starts, kept_codes, kept_centres, kept_days = eagle_kernel.counted_games(
        *ids.string_buffers(variant),
        bits,
        variant.offset,
        *ids.string_buffers(pa.array(COUNTED_VARIANTS)),
        offsets,
        data,
        codes,
        centres,
        days,
    )
    game_starts = [r for r in range(len(rows)) if r == 0 or rows[r][0] != rows[r - 1][0]]
    expected, runs = [], []
    for first, end in zip(game_starts, game_starts[1:] + [len(rows)]):
        if rows[first][1] in COUNTED_VARIANTS:
            runs.append(len(expected))
            expected += range(first, end)
    assert np.flatnonzero(keep).tolist() == expected
    assert kept_codes.tolist() == codes[expected].tolist() and kept_codes.dtype == codes.dtype
    assert kept_centres.tolist() == centres[expected].tolist()
    assert kept_days.tolist() == days[expected].tolist() and kept_days.dtype == days.dtype
    assert starts.tolist() == runs + [len(expected)]


@settings(deadline=None)
@given(rows=st.lists(st.tuples(st.booleans(), st.integers(-3, 3)), max_size=25))
def test_leading_rows_are_pythons_maximum_with_ties(rows):
    """eagle kernel.leading_rows against plain Python: the largest value among the marked rows
    (negative ones too) and every row holding it, in row order; nothing when no row is marked.
    (The month's leaders are kept in run_month with the same running maximum, _tied_best; the
    reference tests compare the awards they give every month.)"""
    mask = np.array([marked for marked, *_ in rows], np.bool_)
    values = np.array([value for _, value, *_ in rows], np.int64)
    marked = [r for r, (m, *_) in enumerate(rows) if m]
    best = max((int(values[r]) for r in marked), default=0)
    value, leaders = eagle_kernel.leading_rows(mask, values)
    assert (int(value), leaders.tolist()) == (best, [r for r in marked if values[r] == best])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.binary(max_size=10), st.sampled_from([b"A", b"B", b"AB"])), max_size=12),
    st.booleans(),
)
def test_rows_in_order_is_the_order_of_python_tuples(rows, sort_first):
    """rows_in_order says whether (day, first, second) never decreases, as Python compares tuples;
    on sorted rows (and so with ties at every level) and on shuffled ones."""
    if sort_first:
        rows = sorted(rows)
    days = np.array([r[0] for r in rows], np.int32)
    first, second = buffers([r[1] for r in rows]), buffers([r[2] for r in rows])
    expected = all(a <= b for a, b in itertools.pairwise(rows))
    assert sort.rows_in_order(days, *first, *second) == expected


@settings(max_examples=30, deadline=None)
@given(ids_seen=st.lists(st.text(min_size=1, max_size=12), min_size=0, max_size=300), expected=st.integers(0, 5000))
def test_player_numbers_number_ids_in_order_of_first_sight_whatever_the_size_expected(ids_seen, expected):

    from pipeline.systems.kernels.numbering import PlayerNumbers

    first_sight = list(dict.fromkeys(ids_seen))
    numbers = PlayerNumbers(expected=expected)
    half = len(ids_seen) // 2
    got = numbers.numbers(pa.array(ids_seen[:half], pa.string())).tolist()
    got += numbers.numbers(pa.array(ids_seen[half:], pa.string())).tolist()
    assert got == [first_sight.index(i) for i in ids_seen]
    assert numbers.ids().to_pylist() == first_sight
    assert numbers.slots.shape[0] >= 2 * numbers.count


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.tuples(st.one_of(st.none(), st.text(max_size=12)), st.booleans()), max_size=40),
    skip=st.integers(0, 5),
)
def test_kept_rows_is_arrows_filter(rows, skip):
    """ids.kept_rows equals Arrow's filter: runs of kept rows, empty and non-ASCII strings, an
    array that is a slice of a larger one (offsets not from 0), arrays with nulls, and a column
    that is not strings."""

    whole = pa.array(["x" * k for k in range(skip)] + [text for text, _ in rows], pa.string())
    strings = whole.slice(skip)
    numbers = pa.array(range(len(rows)), pa.int32())
    keep = np.array([kept for _, kept in rows], np.bool_)
    kept_strings, kept_numbers = ids.kept_rows(keep, strings, numbers)
    assert kept_strings.type == pa.string()
    assert kept_strings.to_pylist() == [text for text, kept in rows if kept]
    assert kept_strings.equals(strings.filter(pa.array(keep, pa.bool_())))
    assert kept_numbers.to_pylist() == [k for k, (_, kept) in enumerate(rows) if kept]
