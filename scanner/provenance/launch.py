"""I1 (with I8 and I9): lint the command an MCP client would run to launch a server.

Understands npx / pnpx / bunx / npm exec / pnpm dlx / yarn dlx, uvx / uv run / uv tool run / pipx run, pip /
python -m pip, docker run / podman run, and the `env …` and `sh -c "…"` wrappers around them. Arguments may carry
secrets, so findings quote only the package spec or image, never the whole command line.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Literal

from packaging.requirements import InvalidRequirement, Requirement

from scanner.provenance.known_bad import known_bad_finding
from scanner.provenance.redact import without_secrets
from scanner.rules.provenance import finding
from scanner.provenance.typosquat import typosquat_finding
from scanner.ecosystems.registry import ecosystem as ecosystem_named
from scanner.report.model import Finding

RefEcosystem = Literal["npm", "pypi", "oci"]
RefSource = Literal["registry", "git", "url", "file", "image"]

_FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
_IMAGE_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
_SHELLS = {"sh", "bash", "zsh", "dash", "ash", "ksh"}
_SHELL_OPERATORS = {"&&", "||", ";", "|", "&", ";;", "(", ")"}
_MAX_UNWRAP = 8


@dataclass(frozen=True)
class PackageRef:
    """One thing a launch command would fetch and run."""

    ecosystem: RefEcosystem
    name: str
    spec: str = ""  # version spec, git ref, or image tag/digest; "" when none was given
    source: RefSource = "registry"
    display: str = ""  # safe to print: no user info, no query string
    pinned: bool = False


@dataclass
class LaunchAnalysis:
    runner: str | None = None
    packages: list[PackageRef] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


class _Unparseable(Exception):
    """The command (or a shell string inside it) cannot be split into words."""


def analyse_launch(command: str, args: list[str] | None = None) -> LaunchAnalysis:
    """Lint a launch command (command plus args as a client config holds them): I1, then I8/I9 per package."""
    result = LaunchAnalysis()
    try:
        argv = [command, *args] if args else _split(command)
        for segment in _unwrap(argv, 0):
            _dispatch(segment, result)
    except _Unparseable as exc:
        result.findings.append(finding("I1", f"The launch command cannot be parsed as shell words: {exc}.",
                                       evidence="unparseable shell string"))
        return result
    for ref in result.packages:
        result.findings.extend(_package_findings(ref))
    return result


def package_findings(ecosystem: Literal["npm", "pypi"], name: str, spec: str) -> list[Finding]:
    """I8 and I9 for one registry package (the checks that run before anything is installed)."""
    found = [known_bad_finding(ecosystem, name, spec), typosquat_finding(ecosystem, name)]
    return [f for f in found if f is not None]


def _package_findings(ref: PackageRef) -> list[Finding]:
    out: list[Finding] = []
    if not ref.pinned:
        out.append(_unpinned_finding(ref))
    if ref.ecosystem in ("npm", "pypi") and ref.source == "registry":
        out.extend(package_findings(ref.ecosystem, ref.name, ref.spec))
    return out


def _unpinned_finding(ref: PackageRef) -> Finding:
    what = {
        "registry": f"{ref.ecosystem} package {ref.display} has no exact version "
                    f"({'a range or tag: ' + repr(ref.spec) if ref.spec else 'none given'})",
        "git": f"git source {ref.display} is not pinned to a full 40-character commit SHA",
        "url": f"URL source {ref.display} is fetched without a pinned digest",
        "image": f"container image {ref.display} has no @sha256: digest",
        "file": f"{ref.display} is not pinned",
    }[ref.source]
    return finding("I1", f"Unpinned launch: {what}.", evidence=ref.display)


def _split(text: str) -> list[str]:
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise _Unparseable(str(exc)) from exc
    if not words:
        raise _Unparseable("empty command")
    return words


def _program(word: str) -> str:
    name = re.split(r"[\\/]", word)[-1].lower()
    for suffix in (".exe", ".cmd", ".bat", ".ps1"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _unwrap(argv: list[str], depth: int) -> list[list[str]]:
    """Peel `env …`, `sh -c "…"`, `cmd /c …` and `exec` off argv; a shell string may hold several commands."""
    if depth > _MAX_UNWRAP:
        raise _Unparseable(f"wrappers (env, sh -c, exec) nested more than {_MAX_UNWRAP} deep")
    if not argv:
        return []
    while argv and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):  # `NAME=value cmd …`: shell assignments
        argv = argv[1:]
    if not argv:
        return []
    prog = _program(argv[0])
    if prog == "env":
        return _unwrap(_after_env(argv[1:]), depth + 1)
    if prog == "exec":
        return _unwrap(argv[1:], depth + 1)
    if prog == "cmd" and len(argv) > 2 and argv[1].lower() in ("/c", "/k"):
        return _unwrap(argv[2:], depth + 1)
    if prog in _SHELLS:
        script = _shell_script(argv[1:])
        if script is None:
            return [argv]
        return [seg for part in _shell_segments(script) for seg in _unwrap(part, depth + 1)]
    return [argv]


def _after_env(rest: list[str]) -> list[str]:
    i = 0
    while i < len(rest):
        word = rest[i]
        if word in ("-u", "--unset", "-C", "--chdir"):
            i += 2
        elif word in ("-S", "--split-string") and i + 1 < len(rest):
            return _split(rest[i + 1]) + rest[i + 2:]
        elif word.startswith("-") or ("=" in word and not word.startswith("=")):
            i += 1
        else:
            return rest[i:]
    return []


def _shell_script(rest: list[str]) -> str | None:
    for i, word in enumerate(rest):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            return rest[i + 1] if i + 1 < len(rest) else ""
        if not word.startswith("-"):
            return None  # `sh script.sh`: a local script
    return None


def _shell_segments(script: str) -> list[list[str]]:
    lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError as exc:
        raise _Unparseable(str(exc)) from exc
    segments: list[list[str]] = [[]]
    for word in words:
        if word in _SHELL_OPERATORS:
            segments.append([])
        else:
            segments[-1].append(word)
    return [s for s in segments if s]


# --- runners ---------------------------------------------------------------------------------------------------

def _dispatch(argv: list[str], result: LaunchAnalysis) -> None:
    prog, rest = _program(argv[0]), argv[1:]
    sub = rest[0].lower() if rest else ""
    if prog in ("npx", "pnpx", "bunx"):
        _set_runner(result, prog)
        result.packages.extend(_npx(rest))
    elif prog == "npm" and sub in ("exec", "x"):
        _set_runner(result, "npm exec")
        result.packages.extend(_npx(rest[1:]))
    elif prog in ("pnpm", "yarn") and sub == "dlx":
        _set_runner(result, f"{prog} dlx")
        result.packages.extend(_npx(rest[1:]))
    elif prog == "uvx":
        _set_runner(result, "uvx")
        result.packages.extend(_uvx(rest))
    elif prog == "uv" and sub == "tool" and len(rest) > 1 and rest[1] == "run":
        _set_runner(result, "uv tool run")
        result.packages.extend(_uvx(rest[2:]))
    elif prog == "uv" and sub == "run":
        _set_runner(result, "uv run")
        result.packages.extend(_uv_run(rest[1:]))
    elif prog == "pipx" and sub == "run":
        _set_runner(result, "pipx run")
        result.packages.extend(_pipx_run(rest[1:]))
    elif re.fullmatch(r"pip(\d+(\.\d+)?)?", prog) and sub == "install":
        _set_runner(result, "pip install")
        _pip_install(rest[1:], result)
    elif re.fullmatch(r"python(\d+(\.\d+)?)?|py", prog) and rest[:2] == ["-m", "pip"] and rest[2:3] == ["install"]:
        _set_runner(result, "python -m pip install")
        _pip_install(rest[3:], result)
    elif prog in ("docker", "podman") and (sub == "run" or rest[:2] == ["container", "run"]):
        _set_runner(result, f"{prog} run")
        image = _docker_image(rest[1:] if sub == "run" else rest[2:])
        if image:
            result.packages.append(image)


def _set_runner(result: LaunchAnalysis, runner: str) -> None:
    result.runner = result.runner or runner


def _options(words: list[str], takes_value: set[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Split words into options (name → values) and positionals; `--` ends options; first positional ends too."""
    opts: dict[str, list[str]] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            return opts, words[i + 1:]
        if not word.startswith("-") or word == "-":
            return opts, words[i:]
        name, eq, value = word.partition("=")
        if not eq and name in takes_value:
            value = words[i + 1] if i + 1 < len(words) else ""
            i += 1
        elif not eq and len(name) > 2 and not name.startswith("--") and name[:2] in takes_value:
            name, value = name[:2], name[2:]  # -pvalue
        opts.setdefault(name, []).append(value)
        i += 1
    return opts, []


_NPX_VALUE_OPTS = {"-p", "--package", "-c", "--call", "--registry", "--cache", "--userconfig", "--prefix",
                   "-w", "--workspace", "--node-options", "--shell", "--script-shell", "--loglevel"}


def _npx(words: list[str]) -> list[PackageRef]:
    opts, positionals = _options(words, _NPX_VALUE_OPTS)
    specs = opts.get("-p", []) + opts.get("--package", [])
    if not specs and positionals:
        specs = [positionals[0]]
    return [parse_npm_spec(s) for s in specs if s]


def parse_npm_spec(text: str) -> PackageRef:
    """An npm install spec: name[@range|@tag], npm:alias, git (github:, git+…, user/repo), URL or local path."""
    text = text.strip()
    if text.startswith("npm:"):
        text = text[4:]
    if text.startswith(("file:", "./", "../", "/", "~/", "link:")) or text.endswith((".tgz", ".tar.gz")) \
            and not text.startswith(("http://", "https://")):
        return PackageRef("npm", text, source="file", display=text, pinned=True)
    if text.startswith(("git+", "git://", "github:", "gitlab:", "bitbucket:", "gist:")) or \
            re.fullmatch(r"[\w.-]+/[\w.-]+(#.*)?", text):
        ref = text.partition("#")[2]
        ref = ref.removeprefix("commit=")
        return PackageRef("npm", text.partition("#")[0], ref, "git", without_secrets(text),
                          bool(_FULL_SHA.match(ref.lower())))
    if text.startswith(("http://", "https://")):
        return PackageRef("npm", text, source="url", display=without_secrets(text), pinned=False)
    at = text.find("@", 1)
    name, spec = (text[:at], text[at + 1:]) if at > 0 else (text, "")
    return PackageRef("npm", name, spec, "registry", f"{name}@{spec}" if spec else name,
                      ecosystem_named("npm").exact_version(spec) is not None)


_UV_VALUE_OPTS = {"--from", "--with", "--with-editable", "--with-requirements", "-p", "--python", "--index",
                  "--index-url", "-i", "--extra-index-url", "--default-index", "-f", "--find-links", "-c",
                  "--constraints", "--overrides", "--build-constraints", "--directory", "--project",
                  "--config-file", "--cache-dir", "--env-file", "--python-preference", "--resolution",
                  "--prerelease", "--index-strategy", "--keyring-provider", "--exclude-newer", "--color",
                  "--allow-insecure-host", "--refresh-package", "--reinstall-package", "--upgrade-package",
                  "-P", "--no-binary-package", "--only-binary-package", "--link-mode", "--package",
                  "--extra", "--group", "--only-group", "--no-group", "-m", "--module", "--script"}


def _uvx(words: list[str]) -> list[PackageRef]:
    opts, positionals = _options(words, _UV_VALUE_OPTS)
    specs = opts.get("--from", [])
    if not specs and positionals:
        specs = [positionals[0]]
    specs += opts.get("--with", [])
    return [parse_pypi_spec(s, uvx_style=True) for s in specs if s]


def _uv_run(words: list[str]) -> list[PackageRef]:
    opts, _ = _options(words, _UV_VALUE_OPTS)
    return [parse_pypi_spec(s) for s in opts.get("--with", []) if s]


def _pipx_run(words: list[str]) -> list[PackageRef]:
    opts, positionals = _options(words, {"--spec", "--python", "--index-url", "-i", "--pip-args", "--backend"})
    specs = opts.get("--spec", []) or positionals[:1]
    return [parse_pypi_spec(s) for s in specs if s]


_PIP_VALUE_OPTS = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url",
                   "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--platform", "--python-version",
                   "--implementation", "--abi", "--src", "--upgrade-strategy", "--progress-bar", "--report",
                   "--trusted-host", "--cache-dir", "--log", "--proxy", "--retries", "--timeout", "--cert",
                   "--client-cert", "--no-binary", "--only-binary", "-e", "--editable", "--config-settings",
                   "-C", "--global-option", "--python"}


def _pip_install(words: list[str], result: LaunchAnalysis) -> None:
    specs, requirement_files, require_hashes = [], 0, False
    i = 0
    while i < len(words):
        word = words[i]
        name = word.partition("=")[0]
        if word == "--require-hashes":
            require_hashes = True
        elif name in _PIP_VALUE_OPTS:
            if name in ("-r", "--requirement"):
                requirement_files += 1
            if "=" not in word:
                i += 1
        elif not word.startswith("-"):
            specs.append(word)
        i += 1
    result.packages.extend(parse_pypi_spec(s) for s in specs)
    if specs or not require_hashes:
        where = "on the command line (where hashes cannot be given)" if specs else "without --require-hashes"
        result.findings.append(finding("I1", f"Unpinned launch: pip install {where}; the files installed are not "
                                             "held to known hashes.",
                                       evidence=f"{len(specs)} requirement(s), {requirement_files} requirements "
                                                f"file(s), --require-hashes {'on' if require_hashes else 'off'}"))


def parse_pypi_spec(text: str, *, uvx_style: bool = False) -> PackageRef:
    """A PyPI requirement: name[extras]<specifier>, uvx's name@version, git+URL@ref, URL or local path."""
    text = text.strip()
    direct = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*@\s*(\S+://\S+)$", text)
    if direct:  # PEP 508 direct reference: name @ url
        text = direct.group(3)
    if text.startswith("git+"):
        ref = re.sub(r"#.*$", "", text).rpartition("@")[2] if "@" in text.split("://", 1)[-1] else ""
        ref = "" if "/" in ref or ":" in ref else ref
        return PackageRef("pypi", re.sub(r"[@#].*$", "", without_secrets(text)), ref, "git", without_secrets(text),
                          bool(_FULL_SHA.match(ref.lower())))
    if re.match(r"^[a-z][a-z0-9+.-]*://", text, re.I):
        return PackageRef("pypi", without_secrets(text), "", "url", without_secrets(text),
                          "#sha256=" in text or "&sha256=" in text)
    if text.startswith(("./", "../", "/", "~/", ".")) or text.endswith((".whl", ".tar.gz", ".zip")):
        return PackageRef("pypi", text, source="file", display=text, pinned=True)
    if uvx_style and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?@[^@\s]+", text):
        name, _, version = text.partition("@")
        name = name.partition("[")[0]
        spec = "latest" if version == "latest" else f"=={version}"
        return PackageRef("pypi", name, spec, "registry", text, ecosystem_named("pypi").exact_version(spec) is not None)
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return PackageRef("pypi", text, "", "registry", text, False)
    spec = str(req.specifier)
    return PackageRef("pypi", req.name, spec, "registry", text, ecosystem_named("pypi").exact_version(spec) is not None)


_DOCKER_VALUE_OPTS = {
    "-e", "--env", "--env-file", "-v", "--volume", "--mount", "-p", "--publish", "--name", "--network", "--net",
    "-w", "--workdir", "-u", "--user", "--entrypoint", "-l", "--label", "--label-file", "-h", "--hostname",
    "--add-host", "--cap-add", "--cap-drop", "--device", "--dns", "--dns-option", "--dns-search", "--ulimit",
    "--tmpfs", "--security-opt", "-m", "--memory", "--memory-swap", "--memory-reservation", "--cpus",
    "--cpu-shares", "--cpuset-cpus", "--cpuset-mems", "--pull", "--platform", "--restart", "--log-driver",
    "--log-opt", "--runtime", "--gpus", "--ipc", "--pid", "--userns", "--uts", "--cgroupns", "--cgroup-parent",
    "--shm-size", "--stop-signal", "--stop-timeout", "--health-cmd", "--health-interval", "--health-retries",
    "--health-timeout", "--health-start-period", "--cidfile", "--link", "--expose", "--group-add",
    "--mac-address", "--ip", "--ip6", "--network-alias", "--volumes-from", "-a", "--attach", "--detach-keys",
    "--domainname", "--isolation", "--oom-score-adj", "--storage-opt", "--sysctl", "--annotation",
    "--blkio-weight", "--pids-limit", "--device-cgroup-rule", "--env-host", "--arch", "--os", "--variant",
}


def _docker_image(words: list[str]) -> PackageRef | None:
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-"):
            break
        name = word.partition("=")[0]
        if "=" not in word and name in _DOCKER_VALUE_OPTS:
            i += 1
        i += 1
    if i >= len(words):
        return None
    image = words[i]
    pinned = bool(_IMAGE_DIGEST.search(image))
    return PackageRef("oci", image, image.partition("@")[2], "image", image, pinned)
