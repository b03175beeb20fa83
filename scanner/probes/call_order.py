"""The order the tools are probed in: read-only tools first (the server's order within each group), then, per entity,
the tools that make or find things before the tools that take an id of one, and the tools that delete last.

An entity is what a tool's name says it works on once the verbs are gone (`create_note`, `get_note`, `delete_notes`:
`note`), or what an id parameter names (`note_id`). A tool whose name or parameters name no entity is linked to
every entity. The order only moves tools later, never drops one: destructive tools are still called, after the
calls that can use their ids (the sandbox is thrown away afterwards). It depends only on the tools, so it is
deterministic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scanner.probes.arguments import ID_WORDS, looks_read_only
from scanner.probes.tooldef import input_schema, tool_name
from scanner.vocabulary import CREATING_VERBS, READ_VERBS, WRITE_VERBS, name_words

MAKING_VERBS = CREATING_VERBS | {"add", "insert", "register", "post", "generate", "open", "start", "upload"}
FINDING_VERBS = frozenset({"list", "search", "find", "query", "browse", "ls", "lookup", "index", "enumerate"})
DELETING_VERBS = frozenset({"delete", "remove", "rm", "drop", "destroy", "purge", "clear", "erase", "unlink",
                            "archive", "close", "revoke"})
NAME_PARAMS = frozenset({"name", "names"})
URI_PARAMS = frozenset({"uri", "uris"})
_NOT_ENTITY = (READ_VERBS | WRITE_VERBS | MAKING_VERBS | FINDING_VERBS | DELETING_VERBS | ID_WORDS | NAME_PARAMS
               | URI_PARAMS | {"by", "all", "a", "an", "the", "of", "for", "from", "to", "in", "on", "one", "many", "new", "my"})


def singular(word: str) -> str:
    """notes → note, entities → entity, boxes → box (enough to match a tool's entity with an id's)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def entity_words(name: str) -> frozenset[str]:
    """The nouns of a tool or parameter name: its words without verbs, id words and fillers, made singular."""
    return frozenset(singular(word) for word in name_words(name) if word not in _NOT_ENTITY and len(word) > 1)


def is_id_param(name: str) -> bool:
    """A parameter that takes an identifier of something: `id`, `note_id`, `noteId`, `uuid`, `key`, `name(s)`,
    `uri`, …"""
    words = set(name_words(name))
    return bool(words & ID_WORDS) or name.lower() in NAME_PARAMS | URI_PARAMS


def id_params(tool: dict[str, Any]) -> list[str]:
    """The tool's top-level parameters that take an identifier, in schema order."""
    properties = input_schema(tool).get("properties")
    return [key for key in properties if isinstance(key, str) and is_id_param(key)] \
        if isinstance(properties, dict) else []


@dataclass(frozen=True)
class Role:
    """What ordering needs to know about a tool."""

    entities: frozenset[str]
    produces: bool  # makes or finds things: its result may hold ids
    consumes: bool  # takes an id of something (and does not make or find things)
    deletes: bool

    def linked(self, other: Role) -> bool:
        return not self.entities or not other.entities or bool(self.entities & other.entities)


def role(tool: dict[str, Any]) -> Role:
    name = tool_name(tool)
    verbs = set(name_words(name))
    params = id_params(tool)
    entities = entity_words(name) | frozenset(word for param in params for word in entity_words(param))
    produces = bool(verbs & (MAKING_VERBS | FINDING_VERBS))
    deletes = bool(verbs & DELETING_VERBS)
    return Role(entities=entities, produces=produces and not deletes, consumes=bool(params) and not produces,
                deletes=deletes)


def order_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Read-only tools first, then the rest (the server's order within each group); a tool that takes an id goes
    after the tools of its entity that make or find things, and a tool that deletes after every other tool of its
    entity."""
    base = sorted(tools, key=lambda tool: not looks_read_only(tool))
    roles = [role(tool) for tool in base]
    positions = list(range(len(base)))
    made = _Latest.of(roles, positions, lambda known: known.produces)
    after = [made.linked_to(known, index) if known.consumes or known.deletes else index
             for index, known in enumerate(roles)]
    kept = _Latest.of(roles, after, lambda known: not known.deletes)
    after = [kept.linked_to(known, after[index]) if known.deletes else after[index] for index, known in enumerate(roles)]
    tier = [2 if known.deletes else 1 if known.consumes else 0 for known in roles]
    order = sorted(positions, key=lambda index: (after[index], tier[index], index))
    return [base[index] for index in order]


@dataclass(frozen=True)
class _Latest:
    """The latest position among some tools, per entity (linear, however many tools the server lists)."""

    by_entity: dict[str, int]
    unnamed: int  # of the tools that name no entity (linked to every entity)
    overall: int

    @classmethod
    def of(cls, roles: list[Role], positions: list[int], chosen: Any) -> _Latest:
        by_entity: dict[str, int] = {}
        unnamed = overall = -1
        for known, position in zip(roles, positions, strict=True):
            if not chosen(known):
                continue
            overall = max(overall, position)
            if not known.entities:
                unnamed = max(unnamed, position)
            for entity in known.entities:
                by_entity[entity] = max(by_entity.get(entity, -1), position)
        return cls(by_entity, unnamed, overall)

    def linked_to(self, known: Role, position: int) -> int:
        """The latest position of a chosen tool linked to `known`, or `position` when that is later."""
        if not known.entities:
            return max(position, self.overall)
        return max([position, self.unnamed, *(self.by_entity.get(entity, -1) for entity in known.entities)])
