"""Review of the install path against a hostile package: what a local target's cache key binds, and what an install
script can change in the record of its own install.

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


def _request(folder):
    return InstallRequest("npm", "/opt/src/pkg", "pkg", f"local:{content_hash(folder)}", local_path=folder)


def test_folders_whose_files_concatenate_alike_hash_apart(tmp_path):
    # One file "a" holding X\0b\0Y and two files a=X, b=Y fed the same bytes to the old hash.
    one = _folder(tmp_path, "one", {"a": b"X\0b\0Y"})
    two = _folder(tmp_path, "two", {"a": b"X", "b": b"Y"})
    assert pack_path(one, "pkg", 1, 1) != pack_path(two, "pkg", 1, 1)
    assert content_hash(one) != content_hash(two)
    assert installed_tag("sha256:runtime", _request(one)) != installed_tag("sha256:runtime", _request(two))


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
