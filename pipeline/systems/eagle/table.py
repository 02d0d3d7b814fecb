"""The Eagle table's order as an order-statistic treap over player numbers, compiled with numba.

The Eagle table is ordered by a composite key: points desc, then fewer games, then the later
last game, then `player_id`. `precedes(a, b, ...)` compares two players by that key, read from
the per-player arrays (points in hundredths, games, last game as a day number) and, for the last
tie-break, the ids' UTF-8 bytes (`id_bytes[id_offsets[p]:id_offsets[p + 1]]`, Arrow's string
layout; bytewise order is code point order, as Python compares str). Re-sorting the table for
every game would cost O(n log n) per game; the treap answers "how many players in the tree
precede this one" and takes a player out or puts them back in O(log n) expected time. Live mode
keeps the top of the table in it (pipeline.systems.eagle.kernel).

Layout: node v stands for player v - 1, node 0 (NIL) is the empty tree. `nodes` is an int32
array of shape (capacity + 1, 4): row v holds the left child, the right child, the subtree
size and the points of node v, so a step down the tree reads one 16-byte row and the player's
arrays only when the points are equal (table points stay far below 2**31 hundredths). The root
is returned by the updating functions. A node's heap priority is a fixed hash of its
number, so the tree's shape depends only on the set of keys it holds (never on the order of
updates) and no random state needs to be carried. `stack` is scratch space of at least
capacity + 1 entries, used to fix subtree sizes bottom-up after a split or a merge without
recursion.

A player's key must not change while the player is in the tree: take them out, update their
arrays, put them back.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.systems.kernels import plain_njit
from pipeline.systems.kernels.ids import id_less

NIL = 0
LEFT, RIGHT, SIZE, POINTS = 0, 1, 2, 3
NODE_COLUMNS = 4

# splitmix64: its increment and multipliers, and its shifts.
_GOLDEN, _MIX_1, _MIX_2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


@plain_njit
def priority(node):
    """Heap priority of a node: the splitmix64 hash of its number (a fixed pseudo-random value)."""
    z = np.uint64(node) * _GOLDEN
    z = (z ^ (z >> _S30)) * _MIX_1
    z = (z ^ (z >> _S27)) * _MIX_2
    return z ^ (z >> _S31)


@plain_njit
def precedes(a, b, points, games, last, id_offsets, id_bytes):
    """Whether player a comes before player b in the table (a != b)."""
    return key_precedes(points[a], games[a], last[a], a, points[b], b, games, last, id_offsets, id_bytes)


@plain_njit
def key_precedes(points_x, games_x, last_x, x, points_b, b, games, last, id_offsets, id_bytes):
    """precedes(x, b) with x's points, games and last game and b's points already loaded (x != b)."""
    if points_x != points_b:
        return points_x > points_b
    if games_x != games[b]:
        return games_x < games[b]
    if last_x != last[b]:
        return last_x > last[b]
    return id_less(id_offsets, id_bytes, x, b)


@plain_njit
def node_precedes(points_x, games_x, last_x, x, t, nodes, games, last, id_offsets, id_bytes):
    """precedes(x, node t's player) with x's points, games and last game already loaded."""
    return key_precedes(points_x, games_x, last_x, x, nodes[t, POINTS], t - 1, games, last, id_offsets, id_bytes)


@plain_njit
def _fix_sizes(stack, count, nodes):
    """Recompute the sizes of the nodes stack[:count], deepest (last visited) first."""
    for i in range(count - 1, -1, -1):
        v = stack[i]
        nodes[v, SIZE] = 1 + nodes[nodes[v, LEFT], SIZE] + nodes[nodes[v, RIGHT], SIZE]


@plain_njit
def split(t, x, nodes, stack, points, games, last, id_offsets, id_bytes):
    """Split the tree t into the players before x and the players after x (x not in t).

    Top down, each node is hung below the last node of its side: as the right child on the
    left, the left child on the right. NIL's own children stand for the two roots meanwhile."""
    l_tail = NIL  # rightmost node of the left result, whose right child is still open
    r_tail = NIL  # leftmost node of the right result, whose left child is still open
    count = 0
    px, gx, lx = points[x], games[x], last[x]
    while t != NIL:
        stack[count] = t
        count += 1
        if not node_precedes(px, gx, lx, x, t, nodes, games, last, id_offsets, id_bytes):
            nodes[l_tail, RIGHT] = t
            l_tail = t
            t = nodes[t, RIGHT]
        else:
            nodes[r_tail, LEFT] = t
            r_tail = t
            t = nodes[t, LEFT]
    nodes[l_tail, RIGHT] = NIL
    nodes[r_tail, LEFT] = NIL
    l_root, r_root = nodes[NIL, RIGHT], nodes[NIL, LEFT]
    nodes[NIL, RIGHT] = NIL
    nodes[NIL, LEFT] = NIL
    _fix_sizes(stack, count, nodes)
    return l_root, r_root


@plain_njit
def merge(a, b, nodes, stack):
    """Join two trees where every player of a precedes every player of b; returns the root."""
    if a == NIL:
        return b
    if b == NIL:
        return a
    root = NIL
    parent = NIL
    parent_right = False
    count = 0
    while a != NIL and b != NIL:
        if priority(a) > priority(b):
            node = a
            a = nodes[a, RIGHT]
            hang_right = True
        else:
            node = b
            b = nodes[b, LEFT]
            hang_right = False
        if parent == NIL:
            root = node
        elif parent_right:
            nodes[parent, RIGHT] = node
        else:
            nodes[parent, LEFT] = node
        stack[count] = node
        count += 1
        parent = node
        parent_right = hang_right
    rest = a if a != NIL else b
    if parent_right:
        nodes[parent, RIGHT] = rest
    else:
        nodes[parent, LEFT] = rest
    _fix_sizes(stack, count, nodes)
    return root


@plain_njit
def _hang(root, parent, went_left, t, nodes):
    """The root once subtree t hangs where a descent from it stopped (the `went_left` child of
    `parent`; t becomes the root when parent is NIL)."""
    if parent == NIL:
        return t
    if went_left:
        nodes[parent, LEFT] = t
    else:
        nodes[parent, RIGHT] = t
    return root


@plain_njit
def insert(root, x, nodes, stack, points, games, last, id_offsets, id_bytes):
    """Put player x (not in the tree) into the tree; returns the new root."""
    node = x + 1
    node_priority = priority(node)
    parent = NIL
    went_left = False
    t = root
    px, gx, lx = points[x], games[x], last[x]
    while t != NIL and priority(t) > node_priority:
        nodes[t, SIZE] += 1
        parent = t
        went_left = node_precedes(px, gx, lx, x, t, nodes, games, last, id_offsets, id_bytes)
        t = nodes[t, LEFT] if went_left else nodes[t, RIGHT]
    low, high = split(t, x, nodes, stack, points, games, last, id_offsets, id_bytes)
    nodes[node, LEFT] = low
    nodes[node, RIGHT] = high
    nodes[node, SIZE] = 1 + nodes[low, SIZE] + nodes[high, SIZE]
    nodes[node, POINTS] = px
    return _hang(root, parent, went_left, node, nodes)


@plain_njit
def remove(root, x, nodes, stack, points, games, last, id_offsets, id_bytes):
    """Take player x (in the tree, with the key it was inserted with) out; returns the new root."""
    node = x + 1
    parent = NIL
    went_left = False
    t = root
    px, gx, lx = points[x], games[x], last[x]
    while t != node:
        if t == NIL:
            raise ValueError("eagle table: removing a player who is not in the tree")
        nodes[t, SIZE] -= 1
        parent = t
        went_left = node_precedes(px, gx, lx, x, t, nodes, games, last, id_offsets, id_bytes)
        t = nodes[t, LEFT] if went_left else nodes[t, RIGHT]
    joined = merge(nodes[node, LEFT], nodes[node, RIGHT], nodes, stack)
    nodes[node, LEFT] = NIL
    nodes[node, RIGHT] = NIL
    nodes[node, SIZE] = 0
    nodes[node, POINTS] = 0
    return _hang(root, parent, went_left, joined, nodes)


@plain_njit
def rank(root, x, limit, nodes, points, games, last, id_offsets, id_bytes):
    """Number of players in the tree that precede player x (x's 0-based position when present),
    or `limit` when that number is `limit` or more (a position beyond it is not needed)."""
    node = x + 1
    before = 0
    t = root
    px, gx, lx = points[x], games[x], last[x]
    while t != NIL and before < limit:
        if t == node:
            before += nodes[nodes[t, LEFT], SIZE]
            break
        if node_precedes(px, gx, lx, x, t, nodes, games, last, id_offsets, id_bytes):
            t = nodes[t, LEFT]
        else:
            before += nodes[nodes[t, LEFT], SIZE] + 1
            t = nodes[t, RIGHT]
    return min(before, limit)


@njit(cache=True)
def in_order(root, nodes, stack):
    """The players in the tree in table order (stack needs the tree's height + 1 entries)."""
    out = np.empty(nodes[root, SIZE], dtype=np.int32)
    count = 0
    depth = 0
    t = root
    while t != NIL or depth > 0:
        while t != NIL:
            stack[depth] = t
            depth += 1
            t = nodes[t, LEFT]
        depth -= 1
        t = stack[depth]
        out[count] = t - 1
        count += 1
        t = nodes[t, RIGHT]
    return out


@njit(cache=True)
def build(players, nodes, stack, points, games, last, id_offsets, id_bytes):
    """A tree holding `players` (cleared arrays in, root out)."""
    root = NIL
    for i in range(players.shape[0]):
        root = insert(root, players[i], nodes, stack, points, games, last, id_offsets, id_bytes)
    return root


@plain_njit
def rightmost(root, nodes):
    """The last player in the tree (NIL - 1 = -1 when empty)."""
    t = root
    while t != NIL and nodes[t, RIGHT] != NIL:
        t = nodes[t, RIGHT]
    return t - 1


@plain_njit
def count_more_points(root, value, nodes):
    """Number of players in the tree with more than `value` points."""
    count = 0
    t = root
    while t != NIL:
        if nodes[t, POINTS] > value:
            count += nodes[nodes[t, LEFT], SIZE] + 1
            t = nodes[t, RIGHT]
        else:
            t = nodes[t, LEFT]
    return count
