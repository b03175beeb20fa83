"""The gitignore-style globs of --ignore and a root's `.mcpvetignore` (`*`, `**`, `?`, a leading `/` anchors, a
trailing `/` is a folder), matched over a posix path relative to the root. The `.mcpvetignore` is the scanned
package's own text, so a glob is not compiled to a backtracking regex (`**a**a**a**b` against a long path takes
hours with `re`): it is matched by a set-of-positions walk, linear in the path per glob element."""

from __future__ import annotations

from dataclasses import dataclass

Element = str  # one character to match literally, or one of the wildcards below
ONE, STAR, ANY, DIRS = "\0?", "\0*", "\0**", "\0**/"  # [^/], [^/]*, .*, (?:.*/)?


@dataclass(frozen=True)
class Glob:
    """A compiled glob: its elements, and whether it is anchored at the root (a leading `/`, or a `/` inside)."""

    elements: tuple[Element, ...]
    anchored: bool

    def match(self, path: str) -> bool:
        """Does the glob match `path`, or a folder `path` lies in?"""
        starts = {0} if self.anchored else {0, *(i + 1 for i, ch in enumerate(path) if ch == "/")}
        ends = _run(self.elements, path, starts)
        return any(end == len(path) or path[end] == "/" for end in ends)


def compile_glob(pattern: str) -> Glob | None:
    """A gitignore-style pattern as a Glob (None for a blank line or a comment)."""
    p = pattern.strip()
    if not p or p.startswith("#"):
        return None
    anchored = p.startswith("/")
    p = p.strip("/")
    if not p:
        return None
    out: list[Element] = []
    i = 0
    while i < len(p):
        if p.startswith("**/", i):
            out.append(DIRS)
            i += 3
        elif p.startswith("**", i):
            out.append(ANY)
            i += 2
        else:
            out.append(STAR if p[i] == "*" else ONE if p[i] == "?" else p[i])
            i += 1
    return Glob(tuple(out), anchored or "/" in p)


def _step(element: Element, path: str, positions: set[int]) -> set[int]:
    """The positions reachable from `positions` by one element."""
    if element == ONE:
        return {p + 1 for p in positions if p < len(path) and path[p] != "/"}
    if element == ANY:
        return set(range(min(positions), len(path) + 1))
    if element == DIRS:
        return positions | {q + 1 for q in range(min(positions), len(path)) if path[q] == "/"}
    if element == STAR:
        reached, active = set(), False
        for q in range(min(positions), len(path) + 1):
            active = q in positions or (active and path[q - 1] != "/")
            if active:
                reached.add(q)
        return reached
    return {p + 1 for p in positions if p < len(path) and path[p] == element}


def _run(elements: tuple[Element, ...], path: str, starts: set[int]) -> set[int]:
    positions = starts
    for element in elements:
        if not positions:
            return positions
        positions = _step(element, path, positions)
    return positions
