"""Finding the planted canary tokens in what a server sent: a tool's answer, an egress attempt's first bytes, a DNS
name. `find_canaries` spots a token plain, base64-, base32- or hex-encoded, with its case changed, reversed, or a
piece of one (PIECE_MIN characters or more: half a token in each of two responses, or in two DNS names).

Every form searched is 16 bytes or longer, so any copy of one covers a whole 8-byte block of the blob at an offset
that is a multiple of 8. The search first asks whether any such block of the blob lowered is one of the forms'
8-byte windows, lowered too (`_could_hold`: a set lookup per block, about a quarter of the time of the forms' own
searches over a megabyte; one pass, since a form the blob holds as it is, its lowered blob holds lowered); only a blob
that could hold one is searched form by form. Most answers hold none."""

from __future__ import annotations

import base64
import functools
from dataclasses import dataclass

PIECE_WINDOW = 16  # a piece is matched by the token's windows of this length, every PIECE_STRIDE characters:
PIECE_STRIDE = 4  # so every piece of PIECE_WINDOW + PIECE_STRIDE - 1 characters holds one
PIECE_MIN = PIECE_WINDOW + PIECE_STRIDE - 1
RUN_MARK = b"a" * PIECE_MIN  # in a blob's alphabet mask (`_alphabet_mask`): a run that could hold a piece
FORM_MIN = 16  # no form is shorter: the base64 and base32 cores are kept only from this length, pieces are this long
BLOCK = 8  # the prefilter's block: at most FORM_MIN // 2, so every copy of a form covers one whole aligned block


@dataclass(frozen=True)
class CanaryHit:
    token: str
    where: str  # where it was planted, e.g. "/home/probe/.ssh/id_rsa" or "env GITHUB_TOKEN"
    encoding: str  # how it appeared: "plain", "base64", "base32", "hex", "case changed", "reversed" or "piece"


def find_canaries(blob: str | bytes, locations: dict[str, str]) -> list[CanaryHit]:
    """Every canary token found in blob, each once, in the order of locations: plain, base64, hex or base32 encoded
    (base32 and hex in either case: DNS names are case-insensitive, which is why a DNS tunnel encodes in them), then
    with its case changed, reversed, or a piece of PIECE_MIN characters or more (in either case)."""
    data = blob.encode("utf-8", errors="surrogateescape") if isinstance(blob, str) else blob
    lowered = data.lower()
    tokens = tuple(locations)
    if not _could_hold(lowered, _windows(tokens)):
        return []
    runs = lowered if RUN_MARK in lowered.translate(_alphabet_mask(tokens)) else b""
    hits: list[CanaryHit] = []
    for token, where in locations.items():
        encoding = _encoding(token, data, lowered, runs)
        if encoding:
            hits.append(CanaryHit(token, where, encoding))
    return hits


def _could_hold(data: bytes, windows: frozenset[int]) -> bool:
    """Whether one of data's aligned BLOCK-byte blocks is among windows (each a form's BLOCK bytes, read as one
    native integer): False means no form is in data."""
    whole = len(data) - len(data) % BLOCK
    return not windows.isdisjoint(memoryview(data)[:whole].cast("Q"))


@functools.lru_cache(maxsize=64)
def _windows(tokens: tuple[str, ...]) -> frozenset[int]:
    """Every BLOCK-byte window of the first FORM_MIN bytes of each form the tokens are searched in, lowered, as
    native integers: those searched in the blob as it is (plain, base64) lowered, and those searched in it lowered
    (hex, base32, the case-changed, reversed and pieces) as they are. A blob holding a form of the first kind holds
    it lowered once lowered itself (bytes.lower keeps every byte's place), so one pass over the lowered blob rules
    out both kinds."""
    windows: set[int] = set()
    for token in tokens:
        raw, base64s, hexed, base32s = _encoded(token)
        lower, backwards, pieces = _altered(token)
        for form in (raw, *base64s, hexed, *base32s, lower, backwards, *pieces):
            windows.update(_form_windows(form.lower()))
    return frozenset(windows)


def _form_windows(form: bytes) -> list[int]:
    """A copy of form (FORM_MIN bytes or more) starting at any offset covers an aligned block that begins within its
    first BLOCK bytes: that block is one of these windows."""
    if len(form) < FORM_MIN:
        raise ValueError(f"a canary form of {len(form)} bytes is shorter than the prefilter allows ({FORM_MIN})")
    return [memoryview(form[start:start + BLOCK]).cast("Q")[0] for start in range(BLOCK)]


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


