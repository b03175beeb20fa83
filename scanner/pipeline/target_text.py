"""A TARGET's text refused before anything reads it as a path: an empty or blank one (`scan "$TARGET"` with the
variable unset) is `Path('')`, the working directory, which was scanned, or taken for a plugin, in its place: the
report then vetted the caller's own folder under the name of the server it meant, and could pass."""

from __future__ import annotations

from scanner.errors import UsageError


def refuse_blank_target(text: str) -> None:
    if not text.strip():
        raise UsageError(f"TARGET {text!r} is empty (an unset variable?); give npm:NAME, pypi:NAME, docker:IMAGE or "
                         "a path (. for this folder)")
