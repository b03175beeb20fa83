"""Probing a server's tools: arguments to call them with, fixtures, call results and the probe rules (P1–P11)."""
