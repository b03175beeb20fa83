"""What a command loads before it starts (issue 12: the CLI starts in a quarter second): `--version` builds no
command, `check` builds only its own, the version is read from the package metadata without importlib.metadata
when the plain case allows, and the same version either way."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from sandbox.version import fast_version, header, installed_version

PROBE = ("import sys\nfrom scanner.cli.app import main\nsys.argv = ['mcp-sandbox', *sys.argv[1:]]\n"
         "try:\n    main()\nexcept SystemExit:\n    pass\n"
         "print(' '.join(sorted(m for m, v in sys.modules.items() if v is not None)), file=sys.stderr)")


def _modules(*argv: str, cwd: Path | None = None) -> set[str]:
    """The modules one CLI run imported (the probe's last stderr line)."""
    result = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120,
                            cwd=cwd)
    loaded = set(result.stderr.split("\n")[-2].split())
    assert "scanner.cli.app" in loaded  # the probe read the right process
    return loaded


def _commands(modules: set[str]) -> set[str]:
    return {m for m in modules if m.startswith("scanner.cli.")} - {"scanner.cli.app", "scanner.cli.lazy_commands",
                                                                    "scanner.cli.interpreter",
                                                                    "scanner.cli.stdout_guard"}


def test_version_builds_no_command_and_reads_no_metadata_library() -> None:
    loaded = _modules("--version")
    assert _commands(loaded) == set()
    assert "importlib.metadata" not in loaded and "email" not in loaded


def test_help_reads_no_version_and_builds_no_command() -> None:
    loaded = _modules("--help")
    assert "importlib.metadata" not in loaded and "sandbox.version" not in loaded
    # --help lists every command from the stored summaries (tests/test_command_summaries.py), building none
    assert "scanner.cli.command_summaries" in loaded and _commands(loaded) == {"scanner.cli.command_summaries"}


def test_check_builds_only_its_own_command(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps({"tools": [{"name": "get_x", "description": "Get x."}]}))
    loaded = _modules("check", "tools.json", "-q", cwd=tmp_path)
    assert "scanner.cli.check" in loaded
    assert not {"scanner.cli.scan", "scanner.cli.batch", "scanner.cli.lock", "scanner.cli.vet"} & loaded


def test_every_listed_command_is_built_by_its_module() -> None:
    import typer

    from scanner.cli.app import COMMANDS, app

    group = typer.main.get_command(app)
    built = {name: group.commands[name] for name in COMMANDS}  # type: ignore[attr-defined]
    assert all(command.name == name for name, command in built.items())
    assert list(group.commands) == list(COMMANDS)  # type: ignore[attr-defined]


def test_the_version_is_the_package_metadata() -> None:
    import sandbox
    import scanner

    assert sandbox.__version__ == scanner.__version__ == metadata.version("mcp-sandbox") == installed_version()
    assert fast_version("mcp-sandbox") == metadata.version("mcp-sandbox")  # the plain case is read directly


def _dist(folder: Path, name: str, version: str, suffix: str = ".dist-info", file: str = "METADATA") -> None:
    info = folder / f"{name}-{version}{suffix}"
    info.mkdir(parents=True)
    (info / file).write_text(f"Metadata-Version: 2.4\nName: {name}\nVersion: {version}\n\nVersion: 9.9\n")


def test_fast_version_reads_as_importlib_metadata_does(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(first, "My_Tool", "1.2.3")
    _dist(second, "my.tool", "2.0.0")
    _dist(second, "other", "5.0", suffix=".egg-info", file="PKG-INFO")
    path = [str(tmp_path / "missing"), str(first), str(second)]
    assert fast_version("my-tool", path) == "1.2.3"  # the first folder on the path wins, names normalised
    assert [d.version for d in metadata.distributions(name="my-tool", path=path)][0] == "1.2.3"
    assert fast_version("other", path) == "5.0"  # an egg-info's PKG-INFO
    assert fast_version("absent", path) is None


@pytest.mark.parametrize("case", ["two side by side", "a zip on the path", "an egg on the path", "no Version"])
def test_fast_version_leaves_the_unusual_cases_to_importlib_metadata(tmp_path: Path, case: str) -> None:
    if case == "two side by side":
        _dist(tmp_path, "my_tool", "1.0")
        _dist(tmp_path, "my_tool", "2.0")
        path = [str(tmp_path)]
    elif case == "a zip on the path":
        (tmp_path / "deps.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
        path = [str(tmp_path / "deps.zip")]
    elif case == "an egg on the path":
        path = [str(tmp_path / "thing.egg")]
    else:
        (tmp_path / "my_tool-1.0.dist-info").mkdir()
        (tmp_path / "my_tool-1.0.dist-info" / "METADATA").write_text("Name: my_tool\n")
        path = [str(tmp_path)]
    assert fast_version("my_tool", path) is None


def test_header_stops_at_the_body() -> None:
    assert header("Name: x\nversion:  1.0 \n\nVersion: 2\n", "Version") == "1.0"
    assert header("Name: x\n\nVersion: 2\n", "Version") is None


def test_check_quiet_imports_no_rich(tmp_path: Path) -> None:
    """`check FILE --json OUT -q` writes no terminal view, so rich (~25 ms) is never imported."""
    (tmp_path / "tools.json").write_text(json.dumps({"tools": [{"name": "get_x", "description": "Get x."}]}))
    loaded = _modules("check", "tools.json", "--json", "out.json", "-q", cwd=tmp_path)
    assert "scanner.report.model" in loaded and (tmp_path / "out.json").is_file()
    assert not {m for m in loaded if m == "rich" or m.startswith("rich.")}


def test_the_terminal_reads_no_emoji_table(tmp_path: Path) -> None:
    """The terminal view's console interprets no `:emoji:` codes (its labels have none; untrusted text is a Text):
    rich's emoji table (~10 ms) is never loaded."""
    (tmp_path / "tools.json").write_text(json.dumps({"tools": [{"name": "get_x", "description": "Get x."}]}))
    loaded = _modules("check", "tools.json", cwd=tmp_path)
    assert "rich.console" in loaded and "rich._emoji_codes" not in loaded


BEFORE_HEAD_START = ("import os, sys\nclass Stop:\n    def find_spec(self, name, path=None, target=None):\n"
                     "        if name == 'scanner.pipeline.head_start':\n"
                     "            print('BEGINS ' + ' '.join(sorted(m for m, v in sys.modules.items() if v is not None)), "
                     "file=sys.stderr, flush=True)\n"
                     "            os._exit(0)\n"
                     "sys.meta_path.insert(0, Stop())\n" + PROBE)
LATER = ("httpx", "rich", "mcp", "cryptography", "sigstore", "jsonschema", "docker", "packaging",
         "scanner.report.model", "scanner.rules.registry", "scanner.ecosystems", "scanner.registry",
         "scanner.provenance.model", "scanner.provenance.package_specs", "scanner.plugins.envelope",
         "scanner.probes.fixtures", "scanner.conformance.model", "scanner.signing", "scanner.lock",
         "scanner.cli.lock", "scanner.cli.remote_scan")


def _before_head_start(*argv: str, cwd: Path) -> set[str]:
    """The modules a CLI run had imported when `import scanner.pipeline.head_start` began (the run stops there)."""
    result = subprocess.run([sys.executable, "-c", BEFORE_HEAD_START, *argv], capture_output=True, text=True,
                            timeout=120, cwd=cwd)
    begins = [line for line in result.stderr.splitlines() if line.startswith("BEGINS ")]
    assert begins, result.stderr[-2000:]  # the run reached its head start
    return set(begins[0].split()[1:])


def _under(loaded: set[str], names: tuple[str, ...]) -> set[str]:
    return {m for m in loaded for name in names if m == name or m.startswith(name + ".")}


@pytest.mark.parametrize("target", ["pypi:mcp-server-time", "npm:@modelcontextprotocol/server-filesystem@1.0.0",
                                    "folder"])
def test_a_package_scan_begins_its_head_start_before_the_scan_machinery(tmp_path: Path, target: str) -> None:
    """Before the engine/sink thread starts, a package scan has read its flags, its config, its door and the
    known-bad list (the target was refused or not) and nothing else of the scan path: no registry client (httpx,
    rich), no provenance chain (cryptography, sigstore), no plugin schemas (jsonschema), no report model."""
    if target == "folder":
        (tmp_path / "pkg").mkdir()
        (tmp_path / "pkg" / "package.json").write_text('{"name": "x", "version": "1.0.0"}')
        target = str(tmp_path / "pkg")
    loaded = _before_head_start("scan", target, "--no-probes", "--json", "r.json", "-q", "--fail-on", "never",
                                cwd=tmp_path)
    assert {"scanner.cli.scan", "scanner.config", "scanner.pipeline.refusal", "scanner.provenance.known_bad",
            "scanner.pipeline.scan_options"} <= loaded  # what the checks before it read
    assert _under(loaded, LATER) == set()


def test_a_config_with_suppressions_is_checked_before_the_head_start_without_the_registry_client(
        tmp_path: Path) -> None:
    """A config's entries are checked against the rule registry (and its report model) when read, before the head
    start; the registry client and the ecosystems still wait."""
    (tmp_path / "mcp-sandbox.toml").write_text('disable = ["S2"]\nignore = ["S7:*"]\n')
    loaded = _before_head_start("scan", "pypi:mcp-server-time", "--no-probes", "-q", "--json", "r.json",
                                cwd=tmp_path)
    assert "scanner.rules.registry" in loaded and not _under(loaded, ("httpx", "scanner.ecosystems"))


def test_the_local_scan_path_imports_no_wire_probe_and_no_npm_signature_checks() -> None:
    """What `scan` imports to run a local (non --url) scan: the conformance wire and HTTP probes wait for
    --spec-version/--spec or --url, npm's signature and attestation checks (their own cryptography and sigstore
    imports) for an npm package's provenance check, and the lock (33 ms) for --lock or two listings that differ
    (P10, scanner/rules/cloaking.py); the probe runner, its looks and crash replay wait for probes to run
    (scanner/probes/phase.py imports them when the phase begins, so `--no-probes` loads none of them)."""
    code = ("import sys\nimport scanner.pipeline.early_server, scanner.pipeline.image_scan\n"
            "print(' '.join(sorted(sys.modules)))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                timeout=120).stdout.split())
    assert {"scanner.pipeline.conformance", "scanner.conformance.checks", "scanner.ecosystems.npm",
            "scanner.probes.phase"} <= loaded
    assert _under(loaded, ("scanner.conformance.probe", "scanner.conformance.wire", "scanner.conformance.http_probe",
                           "scanner.conformance.http_discovery", "scanner.conformance.http_wire",
                           "scanner.provenance.npm", "scanner.provenance.npm_attestations",
                           "scanner.provenance.sigstore_identity", "scanner.signing", "sigstore", "tuf",
                           "scanner.lock", "scanner.probes.runner", "scanner.probes.call_looks",
                           "scanner.probes.crash_replay")) == set()


def test_the_cli_never_loads_httpx_command_line_client() -> None:
    """httpx imports its own command-line client (rich's console, progress, syntax and table, and pygments) when it
    finds them installed; the CLI blocks that optional import (scanner/cli/app.py UNUSED_OPTIONAL_MODULES), so the
    registry client loads without them, and httpx's own fallback `main` stands in."""
    code = ("import sys\nfrom scanner.cli.app import main\nsys.argv = ['mcp-sandbox', '--version']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "import httpx\nclient = httpx.Client()\nclient.close()\n"
            "print(sys.modules['httpx._main'], 'pygments' in sys.modules, 'rich.syntax' in sys.modules,\n"
            "      httpx.main.__module__)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.split("\n")[-2].split() == ["None", "False", "False", "httpx"], result.stderr


def test_without_the_block_httpx_would_load_its_client() -> None:
    """The near miss: the same import without the CLI's block loads httpx's command-line client and pygments (so
    the block above is what keeps them out)."""
    code = "import sys\nimport httpx\nprint('httpx._main' in sys.modules and sys.modules['httpx._main'] is not None)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "True", result.stderr


def test_writing_a_report_file_imports_no_lock(tmp_path) -> None:
    """A scan's report is written whole or not at all (scanner/atomic_write.py), at the end of every scan with
    --json/--sarif/--markdown: the lock package (its pydantic model, rfc8785, the diffs) is not needed for that and
    was imported with it, on the scan's last stretch, when the atomic write lived in scanner/lock."""
    code = ("import sys\nfrom scanner.cli.output import write_text\n"
            f"write_text({str(tmp_path / 'report.json')!r}, '{{}}', 'the report')\n"
            "print(' '.join(sorted(sys.modules)))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                timeout=120).stdout.split())
    assert "scanner.atomic_write" in loaded and _under(loaded, ("scanner.lock",)) == set()
    assert (tmp_path / "report.json").read_text() == "{}"


def test_the_report_models_are_built_on_first_use_not_at_import() -> None:
    """Every pydantic model the check path imports defers its validator to its first use (scanner/report/base.py):
    a model built at import costs each command its schema build (ProbeResult's was ~10 ms) whether it uses it or
    not."""
    code = ("import pydantic\nimport scanner.cli.check, scanner.report.model, scanner.rules.static.engine, "
            "scanner.report.terminal, scanner.tools_file\n"
            "def below(c):\n    for s in c.__subclasses__():\n        yield s\n        yield from below(s)\n"
            "print(' '.join(sorted(f'{c.__module__}.{c.__name__}' for c in below(pydantic.BaseModel) "
            "if c.__module__.startswith(('scanner', 'sandbox')) and c.__dict__.get('__pydantic_complete__'))))\n"
            "print(sum(1 for c in below(pydantic.BaseModel) if c.__module__.startswith('scanner.report')))")
    built, report_models = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                                          check=True).stdout.split("\n")[:2]
    assert int(report_models) > 20  # the probe saw the report's models
    assert built == ""


def test_a_check_without_a_config_loads_no_toml_parser(tmp_path: Path) -> None:
    """The rules catalogue comes from its parsed copy and no config file is there to read: tomllib (pure Python,
    10-15 ms for the catalogue) is never imported."""
    (tmp_path / "tools.json").write_text(json.dumps({"tools": [{"name": "get_x", "description": "Get x."}]}))
    loaded = _modules("check", "tools.json", "-q", cwd=tmp_path)
    assert "scanner.rules.registry" in loaded and "tomllib" not in loaded
    (tmp_path / "mcp-sandbox.toml").write_text("[rules]\ndisable = []\n")  # near miss: a config to read
    assert "tomllib" in _modules("check", "tools.json", "-q", "--config", "mcp-sandbox.toml", cwd=tmp_path)
