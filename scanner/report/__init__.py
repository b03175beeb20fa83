"""The one report model (`model`), the score and verdict (`score`), and its views: terminal, JSON schema, SARIF,
Markdown."""
