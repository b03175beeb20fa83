"""Views of the one Report model: terminal (rich), SARIF 2.1.0, Markdown, and JSON (`model_dump_json`)."""
