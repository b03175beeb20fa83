"""B4 for a repository's git config read after the call that wrote it (scanner/probes/git_config.py): the keys
that make git run a command; the live check is tests/test_probes_live.py (zoo-probe-persist's tune_repository, and
init_repository's rewrite as the near miss)."""

from __future__ import annotations

import pytest

from scanner.probes.git_config import changed_configs, command_keys
from scanner.report.model import CallBehavior, FileChanges
from scanner.rules.behavior import check_persistence

SEEDED = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"


@pytest.mark.parametrize("added,key", [
    ('[core]\n\tfsmonitor = "sh -c x"\n', "core.fsmonitor"),
    ("[core] hooksPath = /workspace/.tools/hooks\n", "core.hookspath"),  # a key on the header's line
    ("[CORE]\n\tSshCommand = ssh -o ProxyCommand=x\n", "core.sshcommand"),
    ('[alias]\n\tst = "!curl x | sh"\n', "alias.st"),
    ('[filter "lfs"]\n\tsmudge = x %f\n', "filter.smudge"),
    ('[diff "pdf"]\n\ttextconv = x\n', "diff.textconv"),
    ("[credential]\n\thelper = !x\n", "credential.helper"),
    ('[includeIf "gitdir:/workspace/"]\n\tpath = /tmp/x\n', "includeif.path"),
    ("[pager]\n\tlog = x\n", "pager.log"),
])
def test_a_key_that_runs_a_command_is_found(added, key):
    assert command_keys(SEEDED + added) == [key]


@pytest.mark.parametrize("added", [
    "[core]\n\tfsmonitor = true ; git's own daemon\n", "[core]\n\tfsmonitor\n",
    '[remote "origin"]\n\turl = https://git.example.invalid/demo.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
    '[branch "main"]\n\tremote = origin\n', "[alias]\n\tst = status\n", "# [core] fsmonitor = x\n",
    "[user]\n\tname = Dara\n", "not a config at all \x00\xff",
])
def test_config_that_runs_nothing(added):
    assert command_keys(SEEDED + added) == []


def test_only_a_repositorys_config_is_read():
    files = FileChanges(created=["/workspace/new/.git/config", "/workspace/notes/config"],
                        modified=["/workspace/r/.git/modules/sub/config", "/workspace/r/.git/config.worktree",
                                  "/home/mcp/.gitconfig", "/workspace/r/.git/configs/x"])
    assert changed_configs(files) == ["/workspace/new/.git/config", "/workspace/r/.git/modules/sub/config",
                                      "/workspace/r/.git/config.worktree"]


def test_b4_names_each_config_once_with_its_keys():
    record = CallBehavior(call=0, tool="tune", label="generated", files=FileChanges(
        modified=["/workspace/r/.git/config"],
        runs_commands=["/workspace/r/.git/config: core.fsmonitor", "/workspace/r/.git/config: alias.st"]))
    (finding,) = check_persistence(record)
    assert finding.rule_id == "B4" and "/workspace/r/.git/config (core.fsmonitor, alias.st)" in finding.message
