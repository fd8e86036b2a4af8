"""Gradient-boosted trees scored in pure Python from plain data.

A model is ``{"features": [...], "base": b, "rate": r, "trees": [tree, ...]}``
where each tree is ``{"feature": [...], "threshold": [...], "left": [...],
"right": [...], "value": [...]}`` (node arrays; ``left == -1`` marks a leaf).
The score is ``sigmoid(base + rate * sum(tree value at the sample's leaf))``,
as scikit-learn's binary gradient boosting classifiers compute it; training
(``scrapy_detemplate.train_combined``) needs scikit-learn, scoring does not.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from scrapy_detemplate._compiled import load

#: The compiled scorer (``_site.pyx``), or ``None``: :meth:`Forest.compiled` scores.
_compiled = load("scrapy_detemplate.methods._site")


class Forest:
    """A boosted ensemble of regression trees over fixed feature vectors."""

    __slots__ = ("base", "features", "rate", "trees")

    def __init__(self, data: dict[str, Any]) -> None:
        try:
            self.features: tuple[str, ...] = tuple(data["features"])
            self.base = float(data["base"])
            self.rate = float(data["rate"])
            self.trees = [
                (list(t["feature"]), [float(x) for x in t["threshold"]], list(t["left"]), list(t["right"]),
                 [float(x) for x in t["value"]])
                for t in data["trees"]
            ]  # fmt: skip
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a forest model: {exc!r}") from exc
        for k, tree in enumerate(self.trees):
            problem = tree_problem(tree, len(self.features))
            if problem:
                raise ValueError(f"not a forest model: tree {k}: {problem}")

    def probability(self, x: Sequence[float]) -> float:
        """The reference scorer: walk every tree."""
        total = self.base
        for feature, threshold, left, right, value in self.trees:
            node = 0
            while left[node] != -1:
                node = left[node] if x[feature[node]] <= threshold[node] else right[node]
            total += self.rate * value[node]
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, total))))

    def compiled(self) -> Callable[[Sequence[float]], float]:
        """The same function as :meth:`probability`, as nested ``if``s: several times faster.

        The source is generated from the model's numbers only (``int`` feature
        indexes, ``float`` thresholds and values, written with ``repr``), so a
        model file cannot inject code.
        """
        # The row is unpacked into locals once: a local is cheaper to read than x[i].
        names = ", ".join(f"x{i}" for i in range(len(self.features)))
        lines = ["def total(x):", f"    {names}, = x", f"    t = {self.base!r}"]
        for feature, threshold, left, right, value in self.trees:
            # Depth first without recursion: ("node", id, indent) or ("else", -, indent).
            stack: list[tuple[str, int, int]] = [("node", 0, 1)]
            while stack:
                kind, node, indent = stack.pop()
                pad = "    " * indent
                if kind == "else":
                    lines.append(f"{pad}else:")
                elif left[node] == -1:
                    lines.append(f"{pad}t += {self.rate * value[node]!r}")
                else:
                    lines.append(f"{pad}if x{int(feature[node])} <= {float(threshold[node])!r}:")
                    stack += [("node", right[node], indent + 1), ("else", -1, indent), ("node", left[node], indent + 1)]
        source = "\n".join(lines) + "\n    return t\n"
        namespace: dict[str, Any] = {}
        exec(compile(source, "<forest>", "exec"), namespace)  # numbers only, see above
        total = namespace["total"]

        def probability(x: Sequence[float]) -> float:
            return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, total(x)))))

        return probability

    def scorer(self) -> Callable[[Sequence[Sequence[float]]], list[float]]:
        """:meth:`probability` of many rows at once, the same floats: compiled (the trees as C
        arrays, ``_site.pyx``) when it is built and can hold the model, else :meth:`compiled` row by row."""
        if _compiled is not None and not _compiled.unfit(self):
            scorer: Callable[[Sequence[Sequence[float]]], list[float]] = _compiled.ForestScorer(self).probabilities
            return scorer
        one = self.compiled()

        def probabilities(rows: Sequence[Sequence[float]]) -> list[float]:
            return [one(x) for x in rows]

        return probabilities


def tree_problem(tree: tuple[list[Any], list[float], list[Any], list[Any], list[float]], features: int) -> str:
    """Why a tree's node arrays cannot be walked ("" when they can): arrays of different lengths,
    a child that is not a node, the root or a node reached twice (with every other node the
    child of one node at most, and the root of none, every walk from the root ends), a feature
    out of range.  scikit-learn's trees always pass; a hand-edited or corrupt file may not."""
    feature, threshold, left, right, value = tree
    n = len(left)
    if not (n and len(feature) == len(threshold) == len(right) == len(value) == n):
        return "node arrays of different lengths"
    reached: set[int] = set()
    for node in range(n):
        low, high = left[node], right[node]
        if low == -1:
            continue
        if not (type(low) is int and type(high) is int and 0 < low < n and 0 < high < n):
            return f"node {node}'s children are not nodes of the tree"
        if low in reached or high in reached or low == high:
            return "a node is reached twice"  # a walk could loop, or grow without bound
        reached.update((low, high))
        if type(feature[node]) is not int or not 0 <= feature[node] < features:
            return f"node {node}'s feature {feature[node]!r} is not one"
    return ""


def mean_forest(a: Forest, b: Forest, scale: float = 1.0, shift: float = 0.0) -> Forest:
    """One forest whose log-odds are the mean of ``a``'s and ``b``'s (the same features), times
    ``scale``, plus ``shift``: both sets of trees, each tree's values times its forest's rate,
    halved, times ``scale``; the mean of the bases, so scaled and shifted.  Scored as one forest,
    the compiled scorer walks both sets in one pass, and the scale and shift cost nothing."""
    if a.features != b.features:
        raise ValueError("the two forests were trained on different features")
    trees = [
        {"feature": feature, "threshold": threshold, "left": left, "right": right,
         "value": [v * forest.rate / 2.0 * scale for v in value]}
        for forest in (a, b)
        for feature, threshold, left, right, value in forest.trees
    ]  # fmt: skip
    base = (a.base + b.base) / 2.0 * scale + shift
    return Forest({"features": a.features, "base": base, "rate": 1.0, "trees": trees})
