"""S11 dangerous-capability: exec, download-exec, fs-write, fs-delete, http-request, network."""

from __future__ import annotations

import re
from collections.abc import Iterator

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import LintContext, Param, ToolView

RULE = rule("S11")

EXEC_TOKENS = frozenset({"exec", "execute", "shell", "bash", "sh", "zsh", "powershell", "terminal", "subprocess",
                         "eval", "spawn", "cmd"})

EXEC_PARAMS = frozenset({"command", "cmd", "shell_command", "script", "bash_command", "commandline"})
EXEC_WORDING = re.compile(r"\b(shell|execute[sd]?|run[s]?)\b[^.\n]{0,40}\b(commands?|scripts?)\b", re.IGNORECASE)
# "source" is a verb (a shell's `source`) only as one: "and sources it", "then source the script". Alone it is the
# noun ("return bounded original LaTeX source", "section/source offsets": arxiv-mcp-server's paper tools).
DOWNLOAD_EXEC = re.compile(
    r"\b(download|fetch|curl|wget)\w*\b[^.\n]{0,60}"
    r"(\b(then |and )?(execute|run|install)[sd]?\b|\b(then|and|to) source[sd]? (it|them|the|that|this)\b)"
    r"|\bcurl\b[^|\n]*\|\s*(sudo )?(ba)?sh\b", re.IGNORECASE)
FILE_NOUNS = frozenset({"file", "files", "dir", "directory", "directories", "folder", "folders", "fs", "filesystem",
                        "disk"})
PATH_PARAMS = frozenset({"path", "paths", "file_path", "filepath", "filename", "file", "dir", "directory",
                         "destination", "dest", "target_path", "output_path", "source", "src"})
URL_PARAMS = frozenset({"url", "uri", "endpoint", "href", "link", "webhook", "webhook_url", "target_url"})
HTTP_TOKENS = frozenset({"fetch", "http", "https", "request", "download", "browse", "scrape", "crawl", "curl",
                         "webhook", "post", "web"})
HTTP_WORDING = re.compile(r"\b(fetch(es|ing)?|download(s|ed|ing)?|scrap(e|es|ing)|crawl(s|ing)?|https? (get|post|"
                          r"request)s?|sends? (an? )?(http |web |api )?requests? to|retrieves? (the )?(content|page|"
                          r"resource) (at|from|of))\b", re.IGNORECASE)
HOST_PARAMS = frozenset({"host", "hostname", "ip", "address", "server"})
NETWORK_TOKENS = frozenset({"socket", "tcp", "udp", "ssh", "telnet", "portscan", "nmap", "ping", "netcat",
                            "nc"})
MIN_HONEST_WORDS = 8
# What makes a network tool more than a reader: it sends, posts, uploads or changes something remote.
SENDING_TOKENS = frozenset({"post", "send", "upload", "submit", "publish", "put", "patch", "delete", "webhook",
                            "notify", "push", "write", "create", "update"})
SENDING_WORDING = re.compile(r"\b(posts?|posting|sends? (data|the data|a payload|payloads?|messages?|files?|the body)|"
                             r"uploads?|uploading|submits?|publish(es)?|webhooks?|(put|patch|delete) requests?)\b",
                             re.IGNORECASE)


def _param_names(tool: ToolView) -> set[str]:
    return {p.name.lower() for p in tool.params}


def _free_string(param: Param) -> bool:
    schema = param.schema if isinstance(param.schema, dict) else {}
    return not any(k in schema for k in ("enum", "const", "pattern"))


def _is_url_param(param: Param) -> bool:
    schema = param.schema if isinstance(param.schema, dict) else {}
    url_shaped = param.name.lower() in URL_PARAMS or schema.get("format") in ("uri", "url", "iri")
    return url_shaped and _free_string(param)


def capabilities(tool: ToolView) -> dict[str, str]:
    """Dangerous capability kinds of a tool, each with the evidence that suggested it (computed once per tool)."""
    if tool.capabilities is None:
        tool.capabilities = _detect(tool)
    return tool.capabilities


def _detect(tool: ToolView) -> dict[str, str]:
    tokens = set(tool.tokens)
    params = _param_names(tool)
    found: dict[str, str] = {}
    if tokens & EXEC_TOKENS or (tool.verb == "run" and tokens & {"command", "script"}):
        found["exec"] = f"name: {tool.name}"
    elif params & EXEC_PARAMS and EXEC_WORDING.search(tool.description):
        found["exec"] = f"parameter: {sorted(params & EXEC_PARAMS)[0]}"
    if DOWNLOAD_EXEC.search(tool.description):
        found["download-exec"] = "description downloads and runs code"
    touches_files = bool(tokens & FILE_NOUNS or params & PATH_PARAMS)
    if tool.verb == "delete" and touches_files:
        found["fs-delete"] = f"name: {tool.name}"
    elif tool.verb in ("write", "create", "update") and touches_files:
        found["fs-write"] = f"name: {tool.name}"
    url_params = [p.name for p in tool.params if _is_url_param(p)]
    if url_params and (tokens & HTTP_TOKENS or HTTP_WORDING.search(tool.description)):
        found["http-request"] = f"parameter: {url_params[0]}"
    if (params & HOST_PARAMS and "port" in params) or tokens & NETWORK_TOKENS:
        found["network"] = "host/port parameters" if "port" in params else f"name: {tool.name}"
    return found


def reads_only(tool: ToolView) -> bool:
    """A network tool that only reads (fetches, looks up): nothing in its name or description sends or changes."""
    return not set(tool.tokens) & SENDING_TOKENS and not SENDING_WORDING.search(tool.description)


def honestly_declared(tool: ToolView, kind: str) -> bool:
    """Described in 8+ words and annotated so a client asks before it acts. For network kinds that means an open
    world: openWorldHint: true, or no openWorldHint at all (MCP's default is an open world, so a client treats an
    un-annotated tool as reaching out). openWorldHint: false is dishonest; so is readOnlyHint: true without
    openWorldHint: true (B2 reads that pair as a closed world too), unless openWorldHint: true stands beside a tool
    that only reads (a fetch), not one that sends. For files and commands readOnlyHint: true is never honest; an
    explicit readOnlyHint: false with no destructiveHint declares a destructive tool (MCP's default destructiveHint
    for a tool that is not read-only is true), which is how the GitHub server annotates its writes."""
    annotations = tool.annotations or {}
    if len(tool.description_words) < MIN_HONEST_WORDS:
        return False
    if kind in ("http-request", "network"):
        world = annotations.get("openWorldHint")
        if world is None:
            return annotations.get("readOnlyHint") is not True
        return world is True and (annotations.get("readOnlyHint") is not True or reads_only(tool))
    if annotations.get("readOnlyHint") is True:
        return False
    if annotations.get("readOnlyHint") is False and "destructiveHint" not in annotations:
        return True
    if kind == "fs-write":
        return "destructiveHint" in annotations
    return annotations.get("destructiveHint") is True


def check(ctx: LintContext) -> Iterator[Finding]:
    for tool in ctx.tools:
        for kind, evidence in capabilities(tool).items():
            honest = honestly_declared(tool, kind)
            note = "described and annotated" if honest else "not honestly described and annotated"
            yield RULE.finding(tool.name, f"dangerous capability [{kind}] ({note})", evidence=evidence,
                               severity="warning" if honest else "error")
