"""The CLI turns off pydantic's plugin search (an entry-point scan of every installed distribution, 15-25 ms of each
command that makes a report) unless the user set PYDANTIC_DISABLE_PLUGINS: a real plugin installed beside the CLI
is not loaded by `check`, and is loaded when the user asks for plugins by setting the variable to nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PLUGIN = """
import os
from pathlib import Path
Path(os.environ["PLUGIN_MARK"]).write_text("loaded")

class Plugin:
    def new_schema_validator(self, *args, **kwargs):
        return None, None, None

plugin = Plugin()
"""


def _check_with_a_plugin(tmp_path: Path, **environ: str) -> bool:
    """Run `check` on a one-tool file with a pydantic plugin installed on the path; whether the plugin was loaded."""
    site = tmp_path / "site"
    info = site / "marking_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: marking-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nmarking = marking_plugin:plugin\n")
    (site / "marking_plugin.py").write_text(PLUGIN)
    (tmp_path / "tools.json").write_text(json.dumps({"tools": [{"name": "get_x", "description": "Get x."}]}))
    mark = tmp_path / "mark"
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")])), PLUGIN_MARK=str(mark),
               **environ)
    result = subprocess.run([sys.executable, "-m", "scanner", "check", "tools.json", "-q", "--fail-on", "never"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return mark.exists()


def test_the_cli_loads_no_pydantic_plugin(tmp_path: Path) -> None:
    assert not _check_with_a_plugin(tmp_path)


def test_a_user_who_sets_the_variable_gets_their_plugins(tmp_path: Path) -> None:
    assert _check_with_a_plugin(tmp_path, PYDANTIC_DISABLE_PLUGINS="")
