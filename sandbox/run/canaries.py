"""Canaries: fake secrets planted in the sandbox HOME and environment, each a unique random token per run.

A token showing up in a tool response or in egress traffic means the server read a secret and sent it somewhere
(`canary_search.find_canaries` looks for them).
"""

from __future__ import annotations

import io
import random
import secrets
import string
import tarfile
from dataclasses import dataclass
from pathlib import PurePosixPath

from sandbox.run.seed_dates import CANARY_AGES, dir_times, draw_rng, file_times, scan_time

_ALPHANUMERIC = string.ascii_letters + string.digits
_UPPER_ALPHANUMERIC = string.ascii_uppercase + string.digits
_BASE64 = _ALPHANUMERIC + "+/"
# The host gh writes (`github.invalid` said "test data" to any server reading the file). Only text in a planted file:
# the sandbox has no route out, and nothing on the scanning host reads it.
GH_HOST = "github.com"
SSH_KEY_LINE = 70  # ssh-keygen's base64 line length
SSH_KEY_LINES = 35  # the full lines of an RSA 3072 key (ssh-keygen's default; the header below says ssh-rsa, 407 B)
SSH_KEY_TAIL = 22  # its last, short line (no comment)
_SSH_RSA_MODULUS_START = "NhAAAAAwEAAQAAAYEA"  # "sa", e = 65537, a 385-byte modulus: how every such key's line 2 starts


ENV_CANARY_NAMES = ("GITHUB_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "NPM_TOKEN", "OPENAI_API_KEY")


@dataclass(frozen=True)
class PlantedCanaries:
    home_archive: bytes  # a tar to extract at HOME; member names are relative to HOME
    env: dict[str, str]  # environment variables to set in the sandbox
    locations: dict[str, str]  # token → where it was planted
    files: tuple[str, ...]  # absolute paths of the planted files


def random_token(length: int, alphabet: str = _ALPHANUMERIC) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def github_token(prefix: str = "ghp_") -> str:
    return prefix + random_token(36)


def aws_access_key_id() -> str:
    return "AKIA" + random_token(16, _UPPER_ALPHANUMERIC)


def aws_secret_access_key() -> str:
    return random_token(40)


def plant_canaries(home: str, uid: int, gid: int, *, now: float | None = None,
                   rng: random.Random | None = None) -> PlantedCanaries:
    """Make fresh canaries: the HOME files as a tar (owned by uid:gid, private modes, dated by draws of rng months
    before now: fresh ones each call unless given), the env vars, and the map."""
    locations: dict[str, str] = {}
    contents: dict[str, str] = {}

    ssh_token = random_token(SSH_KEY_LINE)
    contents[".ssh/id_rsa"] = _fake_private_key(ssh_token)
    locations[ssh_token] = f"{home}/.ssh/id_rsa"

    key_id, secret = aws_access_key_id(), aws_secret_access_key()
    contents[".aws/credentials"] = (
        f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\nregion = us-east-1\n")
    locations[key_id] = f"{home}/.aws/credentials (aws_access_key_id)"
    locations[secret] = f"{home}/.aws/credentials (aws_secret_access_key)"

    gh = github_token("gho_")
    contents[".config/gh/hosts.yml"] = (
        f"{GH_HOST}:\n    user: dara-lind\n    oauth_token: {gh}\n    git_protocol: https\n")
    locations[gh] = f"{home}/.config/gh/hosts.yml"

    dotenv_github, dotenv_db = github_token(), random_token(32)
    contents[".env"] = (
        f"GITHUB_TOKEN={dotenv_github}\nDATABASE_URL=postgres://app:{dotenv_db}@localhost:5432/app\n")
    locations[dotenv_github] = f"{home}/.env (GITHUB_TOKEN)"
    locations[dotenv_db] = f"{home}/.env (DATABASE_URL password)"

    env = _env_canaries()
    locations.update({value: f"env {name}" for name, value in env.items()})
    times = file_times(sorted(contents), scan_time(now), CANARY_AGES, rng or draw_rng())
    return PlantedCanaries(
        home_archive=_home_archive(contents, uid, gid, {**times, **dir_times(times)}),
        env=env,
        locations=locations,
        files=tuple(f"{home}/{path}" for path in sorted(contents)),
    )


def _env_canaries() -> dict[str, str]:
    return {
        "GITHUB_TOKEN": github_token(),
        "AWS_ACCESS_KEY_ID": aws_access_key_id(),
        "AWS_SECRET_ACCESS_KEY": aws_secret_access_key(),
        "NPM_TOKEN": "npm_" + random_token(36),
        "OPENAI_API_KEY": "sk-proj-" + random_token(48),
    }


def _fake_private_key(token: str) -> str:
    """An OpenSSH private key block shaped as ssh-keygen writes an RSA 3072 key (35 lines of 70 characters, the first
    and the second's start its real public-key header, then a short one) whose third line is the token, so the
    token stays contiguous in whatever copy of the file leaks. Not a usable key: the private part does not parse."""
    filler = [random_token(SSH_KEY_LINE, _BASE64) for _ in range(SSH_KEY_LINES - 3)]
    lines = ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn",
             _SSH_RSA_MODULUS_START + random_token(SSH_KEY_LINE - len(_SSH_RSA_MODULUS_START), _BASE64), token,
             *filler, random_token(SSH_KEY_TAIL, _BASE64)]
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----\n"


def _home_archive(contents: dict[str, str], uid: int, gid: int, times: dict[str, int]) -> bytes:
    """The files and their folders (times: each one's mtime) as a tar to extract at HOME."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        parents = {str(parent) for path in contents for parent in PurePosixPath(path).parents}
        dirs = sorted(parents - {"."})
        for directory in dirs:
            info = _info(directory, 0o700, uid, gid, times[directory])
            info.type = tarfile.DIRTYPE
            archive.addfile(info)
        for path in sorted(contents):
            data = contents[path].encode()
            info = _info(path, 0o600, uid, gid, times[path])
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _info(name: str, mode: int, uid: int, gid: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mode, info.uid, info.gid, info.mtime = mode, uid, gid, mtime
    return info
