"""The base of every report model: unknown fields are refused (a report is a contract, scanner/schemas/)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ReportModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
