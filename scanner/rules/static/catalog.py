"""The rule catalogue: one entry of metadata per static rule (id, name, severity, category, why, fix, docs)."""

from __future__ import annotations

from scanner.rules.model import Rule


S1 = Rule(
    "S1", "tool-description-quality", "warning", "ergonomics",
    "An agent picks tools by their description; a missing, short or vague one makes it guess or call the wrong tool.",
    "Describe what the tool does, what it returns and when to use it, in at least 15 words.",
    "Fires with severity error when a tool has no description, warning when it has fewer than 15 words, and warning "
    "when it is vague (3 words or fewer using stuff/things/helper/misc/various/general, or phrases like 'helps with "
    "stuff'). Near miss: a 15-word description that says what the tool returns.",
)
S2 = Rule(
    "S2", "vague-parameter-name", "warning", "ergonomics",
    "A parameter called `id`, `data` or `q` with no description leaves the agent to guess what to pass.",
    "Rename the parameter to say what it holds (`user_id`, `search_query`) or describe it.",
    "Fires on a top-level parameter whose name is in the vague list (id, user, data, q, value, input, item, obj, "
    "arg, param, key, info, ...) and that has no description. A vague name with a description does not fire.",
)
S3 = Rule(
    "S3", "untyped-or-undescribed-parameter", "warning", "conformance",
    "Untyped parameters invite malformed calls; undescribed ones are guessed at; a schema must be a JSON object.",
    "Give every parameter a `type` (or `enum`/`const`/`anyOf`) and a `description`; give the schema `type: object`.",
    "Warning: a parameter with no type, enum, const, $ref or combinator; a schema with properties but no top-level "
    "`type`; a missing inputSchema. Info: a parameter with no description. Error: an inputSchema or property schema "
    "that is not a JSON object, a tool entry that is not an object, a schema nested deeper than 64 levels.",
)
S4 = Rule(
    "S4", "overlapping-tools", "warning", "ergonomics",
    "Two tools that look alike make the agent pick at random and double the tokens it reads.",
    "Merge the tools, or make their names and descriptions say how they differ.",
    "Fires when two tools have similar names and descriptions (TF-IDF cosine >= 0.5) and share at least half of "
    "their parameters. Pairs whose names start with different action verbs (get vs delete) never fire.",
)
S5 = Rule(
    "S5", "tool-naming", "warning", "conformance",
    "Consistent, specific, spec-conformant names let agents and clients tell tools apart and route calls.",
    "Use one naming style, a shared service prefix, specific verbs+nouns, and only A-Z a-z 0-9 _ - . (1-128 chars).",
    "Warning: a name outside the MCP spec's characters/length (SEP-986: ^[A-Za-z0-9._-]{1,128}$), a generic name "
    "(do_it, helper, tool, run, ...), mixed naming styles (snake_case with camelCase), a tool missing the service "
    "prefix most tools use. Info: no shared prefix at all (on servers with 3+ tools).",
)
S6 = Rule(
    "S6", "definitions-too-large", "warning", "ergonomics",
    "Every tool definition is sent to the model each session; large lists crowd out the user's context.",
    "Cut redundant text from descriptions and schemas, or split the server into smaller ones.",
    "Warning over ~10,000 estimated tokens for all definitions (error over ~25,000); warning when the tools/list "
    "payload exceeds 256 KiB (error over 1 MiB). Tokens are estimated at 4 characters of compact JSON per token.",
)
S7 = Rule(
    "S7", "unbounded-list", "warning", "ergonomics",
    "A list_* / get_all_* tool without a limit, page or filter can return megabytes into the agent's context.",
    "Add a `limit` (with a default) and a `cursor`/`page`, or a filter parameter.",
    "Fires on tools named list_*, get_all_*, listX, getAllX (and kebab/dot forms) with no parameter that limits, "
    "pages or filters (limit, max_*, page, cursor, offset, filter, query, pattern, since, ...). A no-argument list "
    "of the server's configured scope (list_allowed_directories, listConfiguredAccounts) does not fire.",
)
S8 = Rule(
    "S8", "hidden-instructions", "error", "security",
    "Text a user cannot see but a model reads (invisible characters, hidden tags, instructions to conceal) is how "
    "tool poisoning works.",
    "Remove the hidden or instruction-like text; a description should only describe the tool.",
    "Scans every string (names, descriptions, titles, nested schema fields, enum values, defaults, annotations, "
    "prompts, instructions) after NFKC normalisation. Error: Unicode TAG characters (decoded in the evidence), bidi "
    "controls, ANSI/OSC escapes, <IMPORTANT>/<system>-style tags, instructions to hide things from the user, to "
    "ignore or override other instructions or servers' tools, exfiltration-shaped parameters (notes, sidenote, "
    "context, feedback ...) paired with such instructions. Warning: zero-width characters, other C0/C1 controls, "
    "HTML comments, references to credential files (~/.ssh, .aws, .env, mcp.json ...). Honest phrasing such as "
    "'instead of' or 'you must' does not fire.",
)
S9 = Rule(
    "S9", "duplicate-tool-name", "error", "conformance",
    "Two tools with the same name cannot both be called; which one the client keeps is undefined.",
    "Give every tool a unique name.",
    "Fires once per name that appears more than once in tools/list.",
)
S10 = Rule(
    "S10", "loose-schema", "warning", "conformance",
    "A schema that accepts anything tells the agent nothing and lets malformed or injected input through.",
    "Set `additionalProperties: false`, type catch-all properties, and mark path/url/command fields required.",
    "Fires on `additionalProperties: true`; a catch-all property (payload, data, body, params, options, ...) with no "
    "type or an unconstrained object; a critical field (path, file_path, url, uri, command, endpoint) that is not "
    "required, except on read tools (get/list/find/search/read).",
)
S11 = Rule(
    "S11", "dangerous-capability", "error", "security",
    "Shell execution, download-and-run, file writes/deletes, arbitrary HTTP and raw sockets let a tool act on the "
    "world; the user must know before installing.",
    "Describe the capability and its limits in the description and set readOnlyHint/destructiveHint/openWorldHint.",
    "Sub-kinds: exec, download-exec, fs-write, fs-delete, http-request, network. Error when the tool does not say "
    "so honestly; warning when its description has 8+ words and its annotations declare it (destructiveHint for "
    "writes and deletes, openWorldHint for network), since the sandbox shows what it really does.",
)
S12 = Rule(
    "S12", "unscoped-destructive-tool", "info", "security",
    "A write/delete tool should say where it acts; one that boasts it can destroy anything on the host is a red flag.",
    "Say the scope (allowed directories, workspace, sandbox) in the description, and enforce it.",
    "Info: a write/delete tool whose description names no scope (workspace, allowed directories, sandbox, "
    "repository, project, within ...). Error: a description that boasts broad destructive power ('deletes any file "
    "on the host', 'full access to the entire filesystem').",
)
S13 = Rule(
    "S13", "annotations", "warning", "metadata",
    "Clients use readOnlyHint/destructiveHint to decide what needs the user's approval; missing or false hints "
    "defeat that.",
    "Set annotations on every tool: readOnlyHint, destructiveHint, idempotentHint, openWorldHint, truthfully.",
    "Warning: no tool on the server has annotations. Info: a tool with annotations but neither readOnlyHint nor "
    "destructiveHint. Error (security): annotations that contradict the name or description (delete_* marked "
    "read-only); warning: readOnlyHint and destructiveHint both true.",
)
S14 = Rule(
    "S14", "prompt-quality", "warning", "conformance",
    "Prompts are shown to users and models; duplicates and undescribed prompts or arguments confuse both.",
    "Give each prompt and argument a unique name and a description of at least 5 words.",
    "Error: duplicate prompt names, duplicate argument names within a prompt, a prompt that is not an object. "
    "Warning: a prompt with no description. Info: a description under 5 words, an argument with no description.",
)

RULES: tuple[Rule, ...] = (S1, S2, S3, S4, S5, S6, S7, S8, S9, S10, S11, S12, S13, S14)
_BY_KEY: dict[str, Rule] = {**{r.id.lower(): r for r in RULES}, **{r.name: r for r in RULES}}


def lookup(key: str) -> Rule | None:
    """The rule with this id (S1, case-insensitive) or kebab-case name, or None."""
    return _BY_KEY.get(key.strip().lower())
