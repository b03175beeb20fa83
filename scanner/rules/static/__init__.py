"""Static rules S1-S14 on tool definitions: `engine.run_rules` runs them; `catalog` holds their data."""
