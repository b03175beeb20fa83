"""`mcp-sandbox batch`: vet many targets in one resumable run.

    inputs (text / registry export / client config) → store (DIR/batch.sqlite) → runner (claims rows, hands jobs to a
    JobBackend: where jobs run) → outcome (done / retry / failed) → reports/… → summary.md / summary.json

The embedded backend (subprocess_backend) runs each scan as a `mcp-sandbox scan --json` child process; a distributed
backend (Celery) implements the same JobBackend protocol (jobs.py) and leaves the store and the summary as they are.
"""
