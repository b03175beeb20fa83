"""OAUTH_DCR (Deprecated) and the three authorization-hardening warnings of 2026-07-28, which constrain what an MCP
*client* does: AUTH_ISS_UNVALIDATED (SEP-2468), AUTH_DCR_NO_APPLICATION_TYPE (SEP-837),
AUTH_CREDENTIALS_NOT_ISSUER_KEYED (SEP-2352). The warnings are gated on MCP context and skip authorization-server code,
which handles the same field names from the other side."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from scanner.vet.facts import FileFacts
from scanner.vet.model import Hit, ParsedFile, Token

DCR_NAMES = frozenset({"registration_endpoint", "registration_access_token", "client_id_issued_at"})
# SDK models that fill application_type in themselves (python-sdk OAuthClientMetadata defaults it; the TS client
# derives it from the redirect URIs): a registration through them is already right.
SDK_SUPPLIES_APPLICATION_TYPE = frozenset({"OAuthClientMetadata", "OAuthClientMetadataBase", "OAuthClientProvider",
                                           "OAuthClientInformationFull"})


def _normal(value: str) -> str:
    return value.lower().replace("-", "").replace("_", "")


def _nearest(candidates: Sequence[Token], markers: Sequence[int]) -> Token | None:
    if not candidates:
        return None
    if not markers:
        return candidates[0]
    return min(candidates, key=lambda t: min(abs(t.line - m) for m in markers))


def _mcp_client_code(facts: FileFacts) -> bool:
    """The warnings' gate: the file talks MCP and is not authorization-server code."""
    return facts.mcp_context and not facts.server_auth


def oauth_dcr(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
    """The RFC 7591 field names, or a name containing dynamicClientRegistration (medium)."""
    for token in parsed.tokens:
        if token.kind != "number" and (token.value.lower() in DCR_NAMES or token.kind == "name" and
                                       "dynamicclientregistration" in _normal(token.value)):
            yield Hit("OAUTH_DCR", token, "medium")


def auth_iss_unvalidated(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
    """A grant_type 'authorization_code' redemption in a file that never touches iss / issuer (medium)."""
    if not _mcp_client_code(facts) or not facts.grant_type_lines:
        return
    if any(t.value.lower() == "iss" or "issuer" in t.value.lower() for t in parsed.tokens if t.kind != "number"):
        return
    codes = [t for t in parsed.tokens if t.kind == "string" and t.value == "authorization_code"]
    anchor = _nearest(codes, facts.grant_type_lines)
    if anchor is not None:
        yield Hit("AUTH_ISS_UNVALIDATED", anchor, "medium")


def auth_dcr_no_application_type(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
    """A registration body (redirect_uris + client_name) with no application_type and no SDK model (medium)."""
    if not _mcp_client_code(facts):
        return
    names = {_normal(t.value) for t in parsed.tokens if t.kind != "number"}
    if "clientname" not in names or "applicationtype" in names or any(
            t.kind == "name" and t.value in SDK_SUPPLIES_APPLICATION_TYPE for t in parsed.tokens):
        return
    bodies = [t for t in parsed.tokens if t.kind in ("key", "string") and _normal(t.value) == "redirecturis"]
    anchor = _nearest(bodies, facts.registration_lines)
    if anchor is not None:
        yield Hit("AUTH_DCR_NO_APPLICATION_TYPE", anchor, "medium")


def auth_credentials_not_issuer_keyed(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
    """A credential-store write keyed by a bare string or a server/URL name, not an issuer (medium)."""
    if not _mcp_client_code(facts):
        return
    for token in parsed.tokens:
        if token.has("cred_key"):
            yield Hit("AUTH_CREDENTIALS_NOT_ISSUER_KEYED", token, "medium")


RULES = {"OAUTH_DCR": oauth_dcr, "AUTH_ISS_UNVALIDATED": auth_iss_unvalidated,
         "AUTH_DCR_NO_APPLICATION_TYPE": auth_dcr_no_application_type,
         "AUTH_CREDENTIALS_NOT_ISSUER_KEYED": auth_credentials_not_issuer_keyed}
