"""The Sigstore verifier used for attestations: production trust root, offline.

`Verifier.production(offline=True)` uses the trust root `sigstore` ships (copied into its TUF cache under the user's
cache directory) and never contacts the TUF repository, Rekor or Fulcio: bundles carry their own log entries and
inclusion proofs, so verification needs no network. The trust root is as fresh as the installed `sigstore` release.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sigstore.verify import Verifier

_OFFLINE_NOTICE = "TUF repository is loaded in offline mode"


class TrustRootUnavailable(Exception):
    """The bundled trust root could not be loaded (e.g. an unwritable cache directory)."""


def _drop_offline_notice(record: logging.LogRecord) -> bool:
    """sigstore warns on every offline load; offline is this tool's choice, not news for the user."""
    return _OFFLINE_NOTICE not in record.getMessage()


def offline_verifier() -> Verifier:
    """A production verifier that works without network (sigstore is imported here: it is slow to load)."""
    from sigstore.errors import Error as SigstoreError
    from sigstore.verify import Verifier

    tuf_logger = logging.getLogger("sigstore._internal.tuf")
    if _drop_offline_notice not in tuf_logger.filters:
        tuf_logger.addFilter(_drop_offline_notice)
    try:
        return Verifier.production(offline=True)
    except (SigstoreError, OSError, ValueError) as exc:
        raise TrustRootUnavailable(f"the Sigstore trust root could not be loaded: {str(exc)[:200]}") from exc
