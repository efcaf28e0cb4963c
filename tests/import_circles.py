"""Import circles in a graph of modules: what the layout tests of the launcher and of the lower floors assert
there are none of."""

from __future__ import annotations


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module, or of one importing itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for following in sorted(graph[node]):
            if following not in index:
                visit(following)
                low[node] = min(low[node], low[following])
            elif following in stack:
                low[node] = min(low[node], index[following])
        if low[node] == index[node]:
            part = []
            while True:
                member = stack.pop()
                part.append(member)
                if member == node:
                    break
            if len(part) > 1 or node in graph[node]:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found
