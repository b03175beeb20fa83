"""Canaries: fake secrets planted in the sandbox HOME and environment, each a unique random token per run.

A token showing up in a tool response or in egress traffic means the server read a secret and sent it somewhere.
`find_canaries` also spots the tokens base64-, base32- or hex-encoded, with their case changed, reversed, or a piece of
one (PIECE_MIN characters or more: half a token in each of two responses, or in two DNS names).
"""

from __future__ import annotations

import base64
import functools
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

PIECE_WINDOW = 16  # a piece is matched by the token's windows of this length, every PIECE_STRIDE characters:
PIECE_STRIDE = 4  # so every piece of PIECE_WINDOW + PIECE_STRIDE - 1 characters holds one
PIECE_MIN = PIECE_WINDOW + PIECE_STRIDE - 1
RUN_MARK = b"a" * PIECE_MIN  # in a blob's alphabet mask (`_alphabet_mask`): a run that could hold a piece

ENV_CANARY_NAMES = ("GITHUB_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "NPM_TOKEN", "OPENAI_API_KEY")


@dataclass(frozen=True)
class CanaryHit:
    token: str
    where: str  # where it was planted, e.g. "/home/probe/.ssh/id_rsa" or "env GITHUB_TOKEN"
    encoding: str  # how it appeared: "plain", "base64", "base32", "hex", "case changed", "reversed" or "piece"


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


def find_canaries(blob: str | bytes, locations: dict[str, str]) -> list[CanaryHit]:
    """Every canary token found in blob, each once, in the order of locations: plain, base64, hex or base32 encoded
    (base32 and hex in either case: DNS names are case-insensitive, which is why a DNS tunnel encodes in them), then
    with its case changed, reversed, or a piece of PIECE_MIN characters or more (in either case)."""
    data = blob.encode("utf-8", errors="surrogateescape") if isinstance(blob, str) else blob
    lowered = data.lower()
    runs = lowered if RUN_MARK in lowered.translate(_alphabet_mask(tuple(locations))) else b""
    hits: list[CanaryHit] = []
    for token, where in locations.items():
        encoding = _encoding(token, data, lowered, runs)
        if encoding:
            hits.append(CanaryHit(token, where, encoding))
    return hits


@functools.lru_cache(maxsize=64)
def _alphabet_mask(tokens: tuple[str, ...]) -> bytes:
    """A bytes.translate table: each character of the tokens' own (lower-case) alphabet to `a`, every other to a
    space. A token changed in case, reversed, or a piece of one is a run of PIECE_MIN or more such characters, so a
    blob whose mask holds no such run (RUN_MARK) needs none of those searches: most text (a 1.2 MB log) has none."""
    alphabet = {ord(char) for token in tokens for char in token.lower()}
    return bytes(ord("a") if byte in alphabet else ord(" ") for byte in range(256))


def _encoding(token: str, data: bytes, lowered: bytes, runs: bytes) -> str | None:
    """How token appears in data (lowered: data in lower case; runs: the same, or empty when it holds no run of the
    tokens' alphabet long enough for a piece), or None."""
    raw, base64s, hexed, base32s = _encoded(token)
    if raw in data:
        return "plain"
    if any(form in data for form in base64s):
        return "base64"
    if hexed in lowered:
        return "hex"
    if any(form in lowered for form in base32s):
        return "base32"
    folded, backwards, pieces = _altered(token)
    if folded in runs:
        return "case changed"
    if backwards in runs:
        return "reversed"
    if any(piece in runs for piece in pieces):
        return "piece"
    return None


@functools.lru_cache(maxsize=256)
def _altered(token: str) -> tuple[bytes, bytes, tuple[bytes, ...]]:
    """The lower-case forms a token is searched in after its encodings: itself, reversed, and its pieces."""
    folded = token.lower().encode()
    pieces = tuple(folded[start:start + PIECE_WINDOW]
                   for start in range(0, len(folded) - PIECE_WINDOW + 1, PIECE_STRIDE))
    return folded, folded[::-1], pieces


@functools.lru_cache(maxsize=256)  # a scan searches every response and egress event for the same dozen tokens
def _encoded(token: str) -> tuple[bytes, tuple[bytes, ...], bytes, tuple[bytes, ...]]:
    """The forms a token is searched in: itself, its base64 cores, its hex (lower case), its base32 cores."""
    raw = token.encode()
    return raw, tuple(base64_forms(raw)), raw.hex().encode(), tuple(base32_forms(raw))


def base64_forms(raw: bytes) -> list[bytes]:
    """The stable core of raw's base64 encoding at each of the three byte alignments (standard and URL-safe)."""
    forms: list[bytes] = []
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw)
        # Drop the characters mixed with the unknown neighbouring bytes: 4 at the front when shifted, 4 at the end.
        core = encoded[4 if shift else 0: len(encoded) - 4]
        if len(core) >= 16:
            forms.append(core)
            forms.append(core.replace(b"+", b"-").replace(b"/", b"_"))
    return forms


def base32_forms(raw: bytes) -> list[bytes]:
    """The stable core of raw's base32 encoding at each of the five byte alignments, lower case (the search reads
    the lowered blob): 8 characters mixed with the unknown neighbouring bytes dropped at the front when shifted, 8 at
    the end (a partial group, or padding)."""
    forms: list[bytes] = []
    for shift in range(5):
        encoded = base64.b32encode(b"\0" * shift + raw).lower()
        core = encoded[8 if shift else 0: len(encoded) - 8]
        if len(core) >= 16:
            forms.append(core)
    return forms


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
