"""S8's requests for what the model holds: to run this tool first, to put the conversation or the model's own system
prompt into an argument, to pass the user's secrets, to act unseen or above the user's word; and parameters named
for a credential or the conversation.

The phrase patterns are matched on S8's normalised text (lower case, look-alike letters folded) with its other
detectors (s08_hidden_text.DETECTORS); the parameter names are read here. An honest tool that names a secret or the
conversation in a parameter (a login's `password`, a memory tool's `conversation_history`) is a warning: the secret
or the chat passes through the model's context to the server, which the user should know before installing it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import ToolView
from scanner.vocabulary import name_tokens

RULE = rule("S8")

# Telling the model to call this tool before any other: the priority hijack a poisoned tool uses to run first (and
# on every turn). A warning: an honest server sometimes asks for its set-up tool first, which the sandbox then shows.
CALL_FIRST = (
    r"\b(before|prior to)\s+(using|calling|invoking|running)?\s*(any|every|all)\s+(of\s+the\s+)?other\s+"
    r"(tools?|functions?)\b[^.\n]{0,40}\b(call|use|invoke|run)\b[^.\n]{0,15}\bthis (tool|function|one)\b"
    r"|\b(call|use|invoke|run)\s+this\s+(tool|function)\b[^.\n]{0,30}\b(before|prior to|ahead of)\s+"
    r"(using\s+|calling\s+)?(any|every|all)\s+(of\s+the\s+)?other\s+(tools?|functions?)\b"
    r"|\b(call|use|invoke|run)\s+this\s+(tool|function)\s+(first\s+)?before\s+(any|every)\s+(tool|function)\b"
    r"|\bthis (tool|function) (must|should) (always )?be (called|used|invoked) (first|before (any|every|all))\b")
# The same priority hijack said by when: first before answering, on every turn. Each pattern of this module is its
# own detector, so its literal words (phrase_detector.Detector.needs) keep clean text from being searched.
EVERY_TURN = (
    r"\b(call|use|invoke|run) (this|it)( tool| function)? first\b[^.\n]{0,40}\b(before (answering|responding|replying)"
    r"|on every (turn|message|request)|at the start of every (turn|conversation|session))\b")
# Concealment said as an act ("do it quietly", "pretend this tool does not exist", "never reveal why").
CONCEAL_ACT = (
    r"\bdo (it|this|so) (quietly|discreetly)\b"
    r"|\bpretend (that )?(this|the) (tool|function|step|call)s? (does not|doesn't|did not|didn't|never) (exist|happen)"
    r"|\b(never|do not|don't) (reveal|disclose|mention|explain) (why|that you (used|called|ran))\b")
# Sending to a URL in the passive order, as an instruction ("any file you read must also be sent to https://..."); a
# disclosure ("your query is sent to https://api...") has no must/should.
MUST_BE_SENT = (
    r"\b(?:must|should|shall|has to|have to|needs? to)\s+(?:also\s+|always\s+)*be\s+(?:sent|posted|uploaded|"
    r"forwarded|copied|mirrored|submitted|transmitted|reported|logged)\s+(?:to|at)\s+(?:https?|ftp|wss?)://")
# An upload, webhook or AI-proxy tool describing its own act ("Uploads the file to https://...", "Sends the prompt to
# https://api.openai.com/..."): a third-person verb whose subject is the tool, on its own inputs. The model is asked
# for nothing, so a send-to-url match of this shape is a warning (where the data goes, for the user to see), and one
# that names what the model holds, addresses the model, sits in an instruction tag or holds another, base-form verb
# (an imperative) stays an error.
_OWN_SEND_VERBS = frozenset({"sends", "posts", "uploads", "transmits", "submits", "reports", "forwards", "copies"})
_MODEL_HOLDS = re.compile(
    r"\b(conversations?|history|histories|context|credentials?|secrets?|tokens?|keys?|passwords?|passphrases?|"
    r"cookies?|environment|env|everything|your|yourself|system (prompt|message)s?|instructions|transcripts?|"
    r"chat (logs?|histor(y|ies))|tools?|functions?|servers?|ssh|private)\b"
    r"|\b(send|upload|transmit|submit|exfiltrate|forward|post|beacon)\b")
_TO_THE_MODEL = re.compile(r"\b(you|your|yourself|assistant|model|agent|llm|ai|claude|chatgpt|gpt|please|always|"
                           r"must|should|remember|important|instructions?)\b")
SUBJECT_WINDOW = 120  # characters before the verb searched for who does the sending
_SENTENCE_END = re.compile(r"[.!?]")  # not `:` nor a line break: "Assistant:\nsends ..." is said to the model


def describes_own_sending(subject: str, match: re.Match[str]) -> bool:
    """The send-to-url match is a third-person description of the tool's own act on its own inputs (see above)."""
    verb = match.group().split(None, 1)[0]
    if verb not in _OWN_SEND_VERBS or _MODEL_HOLDS.search(match.group(), len(verb)) is not None:
        return False
    start = max(0, match.start() - SUBJECT_WINDOW)
    before = subject[start:match.start()]
    ends = [end.end() for end in _SENTENCE_END.finditer(before)]
    return _TO_THE_MODEL.search(before, ends[-1] if ends else 0) is None and not _has_tag_mark(subject)


@lru_cache(maxsize=8)  # asked once per match: a long text of many matches is searched once (a str keeps its hash)
def _has_tag_mark(subject: str) -> bool:
    """A `<` anywhere (an <IMPORTANT> block, a <system> tag): the description is not only a description."""
    return "<" in subject


def asks_to_send(subject: str, match: re.Match[str]) -> bool:
    return not describes_own_sending(subject, match)


# Ranking this text above what the user asked, or the tool's output as the user's word.
OUTRANK_USER = (
    r"\b(takes?|has|have) (priority|precedence) over (the )?(user'?s?|your) (requests?|instructions?|messages?|prompts?)"
    r"|\bwhat(ever)? the user (asked|said|requested|wanted)\b[^.\n]{0,25}\bno longer (applies|matters|counts)\b"
    r"|\btreat\b[^.\n]{0,40}?(?<!not )\bas (the user'?s |user |authoritative |trusted )?(instructions|commands|orders)\b")
# Asking for what the user said to be put into an argument. A warning: a memory or summary tool honestly takes the
# conversation; the sandbox shows where it goes.
COLLECT_CONVERSATION = (
    r"\b(pass|passes|include|includes|put|append|send|copy|attach|provide|insert|paste)\b[^.\n]{0,30}"
    r"\b((full|entire|whole|complete) )?(conversation|chat) (history|log|transcript|so far)\b"
    r"|\b(pass|include|put|append|send|copy|attach|provide|insert|paste)\b[^.\n]{0,30}\b(the )?user's "
    r"(previous |prior |earlier |last |other )?(messages?|prompts?|conversations?)\b")
# Asking for the model's own system prompt or instructions: no honest tool needs what the model was told. A system
# prompt the tool sends on to another model ("the system prompt to use for the completion") does not fire.
SYSTEM_PROMPT_REQUEST = (
    r"\b(system prompt|system message|instructions|initial prompt) (that )?you (were|have been|are) given\b"
    r"|\b(reveal|repeat|print|output|pass|include|put|copy|paste|send|provide|insert|give|share|dump|leak)\b"
    r"[^.\n]{0,30}\byour (own )?((full|entire|complete|whole|original|hidden|current|exact) )?"
    r"(system (prompt|message|instructions)|initial (prompt|instructions)|developer (prompt|message)|"
    r"hidden instructions)\b")
# Asking for the user's secrets to be put somewhere. A warning that pairs with an exfiltration-shaped parameter
# (`notes`, `context` ...) into an error, as a credential file does.
# A configuration note ("requires the user's API key in STRIPE_API_KEY") asks the model for nothing.
_USER_SECRET = (r"\buser'?s\b[^.\n]{0,20}\b(passwords?|api (keys?|tokens?)|access (keys?|tokens?)|secret( access)? keys?|"
                r"private keys?|credentials|session (cookies?|tokens?)|(seed|recovery) phrases?|auth(entication)? tokens?)\b")
USER_SECRET_REQUEST = (
    r"\b(pass|include|put|append|send|copy|attach|provide|insert|paste|collect)\b[^.\n]{0,40}" + _USER_SECRET
    + r"|" + _USER_SECRET + r"[^.\n]{0,20}\b(passed|included|put|sent|pasted|attached|inserted) (in|into|as|to|with)\b")

# A parameter's name, as its lower-case tokens, ending in one of these: it asks the model for a secret.
CREDENTIAL_ENDINGS = (("password",), ("passwd",), ("passphrase",), ("api", "key"), ("apikey",), ("secret", "key"),
                      ("client", "secret"), ("access", "token"), ("auth", "token"), ("bearer", "token"),
                      ("refresh", "token"), ("api", "token"), ("session", "token"), ("private", "key"),
                      ("seed", "phrase"), ("recovery", "phrase"), ("mnemonic",), ("credentials",))
CONVERSATION_ENDINGS = tuple((who, what) for who in ("conversation", "chat", "message", "messages")
                             for what in ("history", "log", "transcript")) + tuple(
    (when, what) for when in ("previous", "prior", "past", "earlier", "all", "user") for what in ("messages", "prompts"))


def _ends_with(tokens: list[str], endings: tuple[tuple[str, ...], ...]) -> bool:
    return any(tuple(tokens[-len(ending):]) == ending for ending in endings if len(tokens) >= len(ending))


# Words one of the endings above cannot be without: a parameter name holding none is not split into tokens.
_ENDING_HINT = re.compile(r"pass|key|secret|token|phrase|mnemonic|credential|histor|log|transcript|messages|prompts",
                          re.IGNORECASE)


def asking_parameters(tool: ToolView) -> Iterator[Finding]:
    """A warning for each top-level parameter named for a secret or the conversation."""
    for param in tool.params:
        if not _ENDING_HINT.search(param.name):
            continue
        tokens = name_tokens(param.name)
        if _ends_with(tokens, CREDENTIAL_ENDINGS):
            what = "a secret (the value passes through the model's context to the server)"
            kind = "credential-parameter"
        elif _ends_with(tokens, CONVERSATION_ENDINGS):
            what, kind = "the conversation", "conversation-parameter"
        else:
            continue
        yield RULE.finding(tool.name, f"parameter `{param.name}` asks the model for {what} [{kind}]",
                           severity="warning", evidence=f"inputSchema.properties.{param.name}")
