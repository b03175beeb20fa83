"""TASKS_LEGACY, TASKS_LIST_REMOVED, TASKS_RESULT_REMOVED: the Tasks methods the 2026-07-28 redesign changes or
removes, by method string or SDK schema constant."""

from __future__ import annotations

from scanner.vet.rules.method_strings import method_rule

RULES = {
    "TASKS_LEGACY": method_rule("TASKS_LEGACY", frozenset({"tasks/get", "tasks/cancel"}),
                                frozenset({"GetTaskRequestSchema", "CancelTaskRequestSchema"})),
    "TASKS_LIST_REMOVED": method_rule("TASKS_LIST_REMOVED", frozenset({"tasks/list"}),
                                      frozenset({"ListTasksRequestSchema"})),
    "TASKS_RESULT_REMOVED": method_rule("TASKS_RESULT_REMOVED", frozenset({"tasks/result"}),
                                        frozenset({"GetTaskResultRequestSchema"})),
}
