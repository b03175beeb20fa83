"""The base of every report model: unknown fields are refused (a report is a contract, scanner/schemas/).

Each model's validator and serializer are built when the model is first used, not when its class is defined: a
command pays only for the models it uses (`check` builds a Report and its parts, never the lock's or a batch's), and
the ~40 classes cost their definitions at start-up rather than ~40 schema builds. The schema and the JSON are the
same either way."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ReportModel(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
