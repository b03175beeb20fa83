"""Helpers of the `vet` tests: the `expect:` markers of the fixture corpus (tests/fixtures/vet/README.md)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from scanner.vet import VetOptions, vet_tree
from scanner.vet.model import VetResult

CORPUS = Path(__file__).resolve().parent / "fixtures" / "vet"
MARKER = re.compile(r"expect:((?:\s+[A-Z0-9_]+(?:@(?:high|medium|low))?)+)")

Expected = Counter[tuple[str, int, str, str]]


def expected_of(root: Path) -> Expected:
    """(file, line, rule, confidence) for every marker under root; a rule named twice on a line is expected twice."""
    found: Expected = Counter()
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix not in (".ts", ".tsx", ".js", ".mjs", ".cjs", ".py"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = MARKER.search(line)
            for item in (match.group(1).split() if match else []):
                rule, _, confidence = item.partition("@")
                found[(path.relative_to(root).as_posix(), number, rule, confidence or "high")] += 1
    return found


def actual_of(result: VetResult) -> Expected:
    return Counter((f.file, f.line, f.rule_id, f.confidence) for f in result.findings)


def vet(root: Path, **options: object) -> VetResult:
    return vet_tree(root, VetOptions(**options))  # type: ignore[arg-type]
