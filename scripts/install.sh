#!/usr/bin/env bash
# Install what arraybench needs on Debian/Ubuntu: fio from the system packages and a
# virtualenv (.venv) holding arraybench. `--dev` adds the test and lint tools.
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[ "${1:-}" = "--dev" ] && extras="[dev]"

if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "arraybench needs Python >= 3.11 (found $(python3 --version 2>&1))" >&2
    exit 1
fi

packages=()
command -v fio >/dev/null 2>&1 || packages+=(fio)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || packages+=(python3-venv)
if [ "${#packages[@]}" -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "installing system packages: ${packages[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}" >/dev/null
fi
# --dev: headless Chromium for the PDF/PNG report tests (they are skipped without it)
if [ -n "$extras" ] && [ ! -x /usr/bin/chromium ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "installing system packages: chromium"
    { $sudo apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null; } ||
        echo "chromium could not be installed: PDF/PNG report tests will be skipped" >&2
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".${extras}"
echo "arraybench installed: $(.venv/bin/arraybench --version), $(fio --version)"
