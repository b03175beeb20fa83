"""The install phase: a request, the install container and its steps, per-ecosystem step plans, and the allowlisting proxy."""
