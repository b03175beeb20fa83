"""The TypeScript SDK v1 shapes the TS_SDK_V1_* advisories read, marked on tree-sitter nodes during parse_ts's one
walk (a node is visited before its children, so a mark made at an import or a call is there when its name nodes
become tokens): module specifiers of imports, exports, `require()` and `import()`; the names imported from a module
(`from:MODULE`), also through a namespace import (`sdk.McpError`) or a destructured `require`; handler registrations
by schema constant; the variadic `server.tool(name, …)`; `completable(x.optional(), cb)`; `finishAuth(code)`; and
reads of the v1 handler context (`extra.signal`, or the second parameter a handler's own signature names)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

Node = Any  # tree_sitter.Node

VARIADIC = frozenset({"tool", "prompt", "resource"})
HANDLER_SETTERS = frozenset({"setRequestHandler", "setNotificationHandler"})
SCHEMA_CONSTANT = re.compile(r"(Request|Notification)Schema$")
CODE_NAMED = re.compile(r"^(auth(orization)?)?code$", re.I)
OPTIONAL_CALL = re.compile(r"\.optional\(\s*\)\s*$")
MCP_RECEIVER = re.compile(r"server|mcp", re.I)
STRING_NODES = ("string", "template_string")


@dataclass
class SdkMarks:
    """Flags by node id, the namespace imports (local name -> module) and the handler-context parameter names."""

    flags: dict[int, set[str]] = field(default_factory=dict)
    namespaces: dict[str, str] = field(default_factory=dict)
    context_params: set[str] = field(default_factory=set)

    def mark(self, node: Node | None, *flags: str) -> None:
        if node is not None:
            self.flags.setdefault(node.id, set()).update(flags)

    def of(self, node: Node) -> tuple[str, ...]:
        return tuple(self.flags.get(node.id, ()))


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def _literal(node: Node | None) -> str | None:
    if node is None or node.type not in STRING_NODES or any(c.type == "template_substitution" for c in node.children):
        return None
    raw = _text(node)
    return raw[1:-1] if len(raw) >= 2 else None


def mark_import(marks: SdkMarks, statement: Node) -> None:
    """`import … from 'm'` / `export … from 'm'`: the specifier, each imported name, a namespace binding."""
    source = statement.child_by_field_name("source")
    spec = _literal(source)
    if spec is None:
        return
    marks.mark(source, "import_module")
    stack = [c for c in statement.children if c.type in ("import_clause", "export_clause")]
    while stack:
        node = stack.pop()
        if node.type in ("import_specifier", "export_specifier"):
            marks.mark(node.child_by_field_name("name"), "import_name", f"from:{spec}")
        elif node.type == "namespace_import":
            marks.namespaces.update({_text(c): spec for c in node.named_children if c.type == "identifier"})
        else:
            stack.extend(node.named_children)


def mark_declarator(marks: SdkMarks, declarator: Node) -> None:
    """`const { McpError, ErrorCode: E } = require('m')` (the names come from `m`), `const sdk = require('m')`.
    Marked at the declarator: its pattern is walked before its value."""
    call, pattern = declarator.child_by_field_name("value"), declarator.child_by_field_name("name")
    if call is None or pattern is None or call.type != "call_expression" or \
            _text(call.child_by_field_name("function")) != "require":
        return
    arguments = call.child_by_field_name("arguments")
    spec = _literal(arguments.named_children[0]) if arguments is not None and arguments.named_children else None
    if spec is None:
        return
    if pattern.type == "identifier":
        marks.namespaces[_text(pattern)] = spec
        return
    for child in pattern.named_children if pattern.type == "object_pattern" else ():
        name = child if child.type == "shorthand_property_identifier_pattern" else \
            child.child_by_field_name("key") if child.type == "pair_pattern" else None
        marks.mark(name, "import_name", f"from:{spec}")


def _context_param(handler: Node | None) -> str:
    """The name a handler gives its second (context) parameter; '' for `ctx`, the migrated name."""
    if handler is None or handler.type not in ("arrow_function", "function_expression", "function"):
        return ""
    parameters = handler.child_by_field_name("parameters")
    params = [p for p in parameters.named_children if p.type != "comment"] if parameters is not None else []
    if len(params) < 2:
        return ""
    pattern = params[1].child_by_field_name("pattern") or params[1]
    name = _text(pattern) if pattern.type == "identifier" else ""
    return "" if name == "ctx" else name


def _method_call(marks: SdkMarks, member: Node, args: list[Node], aliases: dict[str, str]) -> None:
    prop = member.child_by_field_name("property")
    method = _text(prop)
    if method in HANDLER_SETTERS and args:
        first = args[0]
        if first.type == "identifier" and SCHEMA_CONSTANT.search(aliases.get(_text(first), _text(first))):
            marks.mark(first, "schema_handler_arg")
        name = _context_param(args[-1])
        if name:
            marks.context_params.add(name)
    elif method == "finishAuth" and len(args) == 1:
        arg = args[0]
        if _literal(arg) is not None or arg.type == "identifier" and CODE_NAMED.match(_text(arg)):
            marks.mark(prop, "finish_auth_code")
    elif method in VARIADIC and len(args) >= 2:
        receiver = _text(member.child_by_field_name("object"))
        marks.mark(prop, "variadic_reg", *(("mcp_receiver",) if MCP_RECEIVER.search(receiver) else ()))


def mark_call(marks: SdkMarks, call: Node, aliases: dict[str, str]) -> None:
    function, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
    if function is None or arguments is None:
        return
    args = [a for a in arguments.named_children if a.type != "comment"]
    if function.type == "member_expression":
        _method_call(marks, function, args, aliases)
    elif _text(function) == "completable":
        if args and OPTIONAL_CALL.search(_text(args[0])):
            marks.mark(function, "completable_optional")
    elif _text(function) in ("require", "import") and args:
        spec = _literal(args[0])
        if spec is not None:
            marks.mark(args[0], "import_module")


def member_flags(marks: SdkMarks, member: Node) -> tuple[str, ...]:
    """Flags of a `object.property` read's property: the v1 handler context, or a name off a namespace import."""
    obj = _text(member.child_by_field_name("object"))
    if obj == "extra":
        return ("extra_prop",)
    if obj in marks.context_params:
        return ("extra_prop", "ctx_param_prop")
    spec = marks.namespaces.get(obj)
    return ("import_name", f"from:{spec}") if spec is not None else ()
