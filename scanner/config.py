"""User config: `mcp-sandbox.toml`, or `[tool.mcp-sandbox]` in pyproject.toml, to disable rules and ignore pairs.

    disable = ["S2", "tool-naming", "P3"]    # rule ids or names, of any family (S, P, B, I, FX)
    ignore = ["S7:list_everything", "S5:*"]  # rule:tool pairs; `*` for any tool (including server-level)

Every command that reports findings passes them through `Config.apply_to(report)`, whichever family produced them.
A suppressed finding is not dropped: it moves to `report.suppressed` with the entry that matched, and counts in no
verdict, score or exit code.

The repo under test cannot silence the scanner: a config discovered in the working directory (the repo being vetted
may ship one) cannot suppress an error-level security finding (a rule of category security, at severity error: the
findings that block). Such an entry is refused and recorded in `report.config.refused`; the finding stays active.
Only a config given explicitly with `--config PATH` can suppress those.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanner.errors import UsageError
from scanner.report.severity import Severity
from sandbox.core.untrusted import escape_for_terminal

if TYPE_CHECKING:  # the report model is imported when a finding is weighed, the rule registry also when an entry is
    # read: the CLI loads the config before its head start begins (scanner/pipeline/head_start.py)
    from scanner.report.model import ConfigInfo, Finding, RefusedSuppression, Report, SuppressedFinding

CONFIG_FILE = "mcp-sandbox.toml"
PYPROJECT = "pyproject.toml"
TABLE = "tool.mcp-sandbox"
KNOWN_KEYS = frozenset({"disable", "ignore"})
MAX_CONFIG_BYTES = 1_048_576
MAX_ENTRIES = 10_000
MAX_SHOWN = 80  # characters of an untrusted value quoted in an error line
MAX_PATH_SHOWN = 1_000  # characters of the config's path in a report (escaped: the folder may be the repo's)
REFUSED_REASON = ("not suppressed: {config} was discovered in the working directory; pass it with --config to "
                  "suppress error-level security findings")


def is_protected(finding: Finding) -> bool:
    """An error-level security finding (its rule's category in the registry, or its own, is security): only an
    explicit `--config` may suppress it."""
    from scanner.rules.registry import lookup

    rule = lookup(finding.rule_id)
    security = finding.category == "security" or (rule is not None and rule.category == "security")
    return security and finding.severity == Severity.ERROR


@dataclass(frozen=True)
class Applied:
    """A config applied to findings: those that count, those it suppressed, and the suppressions it was refused."""

    active: list[Finding]
    suppressed: list[SuppressedFinding]
    refused: list[RefusedSuppression]


@dataclass(frozen=True)
class Config:
    disabled: frozenset[str] = frozenset()
    ignored: frozenset[tuple[str, str]] = field(default_factory=frozenset)
    source: str | None = None  # how the config is named in messages: its file, plus the table in a pyproject.toml
    path: str | None = None
    table: str | None = None
    sha256: str | None = None
    explicit: bool = False  # given with --config; a discovered config cannot suppress error-level security findings

    def ignores(self, rule_id: str, tool: str | None) -> bool:
        return (rule_id, "*") in self.ignored or (tool is not None and (rule_id, tool) in self.ignored)

    def entry_for(self, finding: Finding) -> str | None:
        """The entry that matches this finding (`disable "S2"`, `ignore "S8:*"`), or None."""
        if finding.rule_id in self.disabled:
            return f'disable "{finding.rule_id}"'
        if finding.tool is not None and (finding.rule_id, finding.tool) in self.ignored:
            return f'ignore "{finding.rule_id}:{escape_for_terminal(finding.tool, limit=200)}"'
        if (finding.rule_id, "*") in self.ignored:
            return f'ignore "{finding.rule_id}:*"'
        return None

    def may_suppress(self, finding: Finding) -> bool:
        return self.explicit or not is_protected(finding)

    def keeps(self, finding: Finding) -> bool:
        """False for a finding this config suppresses (a refused suppression keeps it)."""
        return self.entry_for(finding) is None or not self.may_suppress(finding)

    def split(self, findings: Iterable[Finding]) -> Applied:
        """Each finding active, suppressed (with the entry that matched) or active with its suppression refused."""
        from scanner.report.model import RefusedSuppression, SuppressedFinding, Suppression

        applied = Applied([], [], [])
        shown = escape_for_terminal(self.source or "config", limit=MAX_PATH_SHOWN)  # a path of the repo under test
        for finding in findings:
            entry = self.entry_for(finding)
            if entry is None:
                applied.active.append(finding)
            elif self.may_suppress(finding):
                suppression = Suppression(config=shown, entry=entry)
                applied.suppressed.append(SuppressedFinding(**dict(finding), suppression=suppression))
            else:
                applied.active.append(finding)
                applied.refused.append(RefusedSuppression(
                    rule_id=finding.rule_id, tool=finding.tool, entry=entry,
                    reason=REFUSED_REASON.format(config=shown)))
        return applied

    def apply(self, findings: Iterable[Finding]) -> list[Finding]:
        """The findings that still count, in their order."""
        return self.split(findings).active

    def apply_to(self, report: Report) -> None:
        """Suppress in place: the report's findings are those that count, the suppressed ones move to
        `report.suppressed` and `report.config` names this config and any suppression it was refused. Call it
        before the score and verdict are computed; a report with no config in use is left as it is."""
        if self.source is None and not self.disabled and not self.ignored:
            return
        applied = self.split(report.findings)
        report.findings = applied.active
        report.suppressed.extend(applied.suppressed)
        info = self.info([*(report.config.refused if report.config else []), *applied.refused],
                         self.unmatched(report))
        if info is not None:
            report.config = info

    def unmatched(self, report: Report) -> list[str]:
        """The `ignore` entries naming a tool the report neither lists nor has a finding about (a typo suppresses
        nothing, silently); none when no tools were listed (there is nothing to tell a typo from)."""
        if not report.tools:
            return []
        names = {tool.get("name") for tool in report.tools if isinstance(tool, dict)}
        names |= {finding.tool for finding in [*report.findings, *report.suppressed]}
        return sorted(f'ignore "{rule}:{escape_for_terminal(tool, limit=200)}"' for rule, tool in self.ignored
                      if tool != "*" and tool not in names)

    def info(self, refused: list[RefusedSuppression], unmatched: list[str] | None = None) -> ConfigInfo | None:
        """The config as a report names it, with the suppressions it was refused and the entries that name no tool;
        None for a config built in code, not read from a file (there is no file to name)."""
        if self.source is None:
            return None
        from scanner.report.model import ConfigInfo

        path = escape_for_terminal(self.path or self.source, limit=MAX_PATH_SHOWN)
        return ConfigInfo(path=path, table=self.table, sha256=self.sha256 or "", explicit=self.explicit,
                          refused=refused, unmatched=unmatched or [])


def _shown(value: object) -> str:
    return escape_for_terminal(repr(value), limit=MAX_SHOWN)


def _rule_id(key: object, where: str) -> str:
    from scanner.rules.registry import lookup

    rule = lookup(key) if isinstance(key, str) else None
    if rule is None:
        raise UsageError(f"{where}: unknown rule {_shown(key)}; run `mcp-sandbox rules` to list every rule's id and "
                         "name")
    return rule.id


def _string_list(table: dict[str, Any], key: str, where: str) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where}: `{key}` must be a list of strings")
    if len(value) > MAX_ENTRIES:
        raise UsageError(f"{where}: `{key}` has {len(value):,} entries; at most {MAX_ENTRIES:,} are read")
    return value


def parse(entries: dict[str, Any], where: str, *, path: str | None = None, table: str | None = None,
          sha256: str | None = None, explicit: bool = False) -> Config:
    """Build a Config from its TOML table, naming the config (`where`) in every error; the keywords say which file
    (and table) it came from and whether it was given with --config."""
    unknown = sorted(set(entries) - KNOWN_KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {escape_for_terminal(', '.join(unknown), limit=200)}; allowed: "
                         "disable, ignore")
    disabled = frozenset(_rule_id(key, where) for key in _string_list(entries, "disable", where))
    ignored: set[tuple[str, str]] = set()
    for pair in _string_list(entries, "ignore", where):
        rule, sep, tool = pair.partition(":")
        if not sep or not tool:
            raise UsageError(f"{where}: ignore entry {_shown(pair)} must look like RULE:TOOL (e.g. S7:list_users)")
        ignored.add((_rule_id(rule, where), tool))
    return Config(disabled, frozenset(ignored), where, path=path, table=table, sha256=sha256, explicit=explicit)


def _read_toml(path: Path) -> tuple[dict[str, Any], str]:
    """The file's TOML document and the sha256 of its bytes."""
    import tomllib  # only when there is a config to read: a command without one does not load the parser

    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise UsageError(f"config {path} is {size:,} bytes; a config over {MAX_CONFIG_BYTES:,} bytes is not read")
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read config {path}: {exc.strerror or exc}") from exc
    try:
        return tomllib.loads(data.decode("utf-8")), hashlib.sha256(data).hexdigest()
    except UnicodeDecodeError as exc:
        raise UsageError(f"config {path} is not UTF-8 text (byte {exc.start}); save it as UTF-8 TOML") from exc
    except ValueError as exc:  # TOMLDecodeError, and an integer past Python's digit limit
        raise UsageError(f"config {path} is not valid TOML: {escape_for_terminal(str(exc), limit=200)}") from exc
    except RecursionError:
        raise UsageError(f"config {path} is nested too deeply to read") from None


def _pyproject_table(data: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """[tool.mcp-sandbox] of a pyproject.toml: None when absent; a usage error when `tool` or it is no table."""
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise UsageError(f"config {path}: `tool` must be a table")
    table = tool.get("mcp-sandbox")
    if table is not None and not isinstance(table, dict):
        raise UsageError(f"config {path}: `tool.mcp-sandbox` must be a table ([tool.mcp-sandbox])")
    return table


def _load_file(path: Path, explicit: bool) -> Config:
    data, digest = _read_toml(path)
    if path.name != PYPROJECT:
        return parse(data, str(path), path=str(path), sha256=digest, explicit=explicit)
    table = _pyproject_table(data, path)
    if table is None:
        if explicit:
            raise UsageError(f"config {path} has no [{TABLE}] table; add one, or pass an {CONFIG_FILE} to --config")
        return Config()
    return parse(table, f"{path} [{TABLE}]", path=str(path), table=TABLE, sha256=digest, explicit=explicit)


def load(path: Path | None = None, cwd: Path | None = None) -> Config:
    """The explicit config file, else ./mcp-sandbox.toml, else [tool.mcp-sandbox] in ./pyproject.toml, else none.

    Only the explicit one may suppress error-level security findings (see the module docstring)."""
    if path is not None:
        try:
            exists, regular = path.exists(), path.is_file()
        except OSError as exc:
            raise UsageError(f"cannot read config {path}: {exc.strerror or exc}") from exc
        if not exists:
            raise UsageError(f"config file {path} does not exist; pass an existing file to --config")
        if not regular:
            raise UsageError(f"config {path} is not a regular file (a folder, a pipe or a device); pass a TOML file "
                             "to --config")
        return _load_file(path, explicit=True)
    try:
        base = cwd or Path.cwd()
        has_config, has_pyproject = (base / CONFIG_FILE).is_file(), (base / PYPROJECT).is_file()
    except OSError as exc:
        raise UsageError(f"cannot look for {CONFIG_FILE} in the current folder ({exc.strerror or exc}); run from a "
                         "readable folder or pass --config FILE") from exc
    if has_config:
        return _load_file(base / CONFIG_FILE, explicit=False)
    if has_pyproject:
        return _load_file(base / PYPROJECT, explicit=False)
    return Config()
