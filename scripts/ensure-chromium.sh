#!/bin/sh
# The browser test of /docs drives Debian's Chromium through playwright-core (Playwright's
# own browser download is not used). Install it when it is missing and we may.
set -e
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Chromium for the browser test (apt-get install chromium)..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "The browser test needs Chromium at /usr/bin/chromium: sudo apt-get install chromium" >&2
  exit 1
fi
