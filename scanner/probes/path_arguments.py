"""Paths for generated arguments: which parameters take a path, and which seeded path each one gets.

A tool that reads or changes things gets existing seed paths (each parameter another one), a tool that creates
things gets new paths under the workspace; git tools get the seeded repository, JSON tools a JSON file."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sandbox.run.workspace_seed import SeedManifest
from scanner.vocabulary import CREATING_VERBS
from scanner.probes.arguments import (
    DEST_WORDS,
    DIR_WORDS,
    GIT_WORDS,
    LISTING_WORDS,
    NOT_PATH_WORDS,
    PATH_WORDS,
    SOURCE_WORDS,
    URL_WORDS,
)
from scanner.probes.schema_reading import schema_type
from scanner.probes.tooldef import tool_name
from scanner.vocabulary import name_words

_PATH_DESCRIPTION = re.compile(r"\b(path|file|files|directory|folder|dir)\b", re.IGNORECASE)
_FILE_WORDS = frozenset({"file", "files", "filename", "filepath", "filenames"})


def is_path_like(name: str, schema: dict[str, Any], tool_words: tuple[str, ...] = ()) -> bool:
    """A string parameter whose name (or, for a neutral name, description) says path, file, dir or folder; or a
    source/destination parameter of a tool whose name says file, path or directory (move_file(source, destination))."""
    if schema_type(schema) not in ("string", "array") or isinstance(schema.get("format"), str):
        return False
    words = set(name_words(name))
    if words & PATH_WORDS or (words & (SOURCE_WORDS | DEST_WORDS) and set(tool_words) & PATH_WORDS):
        return True
    description = schema.get("description")
    return (bool(words) and not words & NOT_PATH_WORDS and not words & URL_WORDS
            and isinstance(description, str) and bool(_PATH_DESCRIPTION.search(description)))


def tool_creates(tool_words: tuple[str, ...]) -> bool:
    """The tool's name says it makes new things (its paths should be new ones)."""
    return bool(set(tool_words) & CREATING_VERBS)


@dataclass
class PathPicker:
    """The seeded paths one tool call's parameters get; each parameter a path the call has not used yet."""

    manifest: SeedManifest
    tool_words: tuple[str, ...]
    creates: bool  # the tool makes new things: paths should be new
    used_paths: list[str] = field(default_factory=list)

    @classmethod
    def for_tool(cls, tool: dict[str, Any], manifest: SeedManifest) -> PathPicker:
        words = tuple(name_words(tool_name(tool)))
        return cls(manifest=manifest, tool_words=words, creates=tool_creates(words))

    def path_for(self, name: str) -> str:
        """An existing seed path for tools that read or change things, a new one for tools that create them; the
        seeded git repository for git tools, a JSON file for JSON tools."""
        words = set(name_words(name))
        context_words = words | set(self.tool_words)
        names_file = bool(words & _FILE_WORDS)
        wants_dir = bool(words & DIR_WORDS) or (not names_file and bool(set(self.tool_words) & LISTING_WORDS))
        if words & DEST_WORDS or (self.creates and not words & SOURCE_WORDS):
            suffix = "" if wants_dir else ".txt"
            path = self.manifest.new_path(f"{self._slug()}-{name or 'arg'}-{len(self.used_paths) + 1}{suffix}")
        elif context_words & GIT_WORDS and not names_file:
            path = self.manifest.git_repo
        else:
            pool = self._existing_pool(wants_dir=wants_dir, json="json" in context_words)
            path = next((candidate for candidate in pool if candidate not in self.used_paths), pool[0])
        self.used_paths.append(path)
        return path

    def _existing_pool(self, *, wants_dir: bool, json: bool) -> list[str]:
        if wants_dir:
            return [self.manifest.root, *self.manifest.dirs]
        if json:
            return [*self.manifest.json_files, *self.manifest.files]
        return [self.manifest.small_text_file(), *self.manifest.files]

    def _slug(self) -> str:
        return "-".join(self.tool_words)[:40] or "tool"
