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
# --dev: what the tests use beyond fio, each skipped without it: headless Chromium (PDF/PNG
# reports, interactive charts), pdftotext (the PDF's text), sshd (hosts started over SSH),
# mpirun (mdtest)
if [ -n "$extras" ]; then
    dev_packages=()
    [ -x /usr/bin/chromium ] || dev_packages+=(chromium)
    command -v pdftotext >/dev/null 2>&1 || dev_packages+=(poppler-utils)
    [ -x /usr/sbin/sshd ] || dev_packages+=(openssh-server)
    command -v ssh >/dev/null 2>&1 || dev_packages+=(openssh-client)
    command -v prometheus >/dev/null 2>&1 || dev_packages+=(prometheus)  # the live tests' scraper
    [ -x /usr/bin/prometheus-node-exporter ] || dev_packages+=(prometheus-node-exporter)
    # Open MPI: mdtest (../shared/tools/ior-4.0.0, the metadata engine's tests) runs under mpirun
    command -v mpirun >/dev/null 2>&1 || dev_packages+=(openmpi-bin)
    if [ "${#dev_packages[@]}" -gt 0 ]; then
        sudo=""
        [ "$(id -u)" -ne 0 ] && sudo="sudo"
        echo "installing system packages: ${dev_packages[*]}"
        { $sudo apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${dev_packages[@]}" \
                >/dev/null; } ||
            echo "could not install ${dev_packages[*]}: the tests that need them are skipped" >&2
    fi
fi

# uv (from PyPI) makes the venv, pip included, in 0.4 s where venv's own pip bootstrap takes
# 5 s, and installs the packages in 4 s where pip takes 12-16 s: the first step of every
# fresh clone's test run. pip and venv as before where uv cannot be had.
uv_dir="$(mktemp -d)"
trap 'rm -rf "$uv_dir"' EXIT
uv=""
if python3 -m pip install -q --disable-pip-version-check --target "$uv_dir" uv >/dev/null 2>&1 &&
    "$uv_dir/bin/uv" --version >/dev/null 2>&1; then
    uv="$uv_dir/bin/uv"
fi
if [ ! -x .venv/bin/python ]; then
    if [ -n "$uv" ]; then
        "$uv" venv -q --seed --python "$(command -v python3)" .venv
    else
        python3 -m venv .venv
    fi
fi
if [ -n "$uv" ]; then
    "$uv" pip install -q --python .venv/bin/python --compile-bytecode -e ".${extras}"
else
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e ".${extras}"
fi
echo "arraybench installed: $(.venv/bin/arraybench --version), $(fio --version)"
