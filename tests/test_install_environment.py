"""The install steps' environment (sandbox/install/container.py, _install_environment), and what it keeps a native
build from doing in a real install (docker)."""

from __future__ import annotations

import json
import uuid

import pytest

from sandbox.core import images
from sandbox.core.errors import SandboxError
from sandbox.core.session import SandboxSession
from sandbox.install import container as install
from sandbox.install.container import NODE_HEADERS, _install_environment
from sandbox.install.request import InstallRequest, local_source


def test_node_gyp_is_given_node_s_headers_so_a_native_build_never_fetches_them_from_nodejs_org() -> None:
    """npm 10's bundled node-gyp (images/node) downloads https://nodejs.org/download/release/v<node>/…-headers.tar.gz
    through the install proxy unless `nodedir` is set: the proxy refuses it and the report charges an I7 to the package
    whose `npm rebuild` step ran node-gyp (Debian's node-gyp, run by npm 9, read /usr/include/nodejs instead). node-gyp
    takes `npm_config_*` from the environment in lower case only (NPM_CONFIG_NODEDIR is not read)."""
    environment = _install_environment(InstallRequest("npm", "x@1.0.0", "x", "npm:x@1.0.0"), {})
    assert environment["npm_config_nodedir"] == NODE_HEADERS == "/usr/include/nodejs"
    assert "NPM_CONFIG_NODEDIR" not in environment


@pytest.mark.docker
def test_a_native_build_in_the_install_reaches_for_no_host(docker_client, tmp_path, no_leftovers) -> None:
    """A package with a binding.gyp and no compiler in the image: its implicit install script (`node-gyp rebuild`)
    fails, so the install does, and the error names every host the install tried. With no `nodedir` it would name
    nodejs.org (node-gyp's download of Node's headers, refused by the install proxy)."""
    folder = tmp_path / "mcp-zoo-native"
    folder.mkdir()
    (folder / "package.json").write_text(json.dumps({"name": "mcp-zoo-native", "version": "0.1.0"}))
    (folder / "binding.gyp").write_text(json.dumps({"targets": [{"target_name": "x", "sources": ["x.cc"]}]}))
    (folder / "x.cc").write_text("int x() { return 0; }\n")
    runtime = images.ensure_runtime_image(docker_client, "node")
    ca = images.DEFAULT_CA_BUNDLE if images.DEFAULT_CA_BUNDLE.is_file() else None
    request = InstallRequest("npm", local_source(folder), "mcp-zoo-native", f"test:{uuid.uuid4()}",
                             local_path=folder, ca_bundle=ca)
    with SandboxSession(docker_client) as session, pytest.raises(SandboxError) as failed:
        install.install(session, request, runtime.tag, runtime.image_id, use_cache=False)
    said = str(failed.value)
    assert "in the install script of mcp-zoo-native@0.1.0" in said and "node-gyp" in said, said
    assert "tried to reach" not in said and "nodejs.org" not in said, said
