"""TypeScript / JavaScript source to tokens with tree-sitter (the tree-sitter-typescript grammars for .ts/.tsx, the
tree-sitter-javascript one for .js/.jsx/.mjs/.cjs), imported lazily so the CLI starts fast. Comments are never read:
only string, number, identifier and key nodes become tokens, each with the structural context the rules need."""

from __future__ import annotations

import functools
from contextvars import ContextVar
from typing import Any

from scanner.vet import shapes
from scanner.vet.imports import ts_aliases
from scanner.vet.model import Kind, Language, Token
from scanner.vet.parse_ts_sdk import SdkMarks, mark_call, mark_declarator, mark_import, member_flags

Node = Any  # tree_sitter.Node (imported lazily)
NAME_NODES = frozenset({"identifier", "property_identifier", "type_identifier", "shorthand_property_identifier",
                        "shorthand_property_identifier_pattern"})
STRING_NODES = frozenset({"string", "template_string"})
ALIAS_SITES = ("import_specifier", "pair_pattern")  # where the original name is already written
CALLEE_CHARS = 500  # of a call's function text, the end, that names it
MAX_DEPTH = 1_000  # a node's text is read at each level above it: a deeper tree is noted, not read
# Each node's parent, by node id, for the file being read: tree-sitter's own `node.parent` walks down from the root
# through every sibling on the way, so reading it for each of 60,000 arguments of one call cost the square of them.
_PARENTS: ContextVar[dict[int, Any]] = ContextVar("parents")


class TooDeep(ValueError):
    """The tree nests deeper than MAX_DEPTH: reading it costs the file times its depth (`a[k] =` 200,000 times)."""


def parent_of(node: Node) -> Node | None:
    return _PARENTS.get({}).get(node.id)


@functools.cache
def parser_for(language: Language) -> Any:
    import tree_sitter

    if language == "javascript":
        import tree_sitter_javascript as grammar
        capsule = grammar.language()
    else:
        import tree_sitter_typescript as grammar
        capsule = grammar.language_tsx() if language == "tsx" else grammar.language_typescript()
    return tree_sitter.Parser(tree_sitter.Language(capsule))


def text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def string_value(node: Node) -> str | None:
    """The value of a string literal, or of a template literal without substitutions; None otherwise."""
    if node.type == "template_string" and any(c.type == "template_substitution" for c in node.children):
        return None
    raw = text(node)
    return raw[1:-1] if len(raw) >= 2 else raw


def callee_of(arguments: Node) -> str:
    """The function text of the call or `new` whose `arguments` node this is ('' when it is not one)."""
    call = parent_of(arguments)
    if call is None or call.type not in ("call_expression", "new_expression"):
        return ""
    return _function_text(call)


@functools.lru_cache(maxsize=256)
def _function_text(call: Node) -> str:
    """The last CALLEE_CHARS of the function's text (where `….setRequestHandler` names it), cached until the file
    is read: each string argument asks for it, and an IIFE's function is its whole body, so reading and searching
    it whole for each of `(function(){…})("roots", "roots", …)` cost the body times the arguments."""
    return text(call.child_by_field_name("function") or call.child_by_field_name("constructor"))[-CALLEE_CHARS:]


def property_name(callee: str) -> str:
    return callee.rsplit(".", 1)[-1]


def pair_key(pair: Node) -> str:
    key = pair.child_by_field_name("key")
    if key is None:
        return ""
    return (string_value(key) or "") if key.type == "string" else text(key)


def _equality_other_side(node: Node) -> Node | None:
    parent = parent_of(node)
    if parent is None or parent.type != "binary_expression":
        return None
    operator = parent.child_by_field_name("operator")
    if operator is None or operator.type not in ("===", "=="):
        return None
    left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
    return right if left is not None and left.id == node.id else left


def is_registration(node: Node, strict: bool) -> bool:
    """A string used as a protocol method name: a switch case, a comparison with a method/type, the value of a
    `method:`/`type:` (not strict: also `name:`) key, or an argument of a handler-registration call."""
    parent = parent_of(node)
    if parent is None:
        return False
    if parent.type == "switch_case":
        return True
    other = _equality_other_side(node)
    if other is not None and shapes.METHOD_OR_TYPE.search(text(other)):
        return True
    if parent.type == "pair" and parent.child_by_field_name("value") == node:
        keys = ("method", "type") if strict else ("method", "type", "name")
        return pair_key(parent).lower() in keys
    if parent.type == "arguments":
        return shapes.registration_callee(callee_of(parent), strict)
    return False


def is_error_code(anchor: Node) -> bool:
    """A number in a JSON-RPC error-code position: `code: N`, `x.code === N`, `new SomethingError(N, …)`."""
    parent = parent_of(anchor)
    if parent is None:
        return False
    if parent.type == "pair" and parent.child_by_field_name("value") == anchor:
        return pair_key(parent) == "code"
    other = _equality_other_side(anchor)
    if other is not None:
        return bool(shapes.CODEISH.search(text(other)))
    if parent.type == "arguments":
        return bool(shapes.ERRORISH.search(callee_of(parent)))
    return False


def ancestors(node: Node, limit: int) -> list[Node]:
    found, current = [], parent_of(node)
    while current is not None and len(found) < limit:
        found.append(current)
        current = parent_of(current)
    return found


def in_capabilities(node: Node) -> bool:
    """Structurally inside a `capabilities` property or variable, or an argument of a *Capabilit* call/new."""
    for anc in ancestors(node, 12):
        if anc.type == "pair" and pair_key(anc) == "capabilities":
            return True
        if anc.type == "variable_declarator" and text(anc.child_by_field_name("name")) == "capabilities":
            return True
        if anc.type == "arguments" and shapes.CAPABILITY_CALL.search(callee_of(anc)):
            return True
    return False


def in_client_transport_call(node: Node) -> bool:
    return any(anc.type == "arguments" and shapes.TRANSPORTISH.search(callee_of(anc)) for anc in ancestors(node, 8))


class _Reader:
    """One file's token list, with byte columns turned into 1-based character columns."""

    def __init__(self, source: bytes) -> None:
        self.lines = source.split(b"\n")
        self.tokens: list[Token] = []
        self.marks = SdkMarks()

    def column(self, node: Node) -> int:
        row, byte = node.start_point
        line = self.lines[row] if row < len(self.lines) else b""
        return (byte if line.isascii() else len(line[:byte].decode("utf-8", "ignore"))) + 1

    def add(self, kind: Kind, value: str, node: Node, *flags: str) -> None:
        self.tokens.append(Token(kind, value, node.start_point[0] + 1, self.column(node), frozenset(flags)))


def _string(reader: _Reader, node: Node) -> None:
    value = string_value(node)
    if value is None:
        return
    flags = []
    if value in shapes.CAPABILITY_KEYS and in_capabilities(node):
        flags.append("in_capabilities")
    if value in shapes.INIT_STRINGS and is_registration(node, strict=False) or (
            value == "ping" and is_registration(node, strict=True)):
        flags.append("registration")
    reader.add("string", value, node, *flags, *reader.marks.of(node))


def _number(reader: _Reader, node: Node) -> None:
    anchor, value = node, text(node)
    parent = parent_of(node)
    if parent is not None and parent.type == "unary_expression" and text(parent.child_by_field_name("operator")) == "-":
        anchor, value = parent, "-" + value
    reader.add("number", value, anchor, *(("error_code",) if is_error_code(anchor) else ()))


def _key(reader: _Reader, name_node: Node, name: str, value: Node | None) -> None:
    """An object key (a pair's or a shorthand property), with the flags its value and surroundings give it."""
    literal = string_value(value) if value is not None and value.type in STRING_NODES else None
    flags = shapes.literal_key_flags(name, literal)
    if name in shapes.CAPABILITY_KEYS and in_capabilities(name_node):
        flags.append("in_capabilities")
    if name in ("sessionIdGenerator", "sessionId") and text(value) in ("undefined", "null"):
        flags.append("benign")
    if name in shapes.SESSION_KEYS and in_client_transport_call(name_node):
        flags.append("client_session")
    if name in shapes.SSE_OPTION_KEYS and in_client_transport_call(name_node):
        flags.append("transport_ctx")
    reader.add("key", name, name_node, *flags)


def _credential_key(reader: _Reader, key: Node) -> None:
    is_string = key.type in STRING_NODES
    key_text = (string_value(key) or "") if is_string else text(key)
    if is_string or key.type in ("identifier", "member_expression"):
        if shapes.credential_key_flagged(key_text, is_string):
            reader.add("string" if is_string else "name", key_text, key, "cred_key")


def _store_call(reader: _Reader, call: Node) -> None:
    """`store.set(key, {client_id, …})`, `saveCredentials(key, …)`: classify the key."""
    function = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if function is None or arguments is None:
        return
    name = property_name(text(function))
    if not (shapes.STORE_VERBS.search(name) or shapes.STOREISH.search(name)):
        return
    args = arguments.named_children
    if len(args) < 2:
        return
    value_text = " ".join(text(a) for a in args[1:])
    if not (shapes.CREDENTIALISH.search(value_text) or "credential" in name.lower()):
        return
    if not shapes.looks_like_token_store(text(function), value_text):
        _credential_key(reader, args[0])


def _indexed_store(reader: _Reader, assignment: Node) -> None:
    """`creds[serverUrl] = {client_id, …}`: classify the index."""
    left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
    if left is None or left.type != "subscript_expression":
        return
    base, value_text = text(left.child_by_field_name("object")), text(right)
    if not (shapes.CREDENTIALISH.search(value_text) or "credential" in base.lower()):
        return
    index = left.child_by_field_name("index")
    if index is not None and not shapes.looks_like_token_store(base, value_text):
        _credential_key(reader, index)


def _name(reader: _Reader, node: Node, aliases: dict[str, str]) -> None:
    value = text(node)
    parent = parent_of(node)
    flags: tuple[str, ...] = reader.marks.of(node)
    if node.type == "property_identifier" and parent is not None and parent.type == "member_expression":
        flags += member_flags(reader.marks, parent)
        if value in shapes.SESSION_KEYS and shapes.TRANSPORTISH.search(text(parent.child_by_field_name("object"))):
            flags += ("client_session",)
        elif parent_of(parent) is not None and parent_of(parent).type == "call_expression" \
                and parent_of(parent).child_by_field_name("function") == parent:
            flags += ("method_call",)
    reader.add("name", value, node, *flags)
    canonical = aliases.get(value)
    if canonical and node.type == "identifier" and (parent is None or parent.type not in ALIAS_SITES):
        reader.add("name", canonical, node)
    if node.type == "shorthand_property_identifier":
        _key(reader, node, value, None)


def _descends(kind: str) -> bool:
    """Whether a node's children are read: not a comment's, nor a plain string's (a literal: nothing more in it)."""
    return kind not in ("comment", "string")


def _visit(reader: _Reader, node: Node, aliases: dict[str, str]) -> None:
    """The tokens of one node."""
    kind = node.type
    if kind in STRING_NODES:
        _string(reader, node)
    elif kind == "number":
        _number(reader, node)
    elif kind in NAME_NODES:
        _name(reader, node, aliases)
    elif kind == "pair":
        key = node.child_by_field_name("key")
        if key is not None and key.type in ("property_identifier", "string", "number"):
            _key(reader, key, pair_key(node), node.child_by_field_name("value"))
    elif kind == "call_expression":
        _store_call(reader, node)
        mark_call(reader.marks, node, aliases)
    elif kind in ("import_statement", "export_statement"):
        mark_import(reader.marks, node)
    elif kind == "variable_declarator":
        mark_declarator(reader.marks, node)
    elif kind == "assignment_expression":
        _indexed_store(reader, node)


def _preorder(root: Node) -> tuple[list[Node], dict[int, Node]]:
    """The nodes to read, parents before children, and each one's parent; TooDeep before any node is read."""
    order, parents, stack = [], {}, [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise TooDeep(f"nested deeper than {MAX_DEPTH} levels at line {node.start_point[0] + 1}")
        order.append(node)
        if _descends(node.type):
            children = node.children
            parents.update((child.id, node) for child in children)
            stack.extend((child, depth + 1) for child in reversed(children))
    return order, parents


def ts_tokens(source: bytes, language: Language) -> tuple[Token, ...]:
    """Every token of a TypeScript/JavaScript file, in source order (a syntax error leaves the rest readable)."""
    tree = parser_for(language).parse(source)
    aliases = ts_aliases(tree.root_node, text)
    reader = _Reader(source)
    order, parents = _preorder(tree.root_node)
    token = _PARENTS.set(parents)
    try:
        for node in order:
            _visit(reader, node, aliases)
    finally:
        _PARENTS.reset(token)
        _function_text.cache_clear()  # the cached nodes hold their tree: none outlives its file
    return tuple(reader.tokens)
