"""Maximum matchings for SparStencil's structured-sparsity conversion.

SparStencil turns the crushed kernel matrix A′ into 1:2 (hence 2:4) structured
form by *pairing* columns that never hold a non-zero in the same row; a column
left without a partner is paired with an appended zero column.  Fewest appended
columns = a maximum matching in the *compatibility* graph (the complement of the
paper's column-conflict graph).

* :func:`max_matching` — Edmonds' blossom algorithm, exact on any graph
  (the paper falls back to the Blossom algorithm where its own algorithm does
  not apply).  Written here so that tcadvisor needs no graph library.
* :func:`two_level_matching` — the paper's Hierarchical Two-Level Matching
  (Algorithm 1) for k-staircase matrices: blocks ``s1`` apart are paired whole,
  then the columns of each unpaired block ``s2`` apart, zero columns for the rest.
"""
from __future__ import annotations

from collections import deque
from typing import Sequence


def max_matching(adj: Sequence[Sequence[int]], initial: list[int] | None = None) -> list[int]:
    """A maximum matching of the undirected graph ``adj`` (neighbour lists): ``mate[v]`` or −1.

    Edmonds' algorithm: grow alternating trees from each free vertex by BFS,
    contract odd cycles (blossoms) onto their base, augment along the first
    path found.  O(V³); used on graphs of at most a few thousand vertices.
    ``initial`` is a matching to start from (default: a greedy one).
    """
    n = len(adj)
    mate = list(initial) if initial is not None else [-1] * n
    if initial is None:
        for v in range(n):  # greedy start: most vertices are matched before any search
            if mate[v] == -1:
                for u in adj[v]:
                    if mate[u] == -1 and u != v:
                        mate[u], mate[v] = v, u
                        break

    def augment_from(root: int) -> bool:
        used = [False] * n
        parent = [-1] * n
        base = list(range(n))
        used[root] = True
        queue = deque([root])

        def lca(a: int, b: int) -> int:
            seen = [False] * n
            while True:
                a = base[a]
                seen[a] = True
                if mate[a] == -1:
                    break
                a = parent[mate[a]]
            while True:
                b = base[b]
                if seen[b]:
                    return b
                b = parent[mate[b]]

        def mark(v: int, b: int, child: int, blossom: list[bool]) -> None:
            while base[v] != b:
                blossom[base[v]] = blossom[base[mate[v]]] = True
                parent[v] = child
                child = mate[v]
                v = parent[mate[v]]

        while queue:
            v = queue.popleft()
            for u in adj[v]:
                if base[v] == base[u] or mate[v] == u:
                    continue
                if u == root or (mate[u] != -1 and parent[mate[u]] != -1):
                    b = lca(v, u)
                    blossom = [False] * n
                    mark(v, b, u, blossom)
                    mark(u, b, v, blossom)
                    for i in range(n):
                        if blossom[base[i]]:
                            base[i] = b
                            if not used[i]:
                                used[i] = True
                                queue.append(i)
                elif parent[u] == -1:
                    parent[u] = v
                    if mate[u] == -1:  # augmenting path root … v–u found: flip it
                        while u != -1:
                            pv = parent[u]
                            nxt = mate[pv]
                            mate[u], mate[pv] = pv, u
                            u = nxt
                        return True
                    used[mate[u]] = True
                    queue.append(mate[u])
        return False

    matched = sum(1 for v in range(n) if mate[v] != -1)
    for v in range(n):
        if n - matched <= 1:  # ⌊n/2⌋ pairs: nothing can augment
            break
        if mate[v] == -1 and len(adj[v]) and augment_from(v):
            matched += 2
    return mate


def two_level_matching(blocks: int, block_size: int, k_rows: int, k_cols: int) -> tuple[list[tuple[int, int]], int]:
    """The paper's Hierarchical Two-Level Matching on a self-similar staircase.

    Columns are numbered ``block · block_size + local``.  Level 1 pairs whole
    blocks ``s1 = max(⌊blocks/2⌋, k_rows)`` apart (k-staircase: they never share
    a row); level 2 pairs the columns of each block left over ``s2 =
    max(⌊block_size/2⌋, k_cols)`` apart, and gives every column still alone a
    zero column.  Returns the pairs (a zero column is −1) and the zero-column
    count p.
    """
    s1 = max(blocks // 2, k_rows)
    matched = [False] * blocks
    pairs: list[tuple[int, int]] = []
    for i in range(blocks):
        if not matched[i] and i + s1 < blocks:
            matched[i] = matched[i + s1] = True
            pairs += [(i * block_size + t, (i + s1) * block_size + t) for t in range(block_size)]
    s2 = max(block_size // 2, k_cols)
    zeros = 0
    for x in (b for b in range(blocks) if not matched[b]):
        used = [False] * block_size
        for u in range(block_size):
            if used[u]:
                continue
            v = u + s2
            used[u] = True
            if v < block_size:
                used[v] = True
                pairs.append((x * block_size + u, x * block_size + v))
            else:
                pairs.append((x * block_size + u, -1))
                zeros += 1
    return pairs, zeros


def max_matching_dense(compatible) -> list[int]:
    """A maximum matching of the graph given as a symmetric boolean adjacency matrix.

    A vectorised greedy pass (lowest degree first, each vertex taking its free
    neighbour of lowest degree) usually reaches ⌊n/2⌋ pairs on the dense
    compatibility graphs of column pairing, which proves it maximum; only
    otherwise does Edmonds' algorithm continue from it.
    """
    import numpy as np

    adj = np.asarray(compatible, dtype=bool)
    n = adj.shape[0]
    deg = adj.sum(axis=1)
    free = np.ones(n, dtype=bool)
    mate = [-1] * n
    for v in np.argsort(deg, kind="stable"):
        if not free[v]:
            continue
        cand = np.flatnonzero(adj[v] & free)
        if cand.size:
            u = int(cand[np.argmin(deg[cand])])
            mate[v], mate[u] = u, int(v)
            free[v] = free[u] = False
    if n - 2 * sum(1 for v in range(n) if mate[v] > v) <= 1:
        return mate
    return max_matching([list(np.flatnonzero(row)) for row in adj], initial=mate)
