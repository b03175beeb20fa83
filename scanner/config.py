"""User config: `mcp-sandbox.toml`, or `[tool.mcp-sandbox]` in pyproject.toml, to disable rules and ignore pairs.

    disable = ["S2", "tool-naming", "P3"]    # rule ids or names, of any family (S, P, B, I, FX)
    ignore = ["S7:list_everything", "S5:*"]  # rule:tool pairs; `*` for any tool (including server-level)

Every command that reports findings drops them through `Config.apply`, whichever family produced them.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scanner.errors import UsageError
from scanner.report.model import Finding
from scanner.rules.registry import lookup

CONFIG_FILE = "mcp-sandbox.toml"
PYPROJECT = "pyproject.toml"
KNOWN_KEYS = frozenset({"disable", "ignore"})


@dataclass(frozen=True)
class Config:
    disabled: frozenset[str] = frozenset()
    ignored: frozenset[tuple[str, str]] = field(default_factory=frozenset)
    source: str | None = None

    def ignores(self, rule_id: str, tool: str | None) -> bool:
        return (rule_id, "*") in self.ignored or (tool is not None and (rule_id, tool) in self.ignored)

    def keeps(self, finding: Finding) -> bool:
        """False for a finding of a disabled rule or an ignored rule:tool pair."""
        return finding.rule_id not in self.disabled and not self.ignores(finding.rule_id, finding.tool)

    def apply(self, findings: Iterable[Finding]) -> list[Finding]:
        """The findings this config keeps, in their order."""
        return [finding for finding in findings if self.keeps(finding)]


def _rule_id(key: object, where: str) -> str:
    rule = lookup(key) if isinstance(key, str) else None
    if rule is None:
        raise UsageError(f"{where}: unknown rule {key!r}; run `mcp-sandbox rules` to list every rule's id and name")
    return rule.id


def _string_list(table: dict[str, Any], key: str, where: str) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where}: `{key}` must be a list of strings")
    return value


def parse(table: dict[str, Any], where: str) -> Config:
    """Build a Config from its TOML table, naming the file in every error."""
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: disable, ignore")
    disabled = frozenset(_rule_id(key, where) for key in _string_list(table, "disable", where))
    ignored: set[tuple[str, str]] = set()
    for pair in _string_list(table, "ignore", where):
        rule, sep, tool = pair.partition(":")
        if not sep or not tool:
            raise UsageError(f"{where}: ignore entry {pair!r} must look like RULE:TOOL (e.g. S7:list_users)")
        ignored.add((_rule_id(rule, where), tool))
    return Config(disabled, frozenset(ignored), where)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read config {path}: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"config {path} is not valid TOML: {exc}") from exc


def load(path: Path | None = None, cwd: Path | None = None) -> Config:
    """The explicit config file, else ./mcp-sandbox.toml, else [tool.mcp-sandbox] in ./pyproject.toml, else none."""
    if path is not None:
        if not path.is_file():
            raise UsageError(f"config file {path} does not exist; pass an existing file to --config")
        data = _read_toml(path)
        table = data.get("tool", {}).get("mcp-sandbox", data) if path.name == PYPROJECT else data
        return parse(table if isinstance(table, dict) else {}, str(path))
    try:
        base = cwd or Path.cwd()
        has_config, has_pyproject = (base / CONFIG_FILE).is_file(), (base / PYPROJECT).is_file()
    except OSError as exc:
        raise UsageError(f"cannot look for {CONFIG_FILE} in the current folder ({exc.strerror or exc}); run from a "
                         "readable folder or pass --config FILE") from exc
    if has_config:
        return parse(_read_toml(base / CONFIG_FILE), str(base / CONFIG_FILE))
    if has_pyproject:
        table = _read_toml(base / PYPROJECT).get("tool", {}).get("mcp-sandbox")
        if isinstance(table, dict):
            return parse(table, f"{base / PYPROJECT} [tool.mcp-sandbox]")
    return Config()
