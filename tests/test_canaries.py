"""Canaries: planted files and env vars, unique per run, and found again in any blob (plain, base64, hex)."""

from __future__ import annotations

import base64
import io
import tarfile

from sandbox.run.canaries import plant_canaries
from sandbox.run.canary_search import find_canaries

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


# ---- what a server reading them sees (docs/probes.md, "Anti-evasion") ---------------------------------------------

def test_the_ssh_key_has_the_shape_of_an_rsa_3072_key_ssh_keygen_writes() -> None:
    """It was 5 body lines (the token's one 64 characters) under a header declaring a 407-byte RSA public key: a
    3072-bit key's file is 38 lines, 35 of 70 base64 characters and a short one, whatever a reader decodes."""
    planted = plant_canaries(HOME, 0, 0)
    lines = archive_text(planted.home_archive, ".ssh/id_rsa").splitlines()
    assert (lines[0], lines[-1]) == ("-----BEGIN OPENSSH PRIVATE KEY-----", "-----END OPENSSH PRIVATE KEY-----")
    body = lines[1:-1]
    assert [len(line) for line in body] == [70] * 35 + [22]
    assert body[1].startswith("NhAAAAAwEAAQAAAYEA")  # e = 65537, a 385-byte modulus: as every such key
    token = next(token for token, where in planted.locations.items() if where.endswith(".ssh/id_rsa"))
    assert token in body
    assert set("".join(body)) > set(token)  # the filler uses the whole base64 alphabet, the token plain letters


def test_no_planted_file_names_a_test_host() -> None:
    """`github.invalid` in gh's hosts.yml and `db.example.invalid` in .env said "test data" to a server grepping HOME;
    gh writes github.com (the sandbox has no route out, and nothing on the host reads the file)."""
    planted = plant_canaries(HOME, 0, 0)
    with tarfile.open(fileobj=io.BytesIO(planted.home_archive)) as archive:
        texts = [archive.extractfile(member).read().decode() for member in archive if member.isfile()]
    assert not [text for text in texts if ".invalid" in text or "example." in text]
    assert archive_text(planted.home_archive, ".config/gh/hosts.yml").startswith("github.com:\n")


def test_the_files_are_dated_per_scan_months_back() -> None:
    """Every file and folder was dated 2024-01-01T00:00:00Z in every scan: now each scan draws its own dates."""
    now = 1_800_000_000
    first = archive_files(plant_canaries(HOME, 0, 0, now=now).home_archive)
    second = archive_files(plant_canaries(HOME, 0, 0, now=now).home_archive)
    assert all(now - 400 * 86_400 <= entry.mtime < now - 40 * 86_400 for entry in first.values())
    assert len({entry.mtime for entry in first.values() if entry.isfile()}) > 1
    assert {name: entry.mtime for name, entry in first.items()} != {name: e.mtime for name, e in second.items()}
    assert first[".ssh"].mtime == first[".ssh/id_rsa"].mtime
    assert first[".config"].mtime == first[".config/gh"].mtime == first[".config/gh/hosts.yml"].mtime


# ---- the block prefilter (sandbox/run/canary_search.py): it may only rule out blobs that hold no form ----------------

def _every_form(planted_token: str) -> list[tuple[bytes, str]]:
    """Each form a token is searched in, written as a server would send it, with the encoding it should be found as."""
    raw = planted_token.encode()
    forms = [(raw, "plain"), (raw.hex().upper().encode(), "hex"), (planted_token[::-1].encode(), "reversed"),
             (planted_token.swapcase().encode(), "case changed"), (raw[1:20], "piece")]
    for prefix in (b"", b"x", b"xy"):
        forms.append((base64.b64encode(prefix + raw), "base64"))
        forms.append((base64.urlsafe_b64encode(prefix + raw), "base64"))
    for prefix in (b"", b"x", b"xy", b"xyz", b"wxyz"):
        forms.append((base64.b32encode(prefix + raw), "base32"))
    return forms


def test_every_form_is_found_at_every_offset_of_a_long_blob() -> None:
    """Whatever its offset modulo the prefilter's 8-byte block, a form inside a long blob is found, as the search of
    each form alone finds it."""
    planted = plant_canaries(HOME, 0, 0)
    filler = b"A quiet answer of 1,000 ordinary words. " * 50
    for token, where in planted.locations.items():
        for form, encoding in _every_form(token):
            for offset in range(8):
                blob = filler[:offset + 100] + b" " + form + b" " + filler
                hits = find_canaries(blob, planted.locations)
                assert [(hit.where, hit.encoding) for hit in hits] == [(where, encoding)], (where, encoding, offset)


def test_a_form_at_the_very_end_or_start_of_a_blob_is_found() -> None:
    planted = plant_canaries(HOME, 0, 0)
    token = planted.env["OPENAI_API_KEY"]
    for blob in (token.encode(), b"x" * 7 + token.encode(), token.encode() + b"y" * 5, token[:19].encode()):
        assert [hit.token for hit in find_canaries(blob, planted.locations)] == [token], blob


def test_a_blob_with_no_form_is_ruled_out_by_the_blocks_alone() -> None:
    """The speed the prefilter is for: a long answer holding none of the tokens never reaches the form searches
    (near miss: the same answer with one token in it does)."""
    from sandbox.run import canary_search

    planted = plant_canaries(HOME, 0, 0)
    windows = canary_search._windows(tuple(planted.locations))
    answer = (b"README: the tool lists files under /workspace and reads them back. " * 20_000)
    assert not canary_search._could_hold(answer.lower(), windows)
    token = planted.env["NPM_TOKEN"].encode()
    with_token = answer[:500_003] + token + answer[500_003:]
    assert canary_search._could_hold(with_token.lower(), windows)
