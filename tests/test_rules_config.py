"""Config: mcp-sandbox.toml or [tool.mcp-sandbox] disables rules and ignores rule:tool pairs."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.config import Config, load
from scanner.errors import UsageError
from scanner.rules.static.engine import run_rules

TOOLS = [{"name": "list_users", "description": "Lists users.", "inputSchema": {"type": "object"}},
         {"name": "list_teams", "description": "Lists teams.", "inputSchema": {"type": "object"}}]


def test_disable_and_ignore(tmp_path: Path) -> None:
    (tmp_path / "mcp-sandbox.toml").write_text('disable = ["tool-description-quality"]\nignore = ["S7:list_users"]\n')
    config = load(cwd=tmp_path)
    found = config.apply(run_rules(TOOLS))
    assert not any(f.rule_id == "S1" for f in found)
    assert [f.tool for f in found if f.rule_id == "S7"] == ["list_teams"]
    assert any(f.rule_id == "S1" for f in run_rules(TOOLS))  # the rules ran: the config suppresses, after


def test_pyproject_table_and_wildcard(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname="x"\n[tool.mcp-sandbox]\nignore = ["S13:*"]\n')
    config = load(cwd=tmp_path)
    assert config.source == f"{tmp_path / 'pyproject.toml'} [tool.mcp-sandbox]" and not config.explicit
    assert not any(f.rule_id == "S13" for f in config.apply(run_rules(TOOLS)))
    assert any(f.rule_id == "S13" for f in Config().apply(run_rules(TOOLS)))


def test_no_config_means_defaults(tmp_path: Path) -> None:
    assert load(cwd=tmp_path) == Config()
    (tmp_path / "pyproject.toml").write_text('[project]\nname="x"\n')  # a pyproject without the table: no config
    assert load(cwd=tmp_path) == Config()


@pytest.mark.parametrize("text,needle", [
    ('disable = ["S99"]', "unknown rule"),
    ('ignore = ["S7"]', "RULE:TOOL"),
    ('disable = "S1"', "list of strings"),
    ('frobnicate = 1', "unknown key"),
    ('disable = [', "not valid TOML"),
])
def test_bad_config_is_a_usage_error(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "mcp-sandbox.toml"
    path.write_text(text)
    with pytest.raises(UsageError, match=needle):
        load(path)


@pytest.mark.parametrize("kind", ["folder", "fifo", "device"])
def test_a_config_that_is_no_regular_file_is_said_so(tmp_path: Path, kind: str) -> None:
    """`--config DIR` (or a pipe, a device) was "does not exist", which it does."""
    import os

    path = tmp_path / "c"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    with pytest.raises(UsageError, match="is not a regular file"):
        load(path)
    with pytest.raises(UsageError, match="does not exist"):
        load(tmp_path / "missing.toml")
