"""Package ecosystems (npm, PyPI): one contract (`base.Ecosystem`), one module per ecosystem, one registry
(`registry`) that the scan, resolution, provenance and signing dispatch through."""
