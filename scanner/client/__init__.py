"""The scanner's own MCP client: JSON-RPC over the attached stdio's message streams, on mcp_types' models alone.

Importing the MCP SDK (`mcp`) costs a scan about 0.45 s of CPU (its `__init__` loads its server side and a model
module per protocol revision); this client imports none of it. It speaks the handshake era (`initialize`, then
requests with no per-request `_meta`) and is used where the scan drives that handshake itself: P10's second listing
(scanner/pipeline/relisting.py). The first listing and the probes still use the SDK's `Client` (its `auto`
negotiation, the 2026-07-28 era, output-schema checks): docs/own-client.md says what this client must match before
it can replace that one.
"""
