"""Strings for JSON Schema patterns: whatever comes back must match; unsupported patterns give None."""

from __future__ import annotations

import re

import pytest

from scanner.probes.patterns import string_for_pattern


@pytest.mark.parametrize("pattern", [
    r"^[A-Z]{3}$", r"^\d{4}-\d{2}-\d{2}$", r"^[a-z0-9-]+/[a-z0-9._-]+$", r"^v?\d+\.\d+\.\d+$",
    r"^(feat|fix|chore): .+$", r"[^abc]+", r"^gh[pousr]_[A-Za-z0-9]{36}$", r"^(?:[a-z]+_)*[a-z]+$", r"^\w+@\w+$",
    r"ab{2,}c?", r"^\s*\S+$",
])
def test_generated_string_matches(pattern: str) -> None:
    text = string_for_pattern(pattern)
    assert text is not None
    assert re.search(pattern, text)


@pytest.mark.parametrize("pattern", [r"^(?=x)y$", r"(a)\1", r"[", r"^\p{L}+$"])
def test_unsupported_or_invalid_patterns_give_none(pattern: str) -> None:
    assert string_for_pattern(pattern) is None
