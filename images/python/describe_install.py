"""Runs inside the install container with the server's venv Python: describe what got installed, as JSON on stdout.

Output: {"python": "3.13.x", "distributions": [{"name", "version", "console_scripts": {name: "module:attr"},
"installer", "direct_url"}...]}. Uses only the standard library.
"""

import json
import platform
from importlib import metadata


def describe() -> dict:
    dists = []
    for dist in metadata.distributions():
        scripts = {ep.name: ep.value for ep in dist.entry_points if ep.group == "console_scripts"}
        direct_url = dist.read_text("direct_url.json")
        dists.append(
            {
                "name": dist.metadata["Name"],
                "version": dist.version,
                "console_scripts": scripts,
                "installer": (dist.read_text("INSTALLER") or "").strip(),
                "direct_url": json.loads(direct_url) if direct_url else None,
            }
        )
    dists.sort(key=lambda d: (d["name"] or "").lower())
    return {"python": platform.python_version(), "distributions": dists}


if __name__ == "__main__":
    print(json.dumps(describe()))
