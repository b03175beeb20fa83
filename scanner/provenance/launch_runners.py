"""The runners a launch command may use (npx / pnpx / bunx / npm exec / pnpm dlx / yarn dlx, uvx / uv run / uv tool
run / pipx run, pip / python -m pip, docker run / podman run): each one's options read, the packages it would
fetch collected (and, for the runners of one package, the program and arguments they would run it with:
`runner_call`). `pip install` outside a hash-checked requirements file is itself an I1 finding."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from scanner.provenance.launch_downloads import DOWNLOADERS, download_finding
from scanner.provenance.package_specs import PackageRef, image_ref, parse_npm_spec, parse_pypi_spec
from scanner.provenance.shell_words import program_name
from scanner.report.model import Finding
from scanner.rules.provenance import finding


@dataclass
class LaunchAnalysis:
    """The runner a launch command uses first, the packages it would fetch, and the findings about them."""

    runner: str | None = None
    packages: list[PackageRef] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def dispatch(argv: list[str], result: LaunchAnalysis) -> None:
    """Add what one program's argv would fetch (and any I1 finding about how) to the analysis."""
    call = runner_call(argv)
    if call is not None:
        _set_runner(result, call.runner)
        result.packages.extend(call.packages)
        return
    prog, rest = program_name(argv[0]), argv[1:]
    sub = rest[0].lower() if rest else ""
    if prog == "uv" and sub == "run":
        _set_runner(result, "uv run")
        result.packages.extend(_uv_run(rest[1:]))
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
    elif prog in DOWNLOADERS:
        _set_runner(result, prog)
        result.findings.append(download_finding(prog, rest))


@dataclass(frozen=True)
class RunnerCall:
    """A package runner's argv read: the runner, what it fetches (the package it runs first), the program it runs
    when the argv names one other than the package's own, and the arguments that program gets."""

    runner: str
    packages: list[PackageRef]
    command: str | None = None
    args: list[str] = field(default_factory=list)
    options: frozenset[str] = frozenset()  # the runner's own options given (e.g. -c), for what cannot be mapped


def runner_call(argv: list[str]) -> RunnerCall | None:
    """npx / pnpx / bunx / npm exec / pnpm dlx / yarn dlx / uvx / uv tool run / pipx run, read; None for another
    program."""
    prog, rest = program_name(argv[0]), argv[1:]
    sub = rest[0].lower() if rest else ""
    if prog in ("npx", "pnpx", "bunx"):
        return _npx(prog, rest)
    if prog == "npm" and sub in ("exec", "x"):
        return _npx("npm exec", rest[1:])
    if prog in ("pnpm", "yarn") and sub == "dlx":
        return _npx(f"{prog} dlx", rest[1:])
    if prog == "uvx":
        return _uvx("uvx", rest)
    if prog == "uv" and sub == "tool" and len(rest) > 1 and rest[1] == "run":
        return _uvx("uv tool run", rest[2:])
    if prog == "pipx" and sub == "run":
        return _pipx_run(rest[1:])
    return None


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


# Every npm option that takes a value: npm 9's and npm 10's config definitions whose type is not boolean (npm 10's
# read in the node runtime image, npm 10.8.2: --os, --cpu, --libc, --expect-result-count, --provenance-file and the
# --sbom options are new), their one-word shorthands and aliases, and npx's -p / --shell. npm reads an option missing
# here as taking the next word, and then runs the word after it: the lint would read that value as the package.
_NPX_VALUE_OPTS = {
    "-p", "--package", "-c", "--call", "--shell", "--script-shell", "--node-options", "--registry", "--reg",
    "--cache", "--userconfig", "--globalconfig", "--prefix", "-C", "-w", "--workspace", "--loglevel", "--before",
    "--enjoy-by", "--location", "-L", "--message", "-m", "--tag", "--omit", "--include", "--only", "--also",
    "--install-strategy", "--lockfile-version", "--_auth", "--access", "--audit-level", "--auth-type", "--ca",
    "--cafile", "--cert", "--key", "--cache-max", "--cache-min", "--ci-name", "--cidr", "--depth", "--diff",
    "--diff-dst-prefix", "--diff-src-prefix", "--diff-unified", "--editor", "--viewer", "--which",
    "--fetch-retries", "--fetch-retry-factor", "--fetch-retry-maxtimeout", "--fetch-retry-mintimeout",
    "--fetch-timeout", "--git", "--heading", "--https-proxy", "--proxy", "--noproxy", "--local-address",
    "--maxsockets", "--logs-dir", "--logs-max", "--otp", "--pack-destination", "--preid", "--replace-registry-host",
    "--save-prefix", "--scope", "--searchexclude", "--searchlimit", "--searchopts", "--searchstaleness",
    "--tag-version-prefix", "--tmp", "--umask", "--user-agent", "--init-author-email", "--init-author-name",
    "--init-author-url", "--init-license", "--init-module", "--init-version", "--init.author.email",
    "--init.author.name", "--init.author.url", "--init.license", "--init.module", "--init.version",
    "--os", "--cpu", "--libc", "--expect-result-count", "--provenance-file", "--sbom-format", "--sbom-type",
}


def _npx(runner: str, words: list[str]) -> RunnerCall:
    opts, positionals = _options(words, _NPX_VALUE_OPTS)
    specs = opts.get("-p", []) + opts.get("--package", [])
    if specs:  # `npx -p PKG CMD ARGS`: CMD is the program
        command, args = (positionals[0], positionals[1:]) if positionals else (None, [])
    else:
        specs, command, args = positionals[:1], None, positionals[1:]
    return RunnerCall(runner, [parse_npm_spec(s) for s in specs if s], command, args, frozenset(opts))


# Every uv option that takes a value (uv 0.13 `uv tool run --help`, plus `uv run`'s): one missing here reads its
# value as the package.
_UV_VALUE_OPTS = {"--from", "-w", "--with", "--with-editable", "--with-requirements", "-p", "--python", "--index",
                  "--index-url", "-i", "--extra-index-url", "--default-index", "-f", "--find-links", "-c",
                  "--constraints", "--overrides", "-b", "--build-constraints", "--directory", "--project",
                  "--config-file", "--cache-dir", "--env-file", "--python-preference", "--resolution",
                  "--prerelease", "--prerelease-package", "--index-strategy", "--keyring-provider", "--exclude-newer",
                  "--exclude-newer-package", "--color", "--allow-insecure-host", "--refresh-package",
                  "--reinstall-package", "--upgrade-package", "-P", "--upgrade-group", "--no-binary-package",
                  "--only-binary-package", "--no-build-package", "--no-build-isolation-package",
                  "--no-sources-package", "-C", "--config-setting", "--config-settings-package", "--link-mode",
                  "--python-platform", "--torch-backend", "--fork-strategy", "--package", "--extra", "--group",
                  "--only-group", "--no-group", "-m", "--module", "--script"}
_UV_WITH = ("--with", "-w")


def _uvx(runner: str, words: list[str]) -> RunnerCall:
    opts, positionals = _options(words, _UV_VALUE_OPTS)
    specs = opts.get("--from", [])
    if specs:  # `uvx --from PKG CMD ARGS`: CMD is the program
        command, args = (positionals[0], positionals[1:]) if positionals else (None, [])
    else:
        specs, command, args = positionals[:1], None, positionals[1:]
    specs = [*specs, *(spec for option in _UV_WITH for spec in opts.get(option, []))]
    return RunnerCall(runner, [parse_pypi_spec(s, uvx_style=True) for s in specs if s], command, args,
                      frozenset(opts))


def _uv_run(words: list[str]) -> list[PackageRef]:
    opts, _ = _options(words, _UV_VALUE_OPTS)
    return [parse_pypi_spec(s) for option in _UV_WITH for s in opts.get(option, []) if s]


def _pipx_run(words: list[str]) -> RunnerCall:
    opts, positionals = _options(words, {"--spec", "--python", "--index-url", "-i", "--pip-args", "--backend"})
    specs = opts.get("--spec", [])
    if specs:  # `pipx run --spec PKG APP ARGS`: APP is the program
        command, args = (positionals[0], positionals[1:]) if positionals else (None, [])
    else:
        specs, command, args = positionals[:1], None, positionals[1:]
    return RunnerCall("pipx run", [parse_pypi_spec(s) for s in specs if s], command, args, frozenset(opts))


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
    return image_ref(words[i])
