"""The install steps' environment (sandbox/install/container.py, _install_environment)."""

from __future__ import annotations

from sandbox.install.container import NODE_HEADERS, _install_environment
from sandbox.install.request import InstallRequest


def test_node_gyp_is_given_node_s_headers_so_a_native_build_never_fetches_them_from_nodejs_org() -> None:
    """npm 10's bundled node-gyp (images/node) downloads https://nodejs.org/download/release/v<node>/…-headers.tar.gz
    through the install proxy unless `nodedir` is set: the proxy refuses it and the report charges an I7 to the package
    whose `npm rebuild` step ran node-gyp (Debian's node-gyp, run by npm 9, read /usr/include/nodejs instead). node-gyp
    takes `npm_config_*` from the environment in lower case only (NPM_CONFIG_NODEDIR is not read)."""
    environment = _install_environment(InstallRequest("npm", "x@1.0.0", "x", "npm:x@1.0.0"), {})
    assert environment["npm_config_nodedir"] == NODE_HEADERS == "/usr/include/nodejs"
    assert "NPM_CONFIG_NODEDIR" not in environment
