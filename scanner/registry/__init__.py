"""Package registries: the one HTTP client (`client`) and version resolution (`resolve`)."""
