"""Canaries: planted files and env vars, unique per run, and found again in any blob (plain, base64, hex)."""

from __future__ import annotations

import base64
import io
import tarfile

from sandbox.run.canaries import find_canaries, plant_canaries

HOME = "/home/probe"


def archive_files(data: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        return {member.name: member for member in archive.getmembers()}


def archive_text(data: bytes, name: str) -> str:
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        return archive.extractfile(name).read().decode()


def test_plants_the_expected_files_privately_and_owned() -> None:
    planted = plant_canaries(HOME, 1000, 1001)
    entries = archive_files(planted.home_archive)
    for name in (".ssh/id_rsa", ".aws/credentials", ".config/gh/hosts.yml", ".env"):
        assert entries[name].isfile() and entries[name].mode == 0o600
    for name in (".ssh", ".aws", ".config", ".config/gh"):
        assert entries[name].isdir() and entries[name].mode == 0o700
    assert {(entry.uid, entry.gid) for entry in entries.values()} == {(1000, 1001)}
    assert planted.files == tuple(sorted(f"{HOME}/{name}" for name in
                                         (".ssh/id_rsa", ".aws/credentials", ".config/gh/hosts.yml", ".env")))


def test_every_token_is_where_the_map_says() -> None:
    planted = plant_canaries(HOME, 1000, 1000)
    for token, where in planted.locations.items():
        if where.startswith("env "):
            assert planted.env[where.removeprefix("env ")] == token
        else:
            path = where.split(" (")[0].removeprefix(HOME + "/")
            assert token in archive_text(planted.home_archive, path), where
    assert {"GITHUB_TOKEN", "AWS_ACCESS_KEY_ID"} <= set(planted.env)


def test_tokens_are_unique_within_and_across_runs() -> None:
    first, second = plant_canaries(HOME, 0, 0), plant_canaries(HOME, 0, 0)
    assert len(set(first.locations)) == len(first.locations) >= 9
    assert not set(first.locations) & set(second.locations)
    assert all(len(token) >= 16 for token in first.locations)


def test_finds_plain_tokens_and_names_where_they_came_from() -> None:
    planted = plant_canaries(HOME, 0, 0)
    token = planted.env["GITHUB_TOKEN"]
    hits = find_canaries(f'POST /collect {{"t": "{token}"}}', planted.locations)
    assert [(hit.where, hit.encoding) for hit in hits] == [("env GITHUB_TOKEN", "plain")]


def test_finds_base64_and_hex_encoded_tokens_in_bytes() -> None:
    planted = plant_canaries(HOME, 0, 0)
    ssh_token = next(token for token, where in planted.locations.items() if where.endswith(".ssh/id_rsa"))
    for prefix in (b"", b"x", b"xy"):  # every base64 alignment
        blob = b"GET /?d=" + base64.b64encode(prefix + ssh_token.encode()) + b" HTTP/1.1"
        hits = find_canaries(blob, planted.locations)
        assert [(hit.token, hit.encoding) for hit in hits] == [(ssh_token, "base64")], prefix
    aws = planted.env["AWS_SECRET_ACCESS_KEY"]
    hits = find_canaries(b"data=" + aws.encode().hex().upper().encode(), planted.locations)
    assert [(hit.where, hit.encoding) for hit in hits] == [("env AWS_SECRET_ACCESS_KEY", "hex")]


def test_clean_blob_has_no_hits() -> None:
    planted = plant_canaries(HOME, 0, 0)
    other = plant_canaries(HOME, 0, 0)
    blob = "\n".join(other.locations) + archive_text(other.home_archive, ".aws/credentials")
    assert find_canaries(blob, planted.locations) == []
    assert find_canaries(b"\xff\xfe binary", planted.locations) == []


def test_finds_a_token_whose_case_was_changed() -> None:
    """An AWS key id is upper case and digits: lowered it loses nothing, and a DNS name carries it either way."""
    planted = plant_canaries(HOME, 0, 0)
    key_id = planted.env["AWS_ACCESS_KEY_ID"]
    hits = find_canaries(f"id: {key_id.lower()}", planted.locations)
    assert [(hit.where, hit.encoding) for hit in hits] == [("env AWS_ACCESS_KEY_ID", "case changed")]


def test_finds_a_reversed_token() -> None:
    planted = plant_canaries(HOME, 0, 0)
    token = planted.env["GITHUB_TOKEN"]
    hits = find_canaries(f"build id: {token[::-1]}", planted.locations)
    assert [(hit.where, hit.encoding) for hit in hits] == [("env GITHUB_TOKEN", "reversed")]


def test_finds_a_piece_of_a_token_sent_split_across_calls() -> None:
    """Half a token in one response and half in the next: each half is a piece of 19 characters or more."""
    planted = plant_canaries(HOME, 0, 0)
    key = planted.env["AWS_SECRET_ACCESS_KEY"]  # 40 characters: halves of 20
    for half in (key[:20], key[20:], key[7:26].upper()):
        hits = find_canaries(f"part: {half}", planted.locations)
        assert [(hit.where, hit.encoding) for hit in hits] == [("env AWS_SECRET_ACCESS_KEY", "piece")], half
    assert find_canaries(f"part: {key[:15]}", planted.locations) == []  # near miss: too short to tell from noise
