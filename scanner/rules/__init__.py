"""Every rule of every family as data plus one small function: `model` (the Rule type), `registry` (the one
lookup), `static/` (S1-S14 on definitions), `probe` (P), `behavior` (B), `provenance` (I)."""
