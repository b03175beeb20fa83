#!/usr/bin/env bash
# Make sure headless Chromium exists for the browser test of the batch's summary.html (Debian's `chromium` package;
# the test runs it headless with no network and its own profile directory). Idempotent: nothing to do when present.
set -euo pipefail
. "$(dirname "$0")/debian-packages.sh"

# the test takes the first of these on PATH (Debian names it chromium; other hosts bring one of the others)
for browser in chromium chromium-browser google-chrome; do
  if command -v "$browser" >/dev/null 2>&1; then
    exit 0
  fi
done
require_root_apt "chromium is missing; install it (Debian: apt-get install chromium) for the summary.html browser test"
install_for chromium "chromium (the summary.html browser test's headless browser)" chromium
