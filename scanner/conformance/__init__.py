"""Wire conformance to a protocol revision: the JSON Schema dialect of the listed tools, and the 2026-07-28 checks
run over raw JSON-RPC against a fresh server (docs/conformance.md)."""
