"""`check-config` never prints or stores a credential: user info in every spelling, query strings, `;params` and
token-shaped text are gone from the terminal, JSON, SARIF, Markdown and annotations; what a reader needs (host,
path, a pinned commit SHA or digest, the package name and version) is kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanner.provenance.redact import redact_secrets
from tests.cli_helpers import run_main

SECRET = "Zq7pw0rd5x"  # plain: only the structure around it says it is a credential
TOKENS = ["ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5", "github_pat_11ABCDEFG0123456789_abcdefghijKLMNOP",
          "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12", "xoxb-123456789012-abcdefABCDEF", "glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn7",
          "AKIAIOSFODNN7EXAMPLE", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"]
SPELLINGS = [
    ("uvx", ["--from", f"git+https://user:{SECRET}@github.com/o/r", "r"]),
    ("uvx", ["--from", f"git+https://{SECRET}@github.com/o/r@v1", "r"]),  # a token as the user name
    ("uvx", ["--from", f"https://{SECRET}:x-oauth-basic@github.com/o/r", "r"]),
    ("npx", [f"//user:{SECRET}@registry.example.invalid/x.tgz"]),  # scheme-relative
    ("uvx", ["--from", f"git+https:\\\\user:{SECRET}@host.example.invalid\\o\\r", "r"]),  # backslashes
    ("sh", ["-c", f"npx git+https:\\\\user:{SECRET}@host.example.invalid\\o\\r"]),  # ...through a shell
    ("uvx", ["--from", f"https:user:{SECRET}@host.example.invalid/x", "r"]),  # no slashes
    ("npx", [f"github:{SECRET}@o/r"]),
    ("npx", [f"u:{SECRET}@host.example.invalid:o/r"]),  # scp-like
    ("uvx", ["--from", f"git+https://user%3A{SECRET}@host.example.invalid/x", "r"]),  # percent-encoded
    ("uvx", ["--from", f"git+https%3A%2F%2Fuser%3A{SECRET}%40host.example.invalid%2Fx", "r"]),
    ("uvx", ["--from", f"git+https://user;{SECRET}@host.example.invalid/x", "r"]),
    ("uvx", ["--from", f"https://host.example.invalid/x;session={SECRET}/y", "r"]),  # ;param
    ("uvx", ["--from", f"  git+https://user:{SECRET}@host.example.invalid/x  ", "r"]),  # surrounding spaces
    ("uvx", ["--from", f"https://host.example.invalid/pkg.whl?token={SECRET}", "r"]),  # query string
    ("pip", ["install", f"https://host.example.invalid/x.whl?sig={SECRET}#sha256=" + "a" * 64]),
    ("uvx", [f"pkg @ git+https://u:{SECRET}@host.example.invalid/r"]),
    ("npx", ["-y", f"@scope/pkg@https://u:{SECRET}@host.example.invalid/x.tgz"]),
    ("npx", [f"HTTPS://U:{SECRET}@HOST.EXAMPLE.INVALID/x.tgz"]),
    ("docker", ["run", "-i", f"u:{SECRET}@registry.example.invalid/img:1"]),
    ("npx", [f"file://u:{SECRET}@h/x.tgz"]),
    ("python", ["-m", "pip", "install", f"git+ssh://git:{SECRET}@github.com/o/r"]),
]


def _check_config(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                  servers: dict[str, object]) -> str:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    outputs = {flag: tmp_path / f"out.{flag[2:]}" for flag in ("--json", "--sarif", "--markdown")}
    args = [a for flag, path in outputs.items() for a in (flag, str(path))]
    code, out, err = run_main(monkeypatch, capsys, "check-config", str(config), *args, "--github-annotations")
    assert code in (0, 1), err
    return "\n".join([out, err, *(p.read_text() for p in outputs.values())])


@pytest.mark.parametrize("command, args", SPELLINGS, ids=[" ".join(a)[:60] for _, a in SPELLINGS])
def test_no_spelling_of_user_info_reaches_any_output(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                     command: str, args: list[str]) -> None:
    shown = _check_config(monkeypatch, capsys, tmp_path, {"server": {"command": command, "args": args}})
    assert SECRET not in shown
    assert SECRET.lower() not in shown.lower()


def test_token_shaped_text_is_redacted_anywhere_in_a_launch(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    servers = {f"s{i}": {"command": "npx", "args": [tok if i % 2 else f"https://h.example.invalid/{tok}/x.tgz"]}
               for i, tok in enumerate(TOKENS)}
    servers["remote"] = {"url": f"https://user:{SECRET}@mcp.example.invalid:8443/sse?key={TOKENS[0]}"}
    shown = _check_config(monkeypatch, capsys, tmp_path, servers)
    for planted in [*TOKENS, SECRET]:
        assert planted not in shown
    assert "https://mcp.example.invalid:8443" in shown


@pytest.mark.parametrize("text, kept", [
    ("git+https://github.com/o/r@" + "0123456789abcdef" * 2 + "01234567", None),  # a full commit SHA: the pin
    ("ghcr.io/o/img:1.2@sha256:" + "ab" * 32, None),
    ("localhost:5000/img@sha256:" + "cd" * 32, None),
    ("@modelcontextprotocol/server-filesystem@2025.1.14", None),
    ("mcp-server-git==2025.1.14", None),
    ("name[extra]>=1.0,<2", None),
    ("git+https://github.com/o/r.git#main", None),
    ("npm package left-pad has no exact version (a range or tag: 'latest').", None),
    ("https://user:pw@host.example.invalid/x?q=1#frag", "https://host.example.invalid/x#frag"),
])
def test_what_a_reader_needs_is_kept(text: str, kept: str | None) -> None:
    assert redact_secrets(text) == (text if kept is None else kept)
