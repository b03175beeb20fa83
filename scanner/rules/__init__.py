"""Every rule of every family as data plus one small function: `rules.toml` (the data, each rule listed once),
`registry` (loads it: the one `lookup`), `model` (the Rule type and families), `docs` (--explain), `static/` (S1-S14 on
definitions), `probe` (P), `behavior` (B), `provenance` (I), `fixture` (FX)."""
