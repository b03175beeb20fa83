"""S8 hidden-instructions: invisible characters, hidden markup and poisoning phrases in any metadata string: besides
concealment and ignore-instructions, claims to override, replace or forbid other servers' tools ("instead of any
other tool"), hidden recipients (bcc/cc/forward to an address) and instructions to send data to a URL. Plain
"instead of", "you must" or a named recipient field are not findings.

Each tool's strings are joined and searched once; only on a hit are the single strings searched again to name where
the text sits. A phrase pattern is searched only when the text holds the literal words it cannot match without
(scanner.rules.static.literals), so clean text costs a few substring tests, not a regular-expression search. Phrases are matched after normalisation (text.normalise: NFKC,
format, invisible and combining characters removed, look-alike Cyrillic/Greek letters folded), so `i\u200bgnore`,
full-width letters and `іgnоrе` in Cyrillic still match.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import MAX_DEPTH, MAX_NODES_PER_ITEM, LintContext, Walk
from scanner.rules.static.encoded import ENCODINGS, decoded, possible_encodings
from scanner.rules.static.phrase_detector import Detector
from scanner.rules.static.s08_asking import (CALL_FIRST, COLLECT_CONVERSATION, CONCEAL_ACT, EVERY_TURN, MUST_BE_SENT,
                                               OUTRANK_USER, SYSTEM_PROMPT_REQUEST, USER_SECRET_REQUEST,
                                               asking_parameters, asks_to_send, describes_own_sending)
from scanner.rules.static.text import normalise
from sandbox.core.untrusted import escape_for_terminal
from scanner.vocabulary import name_tokens

RULE = rule("S8")


TAG_CHARS = re.compile(r"[\U000E0000-\U000E007F]+")
BIDI = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
ZERO_WIDTH = re.compile(r"[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200d\u2060-\u2064\u3164\ufeff"
                        r"\uffa0]")
# Two or more variation selectors in a row select nothing a font draws: one byte each (VS1-16 are 0-15, VS17-256 are
# 16-255), the way text is smuggled after an emoji. A single VS16 after an emoji (❤️) is ordinary.
VARIATION_RUN = re.compile(r"[\ufe00-\ufe0f\U000E0100-\U000E01EF]{2,}")
TERMINAL_ESCAPE = re.compile(r"[\x1b\x9b\x9d]")
OTHER_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9a\x9c\x9e\x9f]|\r(?!\n)")
ANY_SUSPECT_CHAR = re.compile("|".join(p.pattern for p in (TAG_CHARS, BIDI, ZERO_WIDTH, TERMINAL_ESCAPE,
                                                            OTHER_CONTROL, VARIATION_RUN)))
# One character class holding every character ANY_SUSPECT_CHAR starts with (a superset: `\r` before `\n` too): a
# single class is scanned in one pass, the alternation position by position.
SUSPECT_CHAR_CLASS = re.compile(r"[\U000E0000-\U000E01EF\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u00ad\u034f"
                                r"\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200d\u2060-\u2064\u3164\ufe00-\ufe0f"
                                r"\ufeff\uffa0\x1b\x9b\x9d\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9a\x9c\x9e\x9f\r]")

# A line break inside a sentence (a hard-wrapped docstring, or one put there to split "ignore all previous\n
# instructions") reads on to the model: joined with a space when the line ends without a sentence's punctuation and
# the next starts in lower case, or the line ends on a word no sentence ends on. Strings are joined with a blank line
# (FIELD_BREAK), which is never joined, so a phrase is not made of two fields.
WRAPPED_LINE = re.compile(
    r"\n(?=[ \t]*[A-Za-z])(?:(?<=[^.:;!?\n]\n)[ \t]*+(?=[a-z])|(?:(?<=\b(?:to|of|or|an|do|no)\n)|(?<=\b(?:not|all|any|the|and|you)\n)"
    r"|(?<=\b(?:your|this|from|that|tell|must)\n)|(?<=\b(?:never|about|other)\n)|(?<=\bignore\n)"
    r"|(?<=\b(?:previous)\n))[ \t]*+(?=[A-Za-z]))")
FIELD_BREAK = "\n\n"

# The phrase patterns below (and s08_asking's) are the detectors' sources, each compiled when its detector first
# searches: text without a pattern's literal words never compiles it (~1 ms each of a command's start).
HTML_COMMENT = r"<!--"
INSTRUCTION_TAG = (
    r"<\s*/?\s*(important|system|instructions?|admin|secret|hidden|critical|override|sys|system[_ -]?prompt"
    r"|user[_ -]?instructions?|assistant[_ -]?instructions?|tool[_ -]?instructions?)\s*>"
    r"|<\|im_start\|>|<\|system\|>|\[/?inst\]|<<\s*/?sys\s*>>")
CONCEAL = (
    r"\b(do not|don't|dont|never|without|must not|should not|shouldn't|no need to|needn't)\b[^.\n]{0,40}"
    r"\b(tell|telling|inform|informing|mention|mentioning|reveal|revealing|notify|notifying|alert|alerting|"
    r"disclose|disclosing|explain|explaining)\b[^.\n]{0,30}\b(the )?(users?|human|anyone|anybody)\b"
    r"|\b(do not|don't|dont|never|must not|should not) let the (users?|human) (know|see|notice)\b"
    r"|\b(hide|hiding|conceal|concealing|keep)\b[^.\n]{0,40}\bfrom the (users?|human)\b"
    r"|\bthe users? (must|should|need|may) (not|never) (know|see|be told|notice|find out|learn|be aware)\b"
    r"|\bkeep (this|these) (steps?|instructions?|calls?) (to yourself|secret|hidden)\b|\bkeep (this|it) to yourself\b"
    r"|\bwithout (the )?(users?'?s?|human'?s?) (knowledge|knowing|noticing)\b"
    r"|\b(secretly|covertly|behind the user'?s back)\b"
    r"|\b(this is|these are) (very )?(secret|confidential) (instructions?|steps)\b")
IGNORE_INSTRUCTIONS = (
    r"\b(ignore|disregard|forget)\b[^.\n]{0,40}\b(previous|prior|above|earlier|other|all|any|system|your|"
    r"user'?s?|original|initial|safety)\b[^.\n]{0,20}\b(instructions?|prompts?|rules|directions|guidelines)\b"
    r"|\bforget (everything|all) (you (were|have been) told|you know|above|before)\b"
    r"|\b(override|bypass)\b[^.\n]{0,20}\b(your (system prompt|instructions|guidelines|safety|rules)|the system prompt)"
    r"|\byou are now (in )?(developer|dan|jailbreak|god|admin|unrestricted) mode\b"
    r"|\b(previous|prior|earlier|above|original) instructions (are|were) (now )?(void|cancell?ed|obsolete|"
    r"invalid|superseded|outdated|no longer valid)\b")
OVERRIDE_TOOLS = (
    r"\b(override|overrides|overriding|supersedes?|shadows?|hijacks?|intercepts?|takes? precedence over)\b"
    r"[^.\n]{0,30}\b(other|another|every|all)\b[^.\n]{0,25}\b(tools?|servers?|mcp)\b"
    r"|\b(replaces?|replacing)\b[^.\n]{0,15}\b(tools?|functions?) (of|from|on|in) (other|another|all|any) "
    r"(mcp )?servers?\b"
    r"|\b(all|every)\b[^.\n]{0,20}\b(emails?|messages?|requests?|calls?)\b[^.\n]{0,30}\b(must|should|shall)\b"
    r"[^.\n]{0,20}\b(be )?(sent|forwarded|redirected|routed|copied|bcc'?d|cc'?d)\b")
_OTHER_TOOLS = r"(?:any|all|every)\s+(?:of\s+the\s+)?other\s+(?:mcp\s+)?(?:tools?|servers?|functions?)"
_STOP = r"(?:do not|don't|dont|never|must not|should not|shouldn't|cannot|can't|may not)"
SHADOW_TOOLS = (
    rf"\b(?:instead of|rather than|in place of)\s+{_OTHER_TOOLS}"
    r"|\b(?:instead of|rather than|in place of)\s+(?:the\s+)?(?:tools?|functions?)\s+(?:of|from)\s+(?:any\s+)?"
    r"(?:other|another)\s+(?:mcp\s+)?servers?"
    rf"|\b(?:prefer|use|choose|call|pick)\b[^.\n]{{0,40}}\bover\s+{_OTHER_TOOLS}"
    rf"|\b{_STOP}\s+(?:use|call|invoke|trust|rely on)\s+(?:any\s+|the\s+)?(?:other|another)\s+(?:mcp\s+)?"
    r"(?:tools?|servers?|functions?)"
    rf"|\b{_STOP}\s+(?:use|call|invoke)\s+(?:the\s+)?[\w.-]{{1,64}}\s+tool\s+(?:of|from|on|in)\s+(?:the\s+)?[\w.-]{{1,64}}"
    r"(?:\s+mcp)?\s+server"
    r"|\bother\s+(?:mcp\s+)?(?:servers?['’]?s?|tools?)\b[^.\n]{0,20}\b(?:are|is|have been|has been)\s+(?:now\s+)?"
    r"(?:deprecated|disabled|broken|unsafe|insecure|compromised|obsolete|forbidden|not allowed|not to be used|"
    r"must not be used)\b")
# Bounded and anchored at the start of a run, so a long run of letters is not retried from every position.
_EMAIL = r"(?<![a-z0-9._%+-])[a-z0-9._%+-]{1,64}@[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){1,8}"
HIDDEN_RECIPIENT = (
    rf"\b(?:bcc|cc|blind[- ]copy|carbon[- ]copy)\b[^.\n]{{0,60}}{_EMAIL}"
    rf"|{_EMAIL}\s+(?:as|to the|in the|into the)\s+(?:an?\s+)?(?:bcc|cc|hidden|blind|additional|extra|secret|silent)\b"
    rf"|\b(?:forward|forwards|forwarding|send|sends|copy|copies|mirror)\b[^.\n]{{0,30}}\b(?:a copy|copies|all|every|"
    rf"each|any)\b[^.\n]{{0,40}}\bto\s+{_EMAIL}"
    rf"|\b(?:forward|forwards|forwarding)\b[^.\n]{{0,60}}\bto\s+{_EMAIL}"
    rf"|\b(?:add|adds|include|includes|insert)\s+{_EMAIL}\s+(?:as|to)\s+(?:an?\s+|the\s+)?(?:recipients?|cc|bcc)\b"
    rf"|\b(?:change|changes|set|replace|redirect|rewrite)\b[^.\n]{{0,30}}\brecipients?\b[^.\n]{{0,20}}\bto\s+{_EMAIL}")
SEND_TO_URL = (
    r"\b(?:send|sends|post|posts|upload|uploads|transmit|transmits|submit|submits|exfiltrate|report|reports|forward|"
    r"forwards|copy|copies|log|beacon)\b[^.\n]{0,60}\b(?:data|contents?|conversation|history|messages?|files?|"
    r"results?|output|credentials?|keys?|tokens?|secrets?|passwords?|context|environment|everything|information|"
    r"details|logs?|responses?|answers?|arguments?|inputs?|prompts?|chats?)\b[^.\n]{0,30}\b(?:to|at|into)\s+"
    r"(?:https?|ftp|wss?)://")
CREDENTIAL_PATH = (
    r"~/\.ssh|\.ssh/|\bid_(rsa|dsa|ecdsa|ed25519)\b|\.aws/(credentials|config)|~/\.aws\b|\bmcp\.json\b"
    r"|claude_desktop_config\.json|(^|[\s/'\"`(])\.env\b|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials\b"
    r"|\.kube/config\b|\.docker/config\.json|/etc/shadow\b|\.gnupg\b|\.config/gh/hosts"
    r"|\.(bash|zsh|python|psql|mysql)_history\b|\.config/gcloud\b|application_default_credentials\.json"
    r"|\.azure/|\bwallet\.dat\b|\.password-store\b")
SSH_KEY = (r"\b(read|pass|include|attach|paste|send|copy)\b[^.\n]{0,30}\bssh (private )?keys?\b")
# A credential name given as one quoted example among others on a line that asks nothing of it (a search tool's
# `"find config files: ".env", "dockerfile", "tsconfig.json"`) names a file pattern, not an instruction to read it.
EXAMPLE_WINDOW = 300  # characters either side of the name that count as its line
_QUOTED = re.compile(r"[\"'`“”‘’]([^\"'`“”‘’\n]{1,80})[\"'`“”‘’]")
_ACCESS_VERBS = re.compile(
    r"\b(read|reads|reading|cat|open|opens|load|loads|source|sources|use|uses|using|include|includes|including|"
    r"send|sends|upload|uploads|copy|copies|print|prints|output|paste|attach|attaches|put|pass|passes|extract|"
    r"extracts|dump|dumps|leak|share|post|posts|forward|embed|return|returns|contents?|exfiltrate|append|access)\b")
EXFIL_PARAMS = frozenset({"notes", "note", "sidenote", "side_note", "context", "feedback", "comment", "comments",
                          "remarks", "remark", "metadata", "extra", "debug", "reasoning", "thoughts", "memo",
                          "annotation", "details", "summary"})


DETECTORS: tuple[Detector, ...] = (
    Detector("tag-characters", TAG_CHARS.pattern, "error", "Unicode TAG characters hide text", False, True),
    Detector("variation-selectors", VARIATION_RUN.pattern, "error", "run of variation selectors hides bytes", False,
              True),
    Detector("bidi-control", BIDI.pattern, "error", "bidi control character reorders the visible text", False, False),
    Detector("terminal-escape", TERMINAL_ESCAPE.pattern, "error", "ANSI/OSC terminal escape sequence", False, False),
    Detector("zero-width", ZERO_WIDTH.pattern, "warning", "zero-width or invisible character", False, False),
    Detector("control-character", OTHER_CONTROL.pattern, "warning", "control character", False, False),
    Detector("html-comment", HTML_COMMENT, "warning", "HTML comment hides text from rendered views", True, False),
    Detector("instruction-tag", INSTRUCTION_TAG, "error", "instruction-style tag aimed at the model", True, True),
    Detector("conceal-from-user", CONCEAL, "error", "instruction to hide something from the user", True, True),
    Detector("conceal-from-user", CONCEAL_ACT, "error", "instruction to hide something from the user", True, True),
    Detector("ignore-instructions", IGNORE_INSTRUCTIONS, "error", "instruction to ignore other instructions",
              True, True),
    Detector("ignore-instructions", OUTRANK_USER, "error", "instruction to ignore other instructions", True, True),
    Detector("override-tools", OVERRIDE_TOOLS, "error", "claim to override or redirect other tools or servers",
              True, True),
    Detector("shadow-tools", SHADOW_TOOLS, "error", "claim to replace or forbid other tools or servers", True, True),
    Detector("hidden-recipient", HIDDEN_RECIPIENT, "error", "instruction to add a recipient (bcc/cc/forward to an "
              "address)", True, True),
    Detector("send-to-url", SEND_TO_URL, "error", "instruction to send data to a URL", True, True, asks_to_send),
    Detector("send-to-url", SEND_TO_URL, "warning", "description of data sent to a URL", True, False,
              describes_own_sending),
    Detector("send-to-url", MUST_BE_SENT, "error", "instruction to send data to a URL", True, True),
    Detector("call-first", CALL_FIRST, "warning", "instruction to call this tool before any other", True, False),
    Detector("call-first", EVERY_TURN, "warning", "instruction to call this tool before any other", True, False),
    Detector("collect-conversation", COLLECT_CONVERSATION, "warning", "instruction to put the conversation in an "
              "argument", True, False),
    Detector("system-prompt-request", SYSTEM_PROMPT_REQUEST, "error", "request for the model's system prompt",
              True, True),
    Detector("credential-request", USER_SECRET_REQUEST, "warning", "request for the user's secrets", True, True),
    Detector("credential-reference", CREDENTIAL_PATH, "warning", "reference to a credential or config file",
              True, True),
    Detector("credential-reference", SSH_KEY, "warning", "instruction to read or pass an SSH key", True, True),
)


def _decode_tags(text: str) -> str:
    return "".join(chr(ord(ch) - 0xE0000) if 0xE0020 <= ord(ch) <= 0xE007E else "" for ch in text)


def _decode_selectors(text: str) -> str:
    """The bytes a run of variation selectors stands for, read as UTF-8."""
    data = bytes(ord(ch) - 0xFE00 if ord(ch) <= 0xFE0F else ord(ch) - 0xE0100 + 16 for ch in text)
    return data.decode("utf-8", errors="replace")


def _snippet(text: str, start: int, end: int) -> str:
    return escape_for_terminal(text[max(0, start - 40):end + 40], limit=200)


def _normalised(text: str) -> str:
    if "\n" in text:
        text = WRAPPED_LINE.sub(" ", text)
    return text.lower() if text.isascii() else normalise(text)


def _emoji_joiner(text: str, position: int) -> bool:
    """A ZWJ between two symbols is part of an emoji sequence, not hidden text."""
    if text[position] != "\u200d" or position == 0 or position + 1 >= len(text):
        return False
    return unicodedata.category(text[position - 1]) in ("So", "Sk", "Mn") and \
        unicodedata.category(text[position + 1]) == "So"


def _hits(path: str, text: str, encodings: frozenset[str] = ENCODINGS) -> Iterator[tuple[Detector, str, str]]:
    normalised: str | None = None
    for detector in DETECTORS:
        if detector.on_normalised:
            normalised = _normalised(text) if normalised is None else normalised
            subject = normalised
        else:
            subject = text
        for match in detector.search(subject):
            if detector.kind == "zero-width" and _emoji_joiner(subject, match.start()):
                continue
            if detector.kind == "credential-reference" and _listed_example(subject, match.start(), match.end()):
                continue
            yield detector, path, _evidence(detector, subject, match)
            break
    yield from _decoded_hits(path, text, encodings)


def _evidence(detector: Detector, subject: str, match: re.Match[str]) -> str:
    """What a hit shows: the hidden text decoded (tag characters, variation selectors), else the text around it."""
    if detector.kind in ("tag-characters", "variation-selectors"):
        decode = _decode_tags if detector.kind == "tag-characters" else _decode_selectors
        return f"hidden text: {escape_for_terminal(decode(match.group()), limit=300)}"
    return _snippet(subject, match.start(), match.end())


def _decoded_hits(path: str, text: str, encodings: frozenset[str]) -> Iterator[tuple[Detector, str, str]]:
    """The phrases of text hidden in an encoding (base64, hex, %XX, entities, escapes, ROT13), named by it."""
    for encoding, piece in decoded(text, encodings):
        subject = _normalised(piece)
        for detector in PHRASES:
            match = next(detector.search(subject), None)
            if match is not None:
                yield detector, f"{path} (decoded from {encoding})", _snippet(subject, match.start(), match.end())


PHRASES = tuple(detector for detector in DETECTORS if detector.on_normalised)
# What of S8 a tool's answer is searched for (B7, scanner/rules/answer_injection.py): the hidden text and the
# instructions, never what honest output holds (control characters and ANSI colours of a command's output, bidi
# marks of right-to-left text, HTML comments of a page, the names of credential files a listing shows).
ANSWER_DETECTORS = tuple(detector for detector in DETECTORS if detector.kind in {
    "tag-characters", "variation-selectors", "instruction-tag", "conceal-from-user", "ignore-instructions",
    "override-tools", "shadow-tools", "hidden-recipient", "send-to-url", "system-prompt-request"})
# A cc/bcc field and its address (`Cc: bob@example.com`, `"cc": ["bob@example.com"]`): a message an e-mail tool
# lists or reads, not an instruction to add a recipient.
RECIPIENT_FIELD = re.compile(r"b?cc\b\s*[\"']?\s*[:=]")


@lru_cache(maxsize=32)  # a scan's answers repeat (the same file read by three tools): each is searched once
def answer_hits(text: str) -> tuple[tuple[str, str, str], ...]:
    """The hidden text and instructions in a tool's answer, one per kind: (kind, what it is, evidence)."""
    found: list[tuple[str, str, str]] = []
    normalised: str | None = None
    plain = text.isascii()  # hidden characters are all outside ASCII
    for detector in ANSWER_DETECTORS:
        if plain and not detector.on_normalised:
            continue
        subject = text
        if detector.on_normalised:
            subject = normalised = _normalised(text) if normalised is None else normalised
        match = next((hit for hit in detector.search(subject) if detector.kind != "hidden-recipient"
                      or not RECIPIENT_FIELD.match(hit.group())), None)
        if match is None:
            continue
        found.append((detector.kind, detector.message, _evidence(detector, subject, match)))
    return tuple(found)


def _has_suspect_char(text: str) -> bool:
    return SUSPECT_CHAR_CLASS.search(text) is not None and ANY_SUSPECT_CHAR.search(text) is not None


def _listed_example(text: str, start: int, end: int) -> bool:
    """The credential name is one quoted item of a list of two or more on its line, and the line has no verb that
    reads, sends or includes anything: an example of a name to look for (see _QUOTED)."""
    low, high = max(0, start - EXAMPLE_WINDOW), min(len(text), end + EXAMPLE_WINDOW)  # bounded: no quadratic scan
    line_start = max(text.rfind("\n", low, start) + 1, low)
    line_end = text.find("\n", end, high)
    line = text[line_start:high if line_end < 0 else line_end]
    quoted = list(_QUOTED.finditer(line))
    inside = any(item.start() <= start - line_start and end - line_start <= item.end() for item in quoted)
    return inside and len(quoted) >= 2 and _ACCESS_VERBS.search(_QUOTED.sub(" ", line)) is None


def _has_phrase(normalised: str, phrases: tuple[Detector, ...] = PHRASES) -> bool:
    return any(next(detector.search(normalised), None) is not None for detector in phrases)


def _has_decoded_phrase(joined: str, encodings: frozenset[str]) -> bool:
    return any(_has_phrase(_normalised(piece)) for _, piece in decoded(joined, encodings))


def _possible(normalised: list[str]) -> tuple[tuple[Detector, ...], frozenset[str]]:
    """The phrase detectors whose literal words occur somewhere in these texts taken together (`could_match` on all
    of it): a detector whose words are in none of them cannot match any one of them, so it is not tried on each.
    The same detectors, found faster: a literal without whitespace occurs in the text exactly when it occurs in one
    of the text's distinct whitespace-separated words (~60 kB of a 3,000-tool list's ~1 MB), which are searched
    instead; a literal with a space is looked for in the whole text only once each of its pieces is in those words.
    With them, the encodings whose markers occur anywhere (encoded.possible_encodings): no other is decoded."""
    everything = "\n".join(normalised)
    distinct: set[str] = set()
    for text in normalised:  # text by text: the words of the whole list are never all held at once
        distinct.update(text.split())
    words = "\n".join(distinct)
    phrases = tuple(detector for detector in PHRASES
                    if all(any(_occurs(option, words, everything) for option in group) for group in detector.needs))
    return phrases, possible_encodings(distinct, everything)


def _occurs(literal: str, words: str, everything: str) -> bool:
    """`literal in everything`, looked up in `words` (the distinct words of `everything`) where that is the same."""
    pieces = literal.split()
    if not all(piece in words for piece in pieces):
        return False
    return (len(pieces) == 1 and pieces[0] == literal) or literal in everything


def _scan_walk(walk: Walk) -> list[tuple[Detector, str, str]]:
    joined = FIELD_BREAK.join(walk.texts)
    return _scan_joined(walk, joined, _normalised(joined), PHRASES, ENCODINGS)


def _scan_joined(walk: Walk, joined: str, normalised: str, phrases: tuple[Detector, ...],
                 encodings: frozenset[str]) -> list[tuple[Detector, str, str]]:
    """A walk's hits, given its strings joined (as is and normalised), the phrases that could match them and the
    encodings that could hide one."""
    if not _has_suspect_char(joined) and not _has_phrase(normalised, phrases) \
            and not _has_decoded_phrase(joined, encodings):
        return []
    return [hit for path, text in walk.strings for hit in _hits(path, text, encodings)]


def _findings(tool: str | None, hits: list[tuple[Detector, str, str]]) -> Iterator[Finding]:
    for detector, path, evidence in hits:
        where = path.replace("(key)", " (key)") or "text"
        yield RULE.finding(tool, f"{detector.message} [{detector.kind}] in {where}", severity=detector.severity,
                           evidence=evidence)


def _unread(tool: str | None, walk: Walk) -> Iterator[Finding]:
    """A walk cut at its depth or node bound left strings the model reads unsearched: nesting a payload 65 levels
    deep must not pass as clean (S3 reports the cut as conformance; this is the security side of it). An error past
    the depth (no honest definition goes there), a warning past the node count (a very long resource list might)."""
    if walk.too_deep or walk.too_many_nodes:
        bound = f"nested deeper than {MAX_DEPTH} levels" if walk.too_deep else f"over {MAX_NODES_PER_ITEM:,} nodes"
        yield RULE.finding(tool, f"definition {bound}: the text past it was not searched for hidden instructions "
                           "[unread-text]", severity="error" if walk.too_deep else "warning", evidence=bound)


def check(ctx: LintContext) -> Iterator[Finding]:
    joined = [FIELD_BREAK.join(tool.walk.texts) for tool in ctx.tools]
    normalised = [_normalised(text) for text in joined]
    phrases, encodings = _possible(normalised)
    if encodings and not _has_decoded_phrase("\n".join(joined), encodings):
        encodings = frozenset()  # decoding is local: no phrase in the whole list decoded, none in any one tool
    for tool, text, folded in zip(ctx.tools, joined, normalised):
        hits = _scan_joined(tool.walk, text, folded, phrases, encodings)
        yield from _findings(tool.name, hits)
        yield from _unread(tool.name, tool.walk)
        yield from asking_parameters(tool)
        if any(d.instruction for d, _, _ in hits):
            shaped = [p.name for p in tool.params if "_".join(name_tokens(p.name)) in EXFIL_PARAMS]
            if shaped:
                yield RULE.finding(tool.name, "exfiltration-shaped parameter paired with hidden or credential "
                                   f"instructions: {', '.join(shaped)}", severity="error", evidence=", ".join(shaped))
    yield from _findings(None, _scan_walk(ctx.server_walk))
    yield from _unread(None, ctx.server_walk)
