"""The applied sandbox policy has one definition (sandbox.policy.AppliedPolicy); the report and the lockfile use it as
their model, with the report's strictness (unknown keys rejected) and the published schema's field descriptions."""

from __future__ import annotations

import dataclasses

import pydantic
import pytest

from sandbox.run.policy import AppliedPolicy, read_applied
from scanner.report import model as report_module
from scanner.report.model import Report, SandboxInfo, TargetInfo
from scanner.report.json_schema import report_schema

INSPECT = {
    "HostConfig": {"NetworkMode": "none", "ReadonlyRootfs": True, "CapDrop": ["ALL"], "SecurityOpt":
                   ["no-new-privileges"], "PidsLimit": 128, "Memory": 512, "MemorySwap": 512, "NanoCpus": 10**9,
                   "Init": True, "RestartPolicy": {"Name": "no"}, "Tmpfs": {"/tmp": "rw,noexec"}},
    "Config": {"User": "10002:10002", "Env": ["PATH=/usr/bin", "HOME=/home/mcp"], "Image": "img:1"},
    "Image": "sha256:ab",
}


def _report(applied: AppliedPolicy) -> Report:
    return Report(target=TargetInfo(kind="npm", name="demo", requested="npm:demo"),
                  sandbox=SandboxInfo(session="s1", applied=applied))


def test_the_report_uses_the_sandbox_definition() -> None:
    assert report_module.AppliedPolicy is AppliedPolicy


def test_the_applied_policy_round_trips_through_the_report_json() -> None:
    applied = read_applied(INSPECT)
    report = _report(applied)
    dumped = report.model_dump(mode="json")["sandbox"]["applied"]
    assert dumped == applied.as_dict() and dumped["env_names"] == ["HOME", "PATH"]
    again = Report.model_validate_json(report.model_dump_json())
    assert again.sandbox is not None and again.sandbox.applied == applied


def test_unknown_keys_in_the_applied_policy_are_rejected() -> None:
    document = _report(read_applied(INSPECT)).model_dump(mode="json")
    document["sandbox"]["applied"]["seccomp"] = "unconfined"
    with pytest.raises(pydantic.ValidationError, match="seccomp"):
        Report.model_validate(document)


def test_the_schema_lists_the_dataclass_fields_with_their_descriptions() -> None:
    schema = report_schema()["$defs"]["AppliedPolicy"]
    fields = {f.name: f for f in dataclasses.fields(AppliedPolicy)}
    assert list(schema["properties"]) == list(fields) and schema["required"] == list(fields)
    assert schema["additionalProperties"] is False
    for name in ("mounts", "env_names"):
        assert schema["properties"][name]["description"] == fields[name].metadata["description"]
