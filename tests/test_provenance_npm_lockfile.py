"""I5 from the npm lockfile an install produced."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.errors import UsageError
from scanner.provenance.npm_lockfile import classify, read_npm_lockfile, tree_findings

LOCK = Path(__file__).parent / "fixtures" / "provenance" / "lockfile"


def test_tree_is_read_with_sources_and_install_scripts_named() -> None:
    tree = read_npm_lockfile(LOCK / "package-lock.json", LOCK)
    by_name = {d.name: d for d in tree.dependencies}
    assert tree.total == 5
    assert by_name["demo-server"].install_scripts == ["postinstall: node phone-home.js"]
    assert (by_name["from-git"].source, by_name["from-url"].source, by_name["plain"].source,
            by_name["local"].source) == ("git", "url", "registry", "link")
    assert by_name["plain"].dev and by_name["plain"].integrity == "sha512-CCCC"
    assert "secret" not in (by_name["from-url"].resolved or "")


def test_findings_name_git_url_deps_and_scripts() -> None:
    found = tree_findings(read_npm_lockfile(LOCK / "package-lock.json", LOCK))
    assert [f.rule_id for f in found] == ["I5", "I5"]
    assert "from-git@2.0.0" in found[0].message and "from-url@3.0.0" in found[0].message
    assert "demo-server@1.0.0" in found[1].message and "postinstall" in (found[1].evidence or "")


def test_without_node_modules_the_lockfile_flag_is_used(tmp_path: Path) -> None:
    tree = read_npm_lockfile(LOCK / "package-lock.json")
    assert [d.install_scripts for d in tree.with_install_scripts] == [["install script (hasInstallScript)"]]


def test_clean_tree_has_no_findings(tmp_path: Path) -> None:
    lock = tmp_path / "package-lock.json"
    lock.write_text('{"lockfileVersion": 3, "packages": {"": {}, "node_modules/a": {"version": "1.0.0", '
                    '"resolved": "https://registry.npmjs.org/a/-/a-1.0.0.tgz", "integrity": "sha512-x"}}}')
    assert tree_findings(read_npm_lockfile(lock)) == []


def test_v1_lockfile_and_bad_files(tmp_path: Path) -> None:
    lock = tmp_path / "package-lock.json"
    lock.write_text('{"lockfileVersion": 1, "dependencies": {"a": {"version": "github:x/y#abc", '
                    '"dependencies": {"b": {"version": "1.0.0", "resolved": '
                    '"https://registry.npmjs.org/b/-/b-1.0.0.tgz"}}}}}')
    tree = read_npm_lockfile(lock)
    assert [(d.name, d.source) for d in tree.dependencies] == [("a", "git"), ("b", "registry")]
    lock.write_text("not json")
    with pytest.raises(UsageError):
        read_npm_lockfile(lock)
    assert classify("file:../x", "") == "file"


def test_a_v1_lockfile_of_another_shape_holds_no_dependencies_instead_of_crashing() -> None:
    from scanner.provenance.npm_lockfile import lockfile_tree

    assert lockfile_tree({"dependencies": ["a"]}, "package-lock.json").total == 0
    tree = lockfile_tree({"dependencies": {"a": {"version": "1.0.0", "dependencies": ["b"]}}}, "package-lock.json")
    assert [(d.name, d.version) for d in tree.dependencies] == [("a", "1.0.0")]
