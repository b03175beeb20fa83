"""Static rules S1-S14 on tool definitions: each sNN module holds its RULE and `check`; `engine.run_rules` runs them."""
