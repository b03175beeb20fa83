"""The install proxy: the registry allowlist, the proxy container and its network, its log, the upstream (corporate)
proxy it chains to, and the probe that the install network cannot reach that upstream directly."""
