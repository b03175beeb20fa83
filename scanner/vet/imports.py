"""Local names back to the canonical names a module exports, so a rule written against `InitializeRequestSchema`
also sees `import { InitializeRequestSchema as Init }` (and `const { SetLevelRequestSchema: SL } = require(…)`, and
Python's `from mcp.types import RootsCapability as RC`). Namespace imports need no table: `sdk.PingRequestSchema`
and `types.PingRequest` name the canonical export as the property itself, which the parsers read as a name."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any


def ts_aliases(root: Any, text: Callable[[Any], str]) -> dict[str, str]:
    """alias -> imported name, from `import { A as B }` and destructured `require` (`const { A: B } = require()`)."""
    aliases: dict[str, str] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "import_specifier":
            name, alias = node.child_by_field_name("name"), node.child_by_field_name("alias")
            if name is not None and alias is not None:
                aliases[text(alias)] = text(name)
        elif node.type == "variable_declarator" and _is_require(node.child_by_field_name("value"), text):
            _destructured(node.child_by_field_name("name"), aliases, text)
        elif node.type in ("program", "import_statement", "import_clause", "named_imports", "lexical_declaration",
                           "variable_declaration", "export_statement"):
            stack.extend(node.children)
    return aliases


def _is_require(value: Any, text: Callable[[Any], str]) -> bool:
    return value is not None and value.type == "call_expression" and \
        text(value.child_by_field_name("function")) == "require"


def _destructured(pattern: Any, aliases: dict[str, str], text: Callable[[Any], str]) -> None:
    if pattern is None or pattern.type != "object_pattern":
        return
    for child in pattern.named_children:
        if child.type == "pair_pattern":
            key, value = child.child_by_field_name("key"), child.child_by_field_name("value")
            if key is not None and value is not None and value.type == "identifier":
                aliases[text(value)] = text(key)


def py_aliases(tree: ast.AST) -> dict[str, str]:
    """alias -> the imported name's last part, from `import a.b as c` and `from m import A as B`."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.asname and alias.asname != alias.name:
                    aliases[alias.asname] = alias.name.rsplit(".", 1)[-1]
    return aliases
