#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests when it is missing; the
# packages downloaded are kept under ~/.cache/apt so that a warm run (or a
# reinstall on the same machine) does not fetch them again.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
cache="${HOME}/.cache/apt"
mkdir -p "$cache/archives/partial" "$cache/lists/partial"
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
opts=(-o "Dir::Cache::archives=$cache/archives" -o "Dir::State::Lists=$cache/lists" -o Acquire::Retries=3 -o APT::Sandbox::User=root)
install() {
  DEBIAN_FRONTEND=noninteractive $sudo apt-get "${opts[@]}" install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
}
# The package lists are fetched once, then reused from the cache (again if they have gone stale).
if [ -z "$(ls -A "$cache/lists" 2>/dev/null | grep -v -e partial -e lock)" ]; then
  $sudo apt-get "${opts[@]}" update -qq
fi
install || { $sudo apt-get "${opts[@]}" update -qq && install; }
command -v chromium >/dev/null
