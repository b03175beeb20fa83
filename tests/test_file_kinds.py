"""B1 tells the user's data from a tool's own caches and git's bookkeeping (scanner/rules/file_kinds.py), and says
which: an error for user data, an info naming the caches and bookkeeping when that is all a read-only tool changed."""

from __future__ import annotations

import pytest

from scanner.report.model import CallBehavior, FileChanges
from scanner.rules.behavior import check_annotations, evaluate_behavior
from scanner.rules.file_kinds import TOOL_CACHE, USER_DATA, VCS_BOOKKEEPING, classify

REPO = "/workspace/projects/demo-repo"
HOME = "/home/mcp"
READ_ONLY = {"name": "status", "annotations": {"readOnlyHint": True}}


def kinds(**changes: list[str]) -> dict[str, str]:
    return {item.path: item.kind for item in classify(FileChanges(**changes), home=HOME)}


def b1(files: FileChanges, tool: dict = READ_ONLY) -> list:
    return check_annotations(tool, CallBehavior(call=0, tool=tool["name"], label="generated", files=files))


@pytest.mark.parametrize("path,kind", [
    (f"{HOME}/.cache/uv/archive-v0/x/METADATA", TOOL_CACHE),
    (f"{HOME}/.local/state/app/history", TOOL_CACHE),
    (f"{HOME}/.npm/_cacache/index-v5/aa/bb", TOOL_CACHE),
    (f"{HOME}/.npm/_logs/2024-debug-0.log", TOOL_CACHE),
    ("/workspace/src/app/__pycache__/main.cpython-313.pyc", TOOL_CACHE),
    ("/workspace/web/node_modules/.cache/babel/x.json", TOOL_CACHE),
    ("/workspace/.pytest_cache/v/cache/lastfailed", TOOL_CACHE),
    (f"{REPO}/.git/index.lock", VCS_BOOKKEEPING),
    (f"{REPO}/.git/refs/heads/main.lock", VCS_BOOKKEEPING),
    (f"{REPO}/.git/FETCH_HEAD", VCS_BOOKKEEPING),
    (f"{REPO}/.git/ORIG_HEAD", VCS_BOOKKEEPING),
    (f"{REPO}/.git/logs/HEAD", VCS_BOOKKEEPING),
    (f"{REPO}/.git/objects/ab/cdef0123", VCS_BOOKKEEPING),
    (f"{REPO}/.git/modules/lib/index.lock", VCS_BOOKKEEPING),
    # near misses: the user's data, wherever it sits
    ("/workspace/notes/todo.txt", USER_DATA),
    ("/workspace/yarn.lock", USER_DATA),  # a project's lock file is the user's
    ("/workspace/src/app/__pycache__/notes.txt", USER_DATA),  # only byte-code is the cache
    (f"{HOME}/.npm/etc/npmrc", USER_DATA),
    (f"{HOME}/.local/share/app/db.sqlite", USER_DATA),  # XDG data, not cache or state
    (f"{HOME}/.cache-of-mine/x", USER_DATA),
    (f"{REPO}/.git/HEAD", USER_DATA),
    (f"{REPO}/.git/config", USER_DATA),
    (f"{REPO}/.git/refs/heads/main", USER_DATA),
    (f"{REPO}/.git/packed-refs", USER_DATA),
    (f"{REPO}/.git/hooks/pre-commit", USER_DATA),  # persistence (B4), never bookkeeping
    (f"{REPO}/.git/hooks/pre-commit.sample", USER_DATA),
    (f"{REPO}/.git/MERGE_HEAD", USER_DATA),
    (f"{HOME}/.cache/x/sitecustomize.py", USER_DATA),  # a Python start-up hook stays one
    ("/workspace/not.git/index", USER_DATA),
])
def test_each_path_has_its_kind(path, kind):
    assert kinds(created=[path]) == {path.replace(HOME, "~", 1): kind}


def test_the_git_index_is_judged_by_what_the_snapshot_saw_of_its_content():
    index = f"{REPO}/.git/index"
    assert kinds(modified=[index]) == {index: VCS_BOOKKEEPING}  # same size, no new objects: a stat refresh
    assert kinds(modified=[index], resized=[index]) == {index: USER_DATA}  # `git add`, `git rm --cached`
    staged = kinds(modified=[index], created=[f"{REPO}/.git/objects/12", f"{REPO}/.git/objects/12/3456"])
    assert staged[index] == USER_DATA and staged[f"{REPO}/.git/objects/12/3456"] == VCS_BOOKKEEPING
    other_repo = kinds(modified=[index], created=["/workspace/other/.git/objects/12/3456"])
    assert other_repo[index] == VCS_BOOKKEEPING  # objects of another repository say nothing about this index
    assert kinds(created=[index]) == {index: USER_DATA} and kinds(deleted=[index]) == {index: USER_DATA}


def test_reflogs_and_objects_count_as_history_when_deleted():
    assert kinds(deleted=[f"{REPO}/.git/logs/HEAD"]) == {f"{REPO}/.git/logs/HEAD": USER_DATA}
    assert kinds(deleted=[f"{REPO}/.git/objects/ab/cd"]) == {f"{REPO}/.git/objects/ab/cd": USER_DATA}
    assert kinds(deleted=[f"{HOME}/.cache/x"]) == {"~/.cache/x": TOOL_CACHE}


def test_a_directory_made_for_caches_takes_their_kind_and_an_empty_one_does_not():
    made = kinds(created=[f"{HOME}/.npm", f"{HOME}/.npm/_cacache", f"{HOME}/.npm/_cacache/x"])
    assert made == {"~/.npm": TOOL_CACHE, "~/.npm/_cacache": TOOL_CACHE, "~/.npm/_cacache/x": TOOL_CACHE}
    assert kinds(created=[f"{HOME}/.npm"]) == {"~/.npm": USER_DATA}
    mixed = kinds(created=["/workspace/out", "/workspace/out/__pycache__", "/workspace/out/report.txt"])
    assert mixed["/workspace/out"] == USER_DATA


# ---- B1 --------------------------------------------------------------------------------------------------------------

def test_a_read_only_tool_that_only_refreshed_the_index_and_its_cache_gets_an_info_naming_them():
    found = b1(FileChanges(created=[f"{HOME}/.cache/tool/state.json"], modified=[f"{REPO}/.git/index"]))
    assert [f.severity for f in found] == ["info"]
    message = found[0].message
    assert "changed no user data" in message and "VCS bookkeeping [git index refreshed" in message
    assert f"{REPO}/.git/index" in message and "tool cache [XDG cache directory]: created ~/.cache/tool/state.json" \
        in message


def test_a_read_only_tool_that_changed_user_data_is_an_error_listing_the_rest_apart():
    found = b1(FileChanges(modified=[f"{REPO}/.git/index", f"{REPO}/.git/refs/heads/main"],
                           created=[f"{REPO}/.git/logs/refs/heads/main"]))
    assert [f.severity for f in found] == ["error"]
    message = found[0].message
    head, _, rest = message.partition("Not user data (also changed):")
    assert "changed user data: modified" in head and "refs/heads/main [a git ref" in head
    assert ".git/index" not in head and "VCS bookkeeping" in rest and ".git/index" in rest and "logs/refs" in rest


def test_a_truncated_record_is_not_cleared_by_the_caches_it_lists():
    found = b1(FileChanges(created=[f"{HOME}/.cache/x"], truncated=True))
    assert [f.severity for f in found] == ["error"] and "unlisted ones count as user data" in found[0].message


def test_a_non_destructive_tool_is_judged_on_the_user_data_it_overwrote_only():
    tool = {"name": "tidy", "annotations": {"readOnlyHint": False, "destructiveHint": False}}
    assert b1(FileChanges(modified=[f"{REPO}/.git/index"], deleted=[f"{HOME}/.cache/old"]), tool) == []
    found = b1(FileChanges(modified=["/workspace/README.md", f"{REPO}/.git/index"]), tool)
    assert len(found) == 1 and "overwrote /workspace/README.md." in found[0].message
    assert b1(FileChanges(created=["/workspace/new.txt"]), tool) == []


def test_an_unannotated_tool_is_not_judged():
    assert b1(FileChanges(modified=["/workspace/README.md"]), {"name": "plain"}) == []


def test_an_info_on_one_call_does_not_hide_an_error_on_a_later_one():
    records = [CallBehavior(call=index, tool="status", label=label, files=files) for index, (label, files) in
               enumerate((("generated", FileChanges(modified=[f"{REPO}/.git/index"])),
                          ("other", FileChanges(modified=["/workspace/README.md"]))))]
    found = [f for f in evaluate_behavior([READ_ONLY], [], records) if f.rule_id == "B1"]
    assert sorted(f.severity for f in found) == ["error", "info"]


def test_the_call_record_says_which_modified_files_changed_size():
    from sandbox.run.observe import parse_snapshot
    from scanner.probes.call_behavior import fill_record

    def snap(mtime: float, readme_size: int):
        listing = (f"f\t235\t{mtime}\t1.0\t1.0\t644\t{REPO}/.git/index\0"
                   f"f\t{readme_size}\t{mtime}\t1.0\t1.0\t644\t/workspace/README.md")
        # what the snapshot exec prints: the marks, the listing and find's end mark (exit status 0)
        return parse_snapshot(f"@@MCP-SANDBOX-CGROUP@@\n@@MCP-SANDBOX-LISTING@@\n{listing}\0@@MCP-SANDBOX-END@@ 0\n"
                              .encode())
    record = CallBehavior(call=0, tool="status", label="generated")
    fill_record(record, snap(2.0, 10), snap(3.0, 12), {})
    assert record.files.modified == ["/workspace/README.md", f"{REPO}/.git/index"]
    assert record.files.resized == ["/workspace/README.md"]


# ---- the server's own state (tool state) -----------------------------------------------------------------------------

STORE = f"{HOME}/memory.json"
APPEND = {"name": "add_observations", "annotations": {"readOnlyHint": False, "destructiveHint": False}}
GRAPH = {"name": "read_graph", "annotations": {"readOnlyHint": True}}


SEEDED = frozenset({f"{HOME}/.ssh/id_rsa", f"{HOME}/.env", "/workspace", "/workspace/README.md"})


def _session(*steps: tuple[dict, FileChanges], configured: tuple[str, ...] = (STORE,),
             seeded: frozenset[str] = SEEDED) -> list:
    """B1 over calls in order (call -1 is start-up): what each tool's record shows."""
    tools = {tool["name"]: tool for tool, _ in steps if tool}
    records = [CallBehavior(call=index - 1 if not tool else index, tool=tool.get("name") if tool else None,
                            label="generated", files=files) for index, (tool, files) in enumerate(steps)]
    return [f for f in evaluate_behavior(list(tools.values()), [], records, configured=configured, seeded=seeded)
            if f.rule_id == "B1"]


def test_configured_paths_are_the_env_values_naming_an_absolute_path():
    from scanner.rules.file_kinds import configured_paths
    env = {"MEMORY_FILE_PATH": "~/memory.json", "DATA_DIR": "/home/mcp/data/", "MODE": "fast",
           "PATHS": "/a:/b", "URL": "https://x.invalid/"}
    assert configured_paths(env, home=HOME) == (STORE, f"{HOME}/data")


def test_a_store_the_env_names_and_the_server_created_is_tool_state_not_user_data():
    found = _session(({"name": "create_entities"}, FileChanges(created=[STORE])),
                     (APPEND, FileChanges(modified=[STORE])), (GRAPH, FileChanges(modified=[STORE])))
    assert [(f.tool, f.severity) for f in found] == [("read_graph", "info")]
    assert "tool state [the store its launch configuration names" in found[0].message


def test_an_own_dot_directory_the_seed_did_not_plant_is_tool_state():
    own = f"{HOME}/.claude-server-commander"  # made at start-up, before the baseline: no record shows it created
    found = _session((GRAPH, FileChanges(modified=[f"{own}/config.json"], created=[f"{own}/tool-history.jsonl"])),
                     configured=())
    assert [(f.severity, "its own directory ~/.claude-server-commander" in f.message) for f in found] == \
        [("info", True)]


def test_lock_and_temporary_files_of_its_own_atomic_writes_may_be_deleted():
    own = f"{HOME}/.claude-server-commander"
    found = _session((GRAPH, FileChanges(deleted=[f"{own}/config.json.lock",
                                                  f"{own}/config.json.6.1796146454808.2e2453af63312.tmp"],
                                         modified=[f"{own}/config.json"])), configured=())
    assert [f.severity for f in found] == ["info"]


@pytest.mark.parametrize("steps,configured", [
    # the env names a path the seed planted (the user's own file): user data
    (((APPEND, FileChanges(modified=["/workspace/README.md"])),), ("/workspace/README.md",)),
    # ... or a directory holding the seed (the workspace itself)
    (((APPEND, FileChanges(modified=["/workspace/README.md"])),), ("/workspace",)),
    # not seeded, but the env does not name it and it is no dot-directory of its own
    ((({"name": "create_entities"}, FileChanges(created=[STORE])), (APPEND, FileChanges(modified=[STORE]))), ()),
    # a dot-directory the seed planted into (~/.ssh, the canaries' own)
    (((APPEND, FileChanges(modified=[f"{HOME}/.ssh/known_hosts"])),), ()),
    # deleting its own store is destructive: what it kept for the user is gone
    ((({"name": "create_entities"}, FileChanges(created=[STORE])), (APPEND, FileChanges(deleted=[STORE]))),
     (STORE,)),
    # a dot-directory of another program (Claude's), even when the server created it
    ((({}, FileChanges(created=[f"{HOME}/.claude", f"{HOME}/.claude/x.json"])),
      (APPEND, FileChanges(modified=[f"{HOME}/.claude/x.json"]))), ()),
])
def test_near_misses_of_tool_state_stay_user_data(steps, configured):
    found = _session(*steps, configured=configured)
    assert [(f.tool, f.severity) for f in found] == [("add_observations", "error")]


def test_a_persistence_path_is_named_with_its_article() -> None:
    reasons = {item.path: item.reason for item in classify(FileChanges(created=[
        f"{HOME}/.config/autostart/x.desktop", f"{HOME}/.bashrc"]), home=HOME)}
    assert reasons == {"~/.config/autostart/x.desktop": "an autostart entry", "~/.bashrc": "a shell start-up file"}
