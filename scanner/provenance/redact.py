"""URLs from configs and specs may carry credentials: show only what is safe.

`origin_only` and `without_secrets` cut a URL that parses down to what may be shown. `redact_secrets` is the guard
for any text about to be printed or stored (what `check-config` shows of a launch): in every URL-ish word, whatever
its spelling, it removes user info (`scheme://user:pw@`, `//user:pw@`, backslashes, `scheme:user:pw@` without
slashes, percent-encoded, a token as the user name), the query string and `;params`; and anywhere, it replaces what
is shaped like a token (ghp_…, github_pat_…, sk-…, xox…-, AKIA…, JWTs, long random or hex runs) with `***`.
A full 40-character commit SHA or a 64-character digest stays: it is the pin a reader needs to see.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, unquote, urlsplit

REDACTED = "***"

# Words are cut at whitespace, quotes and brackets (a finding message quotes a spec as 'spec' or (spec)).
_WORD = re.compile(r"""[^\s'"`<>()\[\]{},]+""")
_SCHEME = r"[A-Za-z][A-Za-z0-9+.-]*:"
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_BARE_SCHEME = re.compile(_SCHEME)
_HEAD = re.compile(rf"({_SCHEME})?(/*)")
_DIGEST = re.compile(r"sha(?:256|384|512):")
# Schemes kept when user info follows them without `//` (`https:user:pw@host`); any other word before the colon may
# itself be the user name (`TOKEN:x-oauth-basic@host`), so it goes with the user info.
_KNOWN_SCHEMES = frozenset({"http", "https", "git", "ssh", "ftp", "ftps", "file", "github", "gitlab", "bitbucket",
                            "gist", "oci", "docker"})
_TOKENS = re.compile("|".join((
    r"\b(?:gh[pousr])_[A-Za-z0-9_]{16,}", r"\bgithub_pat_[A-Za-z0-9_]{16,}", r"\bglpat-[A-Za-z0-9_-]{16,}",
    r"\bsk-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{16,}", r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{12,}", r"\bxox[a-z]-(?=[A-Za-z0-9-]*\d)[A-Za-z0-9-]{8,}",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", r"\bnpm_[A-Za-z0-9]{20,}", r"\bpypi-[A-Za-z0-9_-]{20,}",
    r"\bhf_[A-Za-z0-9]{20,}", r"\bAIza[0-9A-Za-z_-]{30,}", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*",
)))
_RANDOM_RUN = re.compile(r"[A-Za-z0-9_+=-]{20,}")
_PIN = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")


def _location(url: str) -> tuple[SplitResult, str] | None:
    """The URL's parts and its `host[:port]` (no user info), None when it cannot be parsed."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return None
    return parts, f"{host}{port}" if host else ""


def origin_only(url: str) -> str:
    """scheme://host[:port] of a URL: no user info, path, query or fragment (for remote MCP entries)."""
    located = _location(url)
    if located is None or not located[0].scheme or not located[1]:
        return "(unparseable URL)"
    return redact_secrets(f"{located[0].scheme}://{located[1]}")


def without_secrets(url: str) -> str:
    """A URL without user info and query string (keeps scheme, host, path and #fragment, e.g. a git ref)."""
    located = _location(url)
    if located is None:
        return "(unparseable URL)"
    parts, location = located
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    if not location:
        return f"{parts.scheme}:{parts.path}{fragment}" if parts.scheme else "(unparseable URL)"
    return f"{parts.scheme}://{location}{parts.path}{fragment}"


def _looks_random(run: str) -> bool:
    """A run of token characters that is a secret's shape: upper, lower and digits mixed, or 32+ letters and digits
    with no separator (never a full commit SHA or digest)."""
    if _PIN.fullmatch(run):
        return False
    has_digit = any(c.isdigit() for c in run)
    if has_digit and any(c.islower() for c in run) and any(c.isupper() for c in run):
        return True
    return has_digit and len(run) >= 32 and run.isalnum()


def _without_tokens(text: str) -> str:
    text = _TOKENS.sub(REDACTED, text)
    return _RANDOM_RUN.sub(lambda m: REDACTED if _looks_random(m.group()) else m.group(), text)


def _without_userinfo(url: str) -> str:
    """`url` starts at a scheme or slashes: drop everything up to the last `@` of its authority."""
    head = _HEAD.match(url)
    assert head is not None  # both groups are optional
    scheme, slashes = head.group(1) or "", head.group(2)
    rest = url[head.end():]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" not in authority or _DIGEST.match(rest[authority.rindex("@") + 1:]):
        return url  # no user info, or `image:tag@sha256:…`
    if not slashes and scheme[:-1].lower() not in _KNOWN_SCHEMES and "+" not in scheme:
        scheme = ""  # `user:pw@host`: the word before the colon is the user name
    return scheme + slashes + rest[authority.rindex("@") + 1:]


def _url_start(word: str) -> int | None:
    """Where the URL in a word starts: at the scheme before the first `:/`, at the first `//`, or at a bare scheme
    that opens the word (`https:user:pw@host`); None when the word holds no URL. Linear, whatever the word."""
    starts = []
    colon = word.find(":/")
    if colon > 0:
        begin = colon
        while begin > 0 and word[begin - 1] in _SCHEME_CHARS:
            begin -= 1
        while begin < colon and not word[begin].isalpha():
            begin += 1
        starts.append(begin if begin < colon else colon + 1)
    if (slashes := word.find("//")) >= 0:
        starts.append(slashes)
    if starts:
        return min(starts)
    return 0 if _BARE_SCHEME.match(word) and not word.lower().startswith("npm:") else None


def _without_user_password(word: str) -> str:
    """Drop what is left of `user:password@` anywhere in a word (never `image:tag@sha256:…`, a pinned image)."""
    if "@" not in word or ":" not in word:
        return word
    pieces = word.split("@")
    out = []
    for piece, following in zip(pieces, pieces[1:]):
        head, slash, tail = piece.rpartition("/")
        out.append(head + slash if ":" in tail and not _DIGEST.match(following) else piece + "@")
    return "".join(out) + pieces[-1]


def _without_query(word: str) -> str:
    mark = word.find("?")
    if mark <= 0 or not any(c in word[:mark] for c in "/:."):
        return word
    fragment = word.find("#", mark)
    return word[:mark] + (word[fragment:] if fragment >= 0 else "")


def _redact_word(word: str) -> str:
    for _ in range(2):  # percent-encoded delimiters and user info are read as what they encode
        if "%" in word:
            word = unquote(word)
    word = word.replace("\\", "/")
    start = _url_start(word)
    if start is not None:
        url = _without_userinfo(word[start:])
        url = re.sub(r";[^/?#]*", "", url)  # ;params (a session or token in the path)
        word = word[:start] + url
    return _without_tokens(_without_query(_without_user_password(word)))


def redact_secrets(text: str) -> str:
    """`text` with user info, query strings, `;params` and token-shaped runs removed from every word (see the
    module's docstring); safe to print, store and sign."""
    return _WORD.sub(lambda m: _redact_word(m.group()), text)
