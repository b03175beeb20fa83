"""Time offline attestation verification (I4) on the vendored real attestations.

    .venv/bin/python benchmarks/bench_attestations.py [--repeat 20]

Measures: loading the offline Sigstore verifier; verifying the npm attestations document of @playwright/cli@0.1.1
(publish attestation + SLSA provenance); verifying a PEP 740 provenance object (one attestation). Medians.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from scanner.provenance.npm_attestations import Subject, verify_npm_attestations
from scanner.provenance.npm_keys import load_pinned_keys
from scanner.provenance.pep740 import verify_provenance
from scanner.provenance.sigstore_offline import offline_verifier

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "provenance"


def median_ms(action: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    npm_doc = (FIXTURES / "npm" / "playwright-cli-0.1.1.attestations.json").read_bytes()
    tarball = (FIXTURES / "npm" / "playwright-cli-0.1.1.tgz").read_bytes()
    subject = Subject("@playwright/cli", "0.1.1", hashlib.sha512(tarball).hexdigest())
    keys = load_pinned_keys()
    pypi_doc = (FIXTURES / "pypi" / "gcb_attestation_test-0.0.0.tar.gz.provenance").read_bytes()
    digest = "461317362419124b6012e855423a9078d6de8aed3e74fa78cc74d669b23dc6cf"

    def npm() -> None:
        result = verify_npm_attestations(npm_doc, subject, keys=keys,
                                         repository="https://github.com/microsoft/playwright-cli")
        assert result.check.outcome == "verified", result.check

    def pypi() -> None:
        result = verify_provenance(pypi_doc, "gcb_attestation_test-0.0.0.tar.gz", digest)
        assert result.check.outcome == "verified", result.check

    print(f"offline verifier load: {median_ms(offline_verifier, args.repeat):.1f} ms")
    print(f"npm attestations (publish + SLSA): {median_ms(npm, args.repeat):.1f} ms")
    print(f"PEP 740 provenance (1 attestation): {median_ms(pypi, args.repeat):.1f} ms")


if __name__ == "__main__":
    main()
