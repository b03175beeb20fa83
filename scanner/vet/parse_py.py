"""Python source to tokens with the standard library's `ast` (comments never reach the tree): strings, numbers,
names, attributes, dict keys and keyword arguments, each with the structural context the rules need. The same token
shape as parse_ts, so every rule is written once."""

from __future__ import annotations

import ast

from scanner.vet import shapes
from scanner.vet.imports import py_aliases
from scanner.vet.model import Kind, Token, source_lines

Parents = dict[int, ast.AST]
BOM = "\ufeff"


def func_name(func: ast.AST) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def expr_text(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return expr_text(node.value) + "." + node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ""


def base_name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return base_name(node.value) or node.attr
    return node.id if isinstance(node, ast.Name) else ""


def int_value(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = int_value(node.operand)
        return None if inner is None or inner < 0 else -inner
    return None


def _mentions(node: ast.AST, pattern: object) -> bool:
    """Any name, attribute, keyword or string under `node` matching `pattern`."""
    for n in ast.walk(node):
        text = (n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute)
                else n.arg if isinstance(n, ast.keyword) else
                n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) else None)
        if text and pattern.search(text):  # type: ignore[attr-defined]
            return True
    return False


def _dict_key_of(parent: ast.AST, node: ast.AST) -> str | None:
    if isinstance(parent, ast.Dict):
        for key, value in zip(parent.keys, parent.values):
            if value is node and isinstance(key, ast.Constant) and isinstance(key.value, str):
                return key.value
    return None


def _compared_with(parent: ast.AST, node: ast.AST) -> list[ast.AST]:
    return [o for o in [parent.left, *parent.comparators] if o is not node] if isinstance(parent, ast.Compare) else []


def _subscript_key(node: ast.AST) -> str:
    return node.slice.value if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
        and isinstance(node.slice.value, str) else ""


def is_registration(node: ast.AST, parents: Parents, strict: bool) -> bool:
    parent = parents.get(id(node))
    if parent is None:
        return False
    for other in _compared_with(parent, node):
        if (func_name(other) or _subscript_key(other)).lower() in ("method", "type"):
            return True
    if isinstance(parent, ast.Call) and node in parent.args:
        return shapes.registration_callee(func_name(parent.func), strict)
    if isinstance(parent, ast.keyword) and parent.arg in ("method", "type"):
        return True
    key = _dict_key_of(parent, node)
    return key is not None and key.lower() in (("method", "type") if strict else ("method", "type", "name"))


def is_error_code(node: ast.AST, parents: Parents) -> bool:
    parent = parents.get(id(node))
    if parent is None:
        return False
    if _dict_key_of(parent, node) == "code" or isinstance(parent, ast.keyword) and parent.arg == "code":
        return True
    if isinstance(parent, ast.Call) and node in parent.args and shapes.ERRORISH.search(func_name(parent.func)):
        return True
    return any(shapes.CODEISH.search(func_name(o) or _subscript_key(o)) for o in _compared_with(parent, node))


def _byte_column(line: str, offset: int) -> int:
    return (offset if line.isascii() else len(line.encode("utf-8")[:offset].decode("utf-8", "ignore"))) + 1


class _Reader:
    def __init__(self, lines: list[str], parents: Parents, aliases: dict[str, str]) -> None:
        self.lines, self.parents, self.aliases = lines, parents, aliases
        self.tokens: list[Token] = []
        # the parser read the text after a byte-order mark: line 1's offsets start after its 3 bytes
        self.bom_bytes = len(BOM.encode()) if lines and lines[0].startswith(BOM) else 0

    def add(self, kind: Kind, value: str, node: ast.AST, *flags: str) -> None:
        line = getattr(node, "lineno", 1)
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        offset = getattr(node, "col_offset", 0) + (self.bom_bytes if line == 1 else 0)
        self.tokens.append(Token(kind, value, line, _byte_column(text, offset), frozenset(flags)))

    def constant(self, node: ast.AST, in_caps: bool) -> None:
        number = int_value(node)
        if number is not None and not isinstance(self.parents.get(id(node)), ast.UnaryOp):
            self.add("number", str(number), node, *(("error_code",) if is_error_code(node, self.parents) else ()))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            value, flags = node.value, []
            if value in shapes.CAPABILITY_KEYS and in_caps:
                flags.append("in_capabilities")
            if value in shapes.INIT_STRINGS and is_registration(node, self.parents, strict=False) or (
                    value == "ping" and is_registration(node, self.parents, strict=True)):
                flags.append("registration")
            self.add("string", value, node, *flags)

    def name(self, node: ast.AST) -> None:
        """A name, or an attribute (`method_call` when it is the called function: `session.list_roots()`)."""
        if isinstance(node, ast.Name):
            self.add("name", node.id, node)
            if node.id in self.aliases:
                self.add("name", self.aliases[node.id], node)
        elif isinstance(node, ast.Attribute):
            client = node.attr in shapes.SESSION_KEYS and shapes.TRANSPORTISH.search(base_name(node.value))
            parent = self.parents.get(id(node))
            called = isinstance(parent, ast.Call) and parent.func is node
            self.add("name", node.attr, node, "attribute",
                     *(("client_session",) if client else ("method_call",) if called else ()))

    def imports(self, node: ast.Import | ast.ImportFrom) -> None:
        source = f"from:{'.' * node.level}{node.module or ''}" if isinstance(node, ast.ImportFrom) else "from:"
        for alias in node.names:
            self.add("name", alias.name.rsplit(".", 1)[-1], alias, "import_name", source)
            if "." in alias.name:
                self.add("string", alias.name, alias, "import_module")
        if isinstance(node, ast.ImportFrom) and node.module:
            self.add("string", node.module, node, "import_module")

    def dict_keys(self, node: ast.Dict, in_caps: bool) -> None:
        for key, value in zip(node.keys, node.values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                self.key(key.value, key, value, in_caps, callee="")

    def key(self, name: str, at: ast.AST, value: ast.AST, in_caps: bool, callee: str, kwarg: bool = False) -> None:
        literal = value.value if isinstance(value, ast.Constant) else object()
        flags = shapes.literal_key_flags(name, literal)
        if kwarg:
            flags += ["kwarg", f"callee:{callee}", *(("false_value",) if literal is False else ()),
                      *(("timedelta_value",) if isinstance(value, ast.Call) and func_name(value.func) == "timedelta"
                        else ())]
        if name in shapes.CAPABILITY_KEYS and in_caps:
            flags.append("in_capabilities")
        if name in shapes.SESSION_KEYS and shapes.TRANSPORTISH.search(callee):
            flags.append("benign" if literal is None else "client_session")
        if name in shapes.SSE_OPTION_KEYS and shapes.TRANSPORTISH.search(callee):
            flags.append("transport_ctx")
        self.add("key", name, at, *flags)

    def call(self, node: ast.Call, in_caps: bool) -> bool:
        """Keyword tokens and credential-store keys of a call; the capabilities context its arguments get."""
        callee = func_name(node.func)
        caps = in_caps or bool(shapes.CAPABILITY_CALL.search(callee))
        for keyword in node.keywords:
            if keyword.arg is not None:
                self.key(keyword.arg, keyword, keyword.value, caps, callee, kwarg=True)
        storeish = shapes.STORE_VERBS.search(callee) or shapes.STOREISH.search(callee)
        if storeish and len(node.args) >= 2:
            values = [*node.args[1:], *(k.value for k in node.keywords)]
            creds = "credential" in callee.lower() or any(_mentions(v, shapes.CREDENTIALISH) for v in values)
            if creds and not self.token_store(callee, node):
                self.credential_key(node.args[0])
        return caps

    def token_store(self, container: str, value: ast.AST) -> bool:
        if _mentions(value, shapes.CLIENT_SECRETISH):
            return False
        return bool(shapes.TOKENISH.search(container)) or isinstance(value, ast.Call) and bool(
            shapes.TOKENISH.search(func_name(value.func)))

    def credential_key(self, key: ast.AST) -> None:
        is_string = isinstance(key, ast.Constant) and isinstance(key.value, str)
        if (is_string or isinstance(key, ast.Name | ast.Attribute)) and \
                shapes.credential_key_flagged(expr_text(key), is_string):
            self.add("string" if is_string else "name", expr_text(key), key, "cred_key")

    def assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                base = expr_text(target.value)
                if (_mentions(node.value, shapes.CREDENTIALISH) or shapes.CREDENTIALISH.search(base)) \
                        and not self.token_store(base, node.value):
                    self.credential_key(target.slice)


def _child_caps(reader: _Reader, node: ast.AST, in_caps: bool) -> dict[int, bool]:
    """Tokens of one node, and the capabilities context of the children that differ from `in_caps`."""
    reader.constant(node, in_caps)
    reader.name(node)
    if isinstance(node, ast.Import | ast.ImportFrom):
        reader.imports(node)
    elif isinstance(node, ast.Dict):
        reader.dict_keys(node, in_caps)
        return {id(v): True for k, v in zip(node.keys, node.values)
                if isinstance(k, ast.Constant) and k.value == "capabilities"}
    elif isinstance(node, ast.Call):
        caps = reader.call(node, in_caps)
        return {id(a): caps for a in [*node.args, *(k.value for k in node.keywords)]}
    elif isinstance(node, ast.Assign):
        reader.assign(node)
        if any(isinstance(t, ast.Name) and t.id == "capabilities" for t in node.targets):
            return {id(node.value): True}
    return {}


def py_tokens(source: str) -> tuple[Token, ...]:
    """Every token of a Python file, in walk order. SyntaxError propagates: the caller notes the file as unread. A
    UTF-8 byte-order mark is valid Python (Python itself skips it), so it is not handed to `ast`, which refuses it."""
    tree = ast.parse(source.removeprefix(BOM))
    parents: Parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    reader = _Reader(source_lines(source, "python"), parents, py_aliases(tree))
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, in_caps = stack.pop()
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # a docstring or a bare string statement: documentation, read like a comment
        override = _child_caps(reader, node, in_caps)
        children = list(ast.iter_child_nodes(node))
        stack.extend((c, in_caps or override.get(id(c), False)) for c in reversed(children))
    return tuple(reader.tokens)
