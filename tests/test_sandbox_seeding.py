"""Seeding a running sandbox (sandbox/run/seeding.py), the parts that need no engine: the workspace seed and the HOME
canaries go in as one tar rooted at / that extracts to what each extracted into its own directory did, and a seeding
failure kept ahead is raised where it is taken. The extraction into a real sandbox is tested with the probes
(tests/test_probes_live.py, tests/test_head_start.py)."""

from __future__ import annotations

import dataclasses
import io
import tarfile
from pathlib import Path

import pytest

from sandbox.run import seeding
from sandbox.run.canaries import plant_canaries
from sandbox.run.observe import ObserveError
from sandbox.run.policy import HOME, RUN_GID, RUN_UID, WORKSPACE
from sandbox.run.workspace_seed import build_workspace_seed


def _extracted(archive: bytes, into: Path) -> dict[str, tuple[str, int, int, int, bytes]]:
    """Every entry under `into` after extracting: its type, mode, uid, gid and content."""
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        entries = {}
        for member in tar.getmembers():
            data = tar.extractfile(member).read() if member.isfile() else b""  # type: ignore[union-attr]
            entries[str(into / member.name)] = ("dir" if member.isdir() else "file", member.mode, member.uid,
                                                member.gid, data)
    return entries


def test_the_workspace_and_the_canaries_go_in_as_one_tar_rooted_at_slash() -> None:
    workspace, canaries = build_workspace_seed(RUN_UID, RUN_GID), plant_canaries(HOME, RUN_UID, RUN_GID)
    archive, dest = seeding.rooted([(workspace.archive, WORKSPACE), (canaries.home_archive, HOME)])
    assert dest == "/"
    apart = {**_extracted(workspace.archive, Path(WORKSPACE)), **_extracted(canaries.home_archive, Path(HOME))}
    whole = _extracted(archive, Path("/"))
    assert whole == apart and len(whole) > 20
    assert f"{HOME}/.aws/credentials" in whole and f"{WORKSPACE}/README.md" in whole
    assert whole[f"{HOME}/.aws/credentials"][1] == 0o600  # the canaries keep their private modes


@pytest.mark.parametrize("member", [tarfile.TarInfo("../etc/passwd"), tarfile.TarInfo("/etc/passwd"),
                                    tarfile.TarInfo("link")])
def test_a_member_that_is_not_a_seed_archives_is_refused(member: tarfile.TarInfo) -> None:
    if member.name == "link":
        member.type, member.linkname = tarfile.SYMTYPE, "/etc"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.addfile(member, io.BytesIO(b"") if member.isfile() else None)
    with pytest.raises(ValueError, match="not a seed archive's member"):
        seeding.rooted([(buffer.getvalue(), WORKSPACE)])


def test_a_long_member_name_is_renamed_too() -> None:
    """(A name over 100 bytes is kept in a PAX header, which must not carry the old name across.)"""
    long_name = "projects/" + "d" * 120 + "/notes.md"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo(long_name)
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    archive, _ = seeding.rooted([(buffer.getvalue(), WORKSPACE)])
    assert list(_extracted(archive, Path("/"))) == [f"{WORKSPACE}/{long_name}"]


def test_a_seeding_failure_kept_ahead_is_raised_where_it_is_taken() -> None:
    kept = seeding.Seeded(failure=ObserveError("the container is gone"))
    with pytest.raises(ObserveError, match="the container is gone"):
        kept.result()
    kept.close()  # nothing to close: no Watch was made


def test_a_planted_plan_has_what_creating_the_server_needs_and_completing_it_the_seed() -> None:
    from scanner.probes import run_plan
    from scanner.probes.options import ProbeOptions
    from sandbox.run.policy import RunPolicy

    policy = RunPolicy(env={"MCP_USER_SETTING": "1"})
    planted = run_plan.planted(ProbeOptions(), policy)
    assert planted.canaries is not None and planted.workspace is None and planted.seed is None
    assert planted.policy.env == {**planted.canaries.env, "MCP_USER_SETTING": "1"}
    done = run_plan.completed(planted)
    assert done.canaries is planted.canaries and done.policy == planted.policy and done.workspace is not None
    assert done.archives() == [done.seed] and _extracted(done.seed[0], Path("/")).keys() >= {  # type: ignore[index]
        f"{HOME}/.aws/credentials", f"{WORKSPACE}/README.md"}
    off = run_plan.planted(ProbeOptions(enabled=False), policy)
    assert run_plan.completed(off) == off and off.archives() == []
    # nothing seeds the server then, so nothing would open its start gate (sandbox/run/start_gate.py): none is set
    assert planted.policy.start_gate and off.policy == dataclasses.replace(policy, start_gate=False)


def test_the_start_gate_sets_again_only_what_the_shell_would_not_pass_on() -> None:
    """dash drops `spring.profiles.active` and replaces IFS: those go through `env --` as arguments (never into the
    script); a plain environment keeps the plain `exec "$@"`, the server's argv last and unchanged."""
    from sandbox.run.start_gate import gated_command

    plain = gated_command(["zoo", "--flag", "$(x)"], {"PATH": "/bin", "AWS_ACCESS_KEY_ID": "AKIA"})
    assert plain[-3:] == ["zoo", "--flag", "$(x)"] and plain[2].endswith('exec "$@"') and "AKIA" not in plain[2]
    odd = gated_command(["zoo"], {"PATH": "/bin", "spring.profiles.active": "d'ev", "IFS": "x", "PWD": "/w"})
    assert odd[2].endswith('exec /usr/bin/env -- "$@"') and "d'ev" not in odd[2] and "unset OLDPWD; " in odd[2]
    assert odd[4:] == ["spring.profiles.active=d'ev", "IFS=x", "PWD=/w", "zoo"]
    assert gated_command(["zoo"], {"word": "hi", "g": "1"})[4:] == ["word=hi", "g=1", "zoo"]  # the script's own
