"""Regularized tree isotonic regression: the smoothing step of PAGELEVEL.

Chakrabarti, Kumar and Punera, "Page-level Template Detection via Isotonic
Smoothing", WWW 2007, Section 4 (Problem 2, Lemma 3, algorithms BUILDERROR and
ISOTONESMOOTH) and Section 5.3 (penalties, hidden small nodes).

Given a tree with classifier scores ``x(i)`` find smoothed scores ``y(i)`` with

    (1)  y(i) <= min{y(j) : j in child(i)}                  (relaxed monotonicity)

that minimise

    (4)  c(y) = sum_i gamma_i * [i = root or y(i) != y(parent(i))]
                + sum_i w_i * |x(i) - y(i)|

The bracket counts the places where the compressed score ``y_hat`` is defined
(a new section starts); ``w_i`` is ``k + 1`` for a node with ``k`` hidden
(rolled-in) small children, the paper's "multiply the distance by (k+1)".

Trees are given as a ``parent`` sequence in pre-order (``parent[0] == -1``,
``parent[i] < i``), so every loop below is iterative: post-order is reversed
pre-order, the top-down pass is pre-order.

Two solvers with one API:

* :func:`build_error` / :func:`isotone_smooth`: the paper's dynamic program as
  written, one candidate value per node ``j in T`` (O(n^2) time and space; the
  paper's O(n^2 log n) heap becomes a sort done once).  The reference.
* :func:`smooth`: the same recurrence over the *distinct* scores only (Lemma 3
  says nothing else is needed), sorted once, with the suffix minimum of step 4
  taken in one sweep and child error arrays summed into their parent as soon as
  they are done.  O(n * m) for ``m`` distinct scores; callers that quantize
  scores to ``L`` levels get O(n * L).  Exact: tests check it against the
  reference and both against a brute force over all feasible assignments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

INF = math.inf

#: Bound on the reference solver's input (it is quadratic in time and space).
MAX_REFERENCE_NODES = 2_000


@dataclass(frozen=True, slots=True)
class Smoothing:
    """Smoothed scores ``y`` and the optimal cost ``c(y)`` of equation (4)."""

    y: list[float]
    cost: float

    def sections(self, parent: Sequence[int]) -> list[int]:
        """Roots of the segments (where the compressed score ``y_hat`` is defined)."""
        return [i for i, p in enumerate(parent) if p < 0 or self.y[i] != self.y[p]]


def _check(parent: Sequence[int], x: Sequence[float], gamma: Sequence[float], w: Sequence[float] | None) -> None:
    n = len(parent)
    if len(x) != n or len(gamma) != n or (w is not None and len(w) != n):
        raise ValueError(f"parent, x, gamma and w must have one entry per node ({n} nodes)")
    for i, p in enumerate(parent):
        if (i == 0) != (p < 0) or p >= i:
            raise ValueError(f"parent must be a pre-order parent array with one root at 0; bad entry {i}: {p}")


def cost(
    parent: Sequence[int],
    x: Sequence[float],
    gamma: Sequence[float],
    y: Sequence[float],
    w: Sequence[float] | None = None,
) -> float:
    """Equation (4) for a given ``y``; ``inf`` when ``y`` breaks constraint (1)."""  # fmt: skip
    total = 0.0
    for i, p in enumerate(parent):
        if p >= 0 and y[i] < y[p]:
            return INF
        if p < 0 or y[i] != y[p]:
            total += gamma[i]
        total += (1.0 if w is None else w[i]) * abs(x[i] - y[i])
    return total


# -- the paper's algorithm, as written ---------------------------------------


def build_error(
    parent: Sequence[int], x: Sequence[float], gamma: Sequence[float], w: Sequence[float] | None = None
) -> tuple[list[list[float]], list[list[int]]]:
    """Algorithm BUILDERROR for every node, bottom-up.

    ``err[i][j]`` is the optimal cost of the subtree of ``i`` when its parent's
    smoothed score is ``x(j)``; ``val[i][j]`` is the node whose score ``i``
    then takes.  For the root, ``err[root][j]`` is the cost with ``y(root) = x(j)``
    (``err'`` of step 3; the root has no parent to continue).
    """
    _check(parent, x, gamma, w)
    n = len(parent)
    if n > MAX_REFERENCE_NODES:
        raise ValueError(f"the reference solver takes at most {MAX_REFERENCE_NODES} nodes, got {n}")
    order = sorted(range(n), key=lambda j: x[j])  # ascending x(j), for step 4
    children: list[list[int]] = [[] for _ in range(n)]
    for i in range(1, n):
        children[parent[i]].append(i)
    err: list[list[float]] = [[] for _ in range(n)]
    val: list[list[int]] = [[] for _ in range(n)]
    for i in reversed(range(n)):  # post-order: children before parents
        wi = 1.0 if w is None else w[i]
        g = gamma[i]
        if not children[i] and i != 0:
            # 1. leaf: a new section at its own score costs gamma, else follow the parent.
            #    err(i, j) = gamma if x(i) - x(j) > gamma, else |x(i) - x(j)|   (times w_i)
            row_e: list[float] = []
            row_v: list[int] = []
            for j in range(n):
                d = wi * abs(x[i] - x[j])
                if x[i] > x[j] and d > g:
                    row_e.append(g)
                    row_v.append(i)
                else:
                    row_e.append(d)
                    row_v.append(j)
            err[i], val[i] = row_e, row_v
            continue
        # 3. err'(j) = |x(i) - x(j)| + sum_{k in child(i)} err(k, j) + gamma
        err1 = [wi * abs(x[i] - x[j]) + g for j in range(n)]
        for c in children[i]:
            ec = err[c]
            for j in range(n):
                err1[j] += ec[j]
            err[c] = []  # only val is needed from here on
        if i == 0:
            err[i] = err1
            val[i] = list(range(n))
            continue
        # 4. val* = argmin_{k : x(k) > x(j)} err'(k); continue with x(j) if err'(j) - gamma < err'(val*)
        row_e = [0.0] * n
        row_v = [0] * n
        best, best_k = INF, -1
        pos = n - 1
        for j in reversed(order):  # descending x(j): the suffix of strictly larger scores grows
            while pos >= 0 and x[order[pos]] > x[j]:
                k = order[pos]
                if err1[k] < best:
                    best, best_k = err1[k], k
                pos -= 1
            if err1[j] - g >= best:
                row_e[j], row_v[j] = best, best_k
            else:
                row_e[j], row_v[j] = err1[j] - g, j
        err[i], val[i] = row_e, row_v
    return err, val


def isotone_smooth(
    parent: Sequence[int], x: Sequence[float], err: list[list[float]], val: list[list[int]]
) -> Smoothing:
    """Algorithm ISOTONESMOOTH: pick the root's best score, then go down the tree.

    p(root) = argmin_j err(root, j);  p(i) = val(i, p(parent(i)));  y(i) = x(p(i)).
    """
    n = len(parent)
    if n == 0:
        return Smoothing([], 0.0)
    root_err = err[0]
    best = min(range(n), key=lambda j: root_err[j])
    p = [0] * n
    p[0] = best
    for i in range(1, n):  # pre-order visits parents first
        p[i] = val[i][p[parent[i]]]
    return Smoothing([x[k] for k in p], root_err[best])


def smooth_reference(
    parent: Sequence[int], x: Sequence[float], gamma: Sequence[float], w: Sequence[float] | None = None
) -> Smoothing:
    """BUILDERROR then ISOTONESMOOTH (the paper's O(n^2) dynamic program)."""
    if not parent:
        return Smoothing([], 0.0)
    err, val = build_error(parent, x, gamma, w)
    return isotone_smooth(parent, x, err, val)


# -- the exact fast variant ------------------------------------------------------


def smooth(
    parent: Sequence[int], x: Sequence[float], gamma: Sequence[float], w: Sequence[float] | None = None
) -> Smoothing:
    """The same dynamic program over the ``m`` distinct scores only: O(n * m).

    By Lemma 3 the optimal ``y`` takes values among the ``x(j)``; duplicates of a
    value have identical ``err`` columns, so one column per distinct value is
    enough.  ``choice[i][v]`` replaces ``val(i, j)``: the level node ``i`` takes
    when its parent is at level ``v``.
    """
    _check(parent, x, gamma, w)
    n = len(parent)
    if n == 0:
        return Smoothing([], 0.0)
    levels = sorted(set(x))
    m = len(levels)
    # acc[i] accumulates sum_{k in child(i)} err(k, .) as children finish.
    acc: list[list[float] | None] = [None] * n
    choice: list[list[int]] = [[] for _ in range(n)]
    root_row: list[float] = []
    for i in reversed(range(n)):
        xi = x[i]
        wi = 1.0 if w is None else w[i]
        g = gamma[i]
        # 3. err'(v) = w_i |x(i) - level_v| + sum_children err(k, v) + gamma_i
        child_sum = acc[i]
        if child_sum is None:
            err1 = [wi * abs(xi - lv) + g for lv in levels]
        else:
            err1 = [wi * abs(xi - lv) + g + s for lv, s in zip(levels, child_sum, strict=True)]
            acc[i] = None
        if i == 0:
            root_row = err1
            break
        # 4. err(i, v) = min(err'(v) - gamma_i, min_{u > v} err'(u)), one descending sweep.
        row = [0.0] * m
        pick = [0] * m
        best, best_u = INF, -1
        for v in range(m - 1, -1, -1):
            stay = err1[v] - g
            if stay < best:
                row[v], pick[v] = stay, v
            else:
                row[v], pick[v] = best, best_u
            if err1[v] < best:
                best, best_u = err1[v], v
        choice[i] = pick
        p = parent[i]
        parent_sum = acc[p]
        if parent_sum is None:
            acc[p] = row
        else:
            for v in range(m):
                parent_sum[v] += row[v]
    # ISOTONESMOOTH: the root's best level, then top-down.
    level = [0] * n
    level[0] = min(range(m), key=lambda v: root_row[v])
    for i in range(1, n):
        level[i] = choice[i][level[parent[i]]]
    return Smoothing([levels[v] for v in level], root_row[level[0]])


def quantize(scores: Sequence[float], steps: int) -> list[float]:
    """Round scores in [0, 1] to ``steps`` equal steps (``steps + 1`` levels) for :func:`smooth`."""
    if steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    return [round(min(1.0, max(0.0, s)) * steps) / steps for s in scores]
