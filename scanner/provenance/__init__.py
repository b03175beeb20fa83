"""Install provenance: what a package claims to be, checked against its registry, before and after install.

Modules, one concept each:
  model        the check-outcome model and the report's `provenance` section
  rules        the I1…I9 rules as data, and how a rule becomes a Finding
  names        package-name normalisation and edit distance
  versions     version normalisation and "could this spec resolve to that version"
  known_bad    I8: known-bad releases (data in scanner/data/known_bad.json)
  typosquat    I9: names close to well-known MCP server packages (scanner/data/well_known_servers.json)
  launch       I1: lint of a server's launch command (npx, uvx, docker run, …)
  client_config  reading Claude Desktop / Claude Code / Cursor / VS Code MCP configs
  http         the registry HTTP client and fetch outcomes
  npm_keys     the pinned npm registry signing keys (scanner/data/npm_registry_keys.json)
  npm          I2/I3/I4 checks against the npm registry
  pypi         I2/I4/I5/I6 checks against PyPI
  advisories   advisory lookup (local OSV export), never a silent "clean"
  npm_lockfile I5: dependency tree from package-lock.json (git/URL deps, install scripts)

Nothing here is imported eagerly: `scanner.report` imports `scanner.provenance.model` only.
"""
