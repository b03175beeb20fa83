"""What every phase shares: the engine, sessions and their labels, teardown sweeps (gc), images, hardening, archives, errors."""
