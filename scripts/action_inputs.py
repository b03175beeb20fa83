"""The GitHub Action's inputs: what action.yml declares (with its defaults), each one validated, and the Config the
action runs with. A bad input raises InputError naming it; scripts/action.py prints it as one line and exits 2.
Standard library only."""

from __future__ import annotations

import os
import re
import shlex
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

# Every input action.yml declares, with its default there ("" = none). tests/test_action.py checks the two agree.
INPUTS: dict[str, str] = {
    "target": "",
    "url": "",
    "headers": "",
    "header-env": "",
    "allow-writes": "false",
    "command": "",
    "server-args": "",
    "server-env": "",
    "working-directory": ".",
    "fail-on": "error",
    "fail-under": "",
    "max-calls": "",
    "sarif": "",
    "report-dir": "",
    "lock": "",
    "lock-mode": "check",
    "lock-fail-on": "warning",
    "lock-key": "",
    "sign-key-env": "",
    "summary": "true",
    "cache-images": "false",  # opt-in (docs/ci.md); read by scripts/action_images.py, refused here like every input
}
# Left in RUNNER_TEMP by the scan step before anything runs; scripts/action_images.py saves no image after it.
ENGINE_USED = "mcp-sandbox-engine-used"
# Every output the script writes; action.yml exposes each as steps.scan.outputs.<name>.
LEVELS = ("info", "warning", "error", "never")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")


class InputError(Exception):
    def __init__(self, name: str, message: str) -> None:
        super().__init__(f'input "{name}": {message}')


@dataclass(frozen=True)
class Remote:
    """The url input and its headers: a remote Streamable HTTP server, scanned NOT sandboxed."""

    url: str = field(repr=False)  # never printed: `shown` is
    shown: str  # scheme://host[:port]
    headers: list[str] = field(default_factory=list)  # 'NAME: VALUE', non-secret
    header_envs: list[str] = field(default_factory=list)  # NAME=VAR, the secret in the step's env
    allow_writes: bool = False


@dataclass
class Config:
    workdir: Path
    target: str  # "" with url
    command: str | None
    server_args: list[str]
    server_env: list[str]
    fail_on: str
    fail_under: int | None
    sarif: Path
    report_dir: Path
    lock: Path | None
    lock_mode: str
    lock_fail_on: str
    lock_key: Path | None
    sign_env: str | None
    summary: bool
    remote: Remote | None = None
    max_calls: int | None = None
    report: Path = field(init=False)
    markdown: Path = field(init=False)
    changes: Path = field(init=False)

    def __post_init__(self) -> None:
        self.report = self.report_dir / "report.json"
        self.markdown = self.report_dir / "report.md"
        self.changes = self.report_dir / "lock-changes.json"


def read_input(name: str) -> str:
    return os.environ.get("INPUT_" + name.upper().replace("-", "_"), INPUTS[name]).strip()


def _no_control(name: str, value: str) -> str:
    if any(ch in value for ch in "\x00\r\n"):
        raise InputError(name, "must be a single line")
    return value


def _path(name: str, value: str, base: Path) -> Path:
    if not value:
        raise InputError(name, "must not be empty")
    _no_control(name, value)
    path = Path(value)
    return path if path.is_absolute() else base / path


def _level(name: str) -> str:
    value = read_input(name)
    if value not in LEVELS:
        raise InputError(name, f"must be one of {', '.join(LEVELS)}, not {value!r}")
    return value


def _bool(name: str) -> bool:
    value = read_input(name).lower()
    if value not in ("true", "false"):
        raise InputError(name, f"must be true or false, not {value!r}")
    return value == "true"


def load_config() -> Config:
    """Every input, validated in the order action.yml lists them; the first bad one raises InputError."""
    workdir = _workdir()
    remote = _remote()
    target = _target(workdir) if remote is None else ""
    command = _no_control("command", read_input("command")) or None
    server_args, server_env = _server_args(), _server_env()
    if remote is not None:
        given = [name for name, value in (("target", read_input("target")), ("command", command),
                                          ("server-args", server_args), ("server-env", server_env)) if value]
        if given:
            raise InputError(given[0], "does not go with url (a remote server is not installed or launched)")
    fail_under, max_calls = _fail_under(), _max_calls()
    report_dir, sarif = _report_paths(workdir)
    lock_mode, lock, lock_key = _lock_inputs(workdir)
    _separate_files(report_dir, sarif, lock, lock_key)
    sign_env = _sign_env()
    _bool("cache-images")
    return Config(workdir=workdir, target=target, command=command, server_args=server_args, server_env=server_env,
                  fail_on=_level("fail-on"), fail_under=fail_under, sarif=sarif, report_dir=report_dir, lock=lock,
                  lock_mode=lock_mode, lock_fail_on=_level("lock-fail-on"), lock_key=lock_key, sign_env=sign_env,
                  summary=_bool("summary"), remote=remote, max_calls=max_calls)


def _workdir() -> Path:
    raw_workdir = read_input("working-directory") or "."
    _no_control("working-directory", raw_workdir)
    workdir = Path(raw_workdir).resolve()
    if not workdir.is_dir():
        raise InputError("working-directory", f"{raw_workdir!r} is not a directory")
    return workdir


def _remote() -> Remote | None:
    """The url input (None without one) and the inputs that go with it; the URL is never echoed back."""
    url = read_input("url")
    headers = [line.strip() for line in read_input("headers").splitlines() if line.strip()]
    header_envs = [line.strip() for line in read_input("header-env").splitlines() if line.strip()]
    allow_writes = _bool("allow-writes")
    if not url:
        extra = next((n for n, v in (("headers", headers), ("header-env", header_envs), ("allow-writes",
                                                                                        allow_writes)) if v), None)
        if extra:
            raise InputError(extra, "applies to a remote server: give url too")
        return None
    parts = urllib.parse.urlsplit(url)
    if any(ch in url for ch in "\x00\r\n \t") or parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError("url", "must be one http:// or https:// URL with a host (e.g. https://host/mcp)")
    for line in headers:
        name, sep, _ = line.partition(":")
        if not sep or not HEADER_NAME.match(name.strip()):
            raise InputError("headers", "each line must be 'NAME: VALUE' (for a secret, use header-env)")
    for line in header_envs:
        name, sep, variable = line.partition("=")
        if not sep or not HEADER_NAME.match(name.strip()) or not ENV_NAME.match(variable.strip()):
            raise InputError("header-env", "each line must be NAME=VAR (the header, and the step env variable "
                                           "holding its secret value)")
    try:
        port = parts.port
    except ValueError:
        raise InputError("url", "has a port that is not a number from 0 to 65535") from None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    shown = f"{parts.scheme}://{host}" + (f":{port}" if port else "")
    return Remote(url, shown, headers, header_envs, allow_writes)


def _target(workdir: Path) -> str:
    target = _no_control("target", read_input("target"))
    if not target:
        raise InputError("target", "is required (or url): npm:NAME[@VERSION], pypi:NAME[==VERSION], a folder, .tgz, "
                                   ".whl or .tar.gz")
    if target.startswith("-"):
        raise InputError("target", f"must not start with '-': {target!r}")
    if not target.startswith(("npm:", "pypi:")) and not (workdir / target).exists():
        raise InputError("target", f"{target!r} is neither npm:NAME, pypi:NAME nor an existing path under {workdir}")
    return target


def _server_args() -> list[str]:
    try:
        server_args = shlex.split(read_input("server-args"))
    except ValueError as exc:
        raise InputError("server-args", f"cannot be split into arguments ({exc})") from None
    if any(ch in arg for arg in server_args for ch in "\x00\r\n"):
        raise InputError("server-args", "an argument must not contain NUL or line breaks")
    return server_args


def _server_env() -> list[str]:
    server_env = []
    for line in read_input("server-env").splitlines():
        line = line.strip()
        if not line:
            continue
        name, sep, _value = line.partition("=")
        if not sep or not ENV_NAME.match(name) or "\x00" in line:
            raise InputError("server-env", f"each line must be NAME=VALUE with NAME like ABC_1, not {name!r}")
        server_env.append(line)
    return server_env


def _fail_under() -> int | None:
    raw = read_input("fail-under")
    if not raw:
        return None
    if not re.fullmatch(r"\d{1,3}", raw) or int(raw) > 100:
        raise InputError("fail-under", f"must be a whole number from 0 to 100, not {raw!r}")
    return int(raw)


def _max_calls() -> int | None:
    raw = read_input("max-calls")
    if not raw:
        return None
    if not re.fullmatch(r"\d{1,6}", raw) or not 1 <= int(raw) <= 100_000:
        raise InputError("max-calls", f"must be a whole number from 1 to 100000, not {raw!r}")
    return int(raw)


def _report_paths(workdir: Path) -> tuple[Path, Path]:
    """The report folder and the SARIF file. Reports default to the runner's temp folder, never into the folder
    being scanned (a local target is copied into the sandbox whole)."""
    raw = read_input("report-dir")
    report_dir = (_path("report-dir", raw, workdir) if raw
                  else Path(os.environ.get("RUNNER_TEMP") or workdir) / "mcp-sandbox-report")
    if report_dir.exists() and not report_dir.is_dir():
        raise InputError("report-dir", f"{report_dir} exists and is not a directory")
    raw = read_input("sarif")
    sarif = _path("sarif", raw, workdir) if raw else report_dir / "mcp-sandbox.sarif"
    if sarif.is_dir():
        raise InputError("sarif", f"{sarif} is a directory; give a file path")
    return report_dir, sarif


def _lock_inputs(workdir: Path) -> tuple[str, Path | None, Path | None]:
    """lock-mode, lock and lock-key, checked against each other."""
    lock_mode = read_input("lock-mode")
    if lock_mode not in ("check", "update"):
        raise InputError("lock-mode", f"must be check or update, not {lock_mode!r}")
    lock = _path("lock", raw, workdir) if (raw := read_input("lock")) else None
    if lock is not None and lock_mode == "check" and not lock.is_file():
        raise InputError("lock", f"{lock} does not exist; create it with lock-mode: update (or `mcp-sandbox lock "
                                 "--from report.json`) and commit it")
    lock_key = _path("lock-key", raw, workdir) if (raw := read_input("lock-key")) else None
    if lock_key is not None:
        if lock is None or lock_mode != "check":
            raise InputError("lock-key", "only applies with a lock and lock-mode: check")
        if not lock_key.is_file():
            raise InputError("lock-key", f"{lock_key} is not a file (the signer's public key, PEM)")
    return lock_mode, lock, lock_key


def _separate_files(report_dir: Path, sarif: Path, lock: Path | None, lock_key: Path | None) -> None:
    """The SARIF file and the lock are files of their own: the action removes an earlier run's reports before the
    scan, and each step writes its own file, so a shared path would delete a committed lock or key, or hand
    upload-sarif a lock-changes file."""
    names = ("report.json", "report.md", "lock-changes.json", "report.json.intoto.json")
    ours = {(report_dir / name).resolve(): name for name in names}  # resolved: `a/../lock` is `lock`, links followed
    for name, path in (("sarif", sarif), ("lock", lock)):
        if path is None:
            continue
        if (clash := ours.get(path.resolve())) is not None:
            raise InputError(name, f"{path} is the action's {clash} in report-dir; give another path")
    for what, path in (("lock", lock), ("lock-key", lock_key)):
        if path is not None and sarif.resolve() == path.resolve():
            raise InputError("sarif", f"{sarif} is the {what}; give another path")


def _sign_env() -> str | None:
    sign_env = read_input("sign-key-env") or None
    if sign_env is not None:
        if not ENV_NAME.match(sign_env):
            raise InputError("sign-key-env", f"must be an environment variable name like SIGNING_KEY, not {sign_env!r}")
        if not os.environ.get(sign_env):
            raise InputError("sign-key-env", f"the variable {sign_env} is not set or empty; map a secret to it in the "
                                             "step's env:")
    return sign_env
