#!/usr/bin/env bash
# The whole test suite, as CI runs it: install, lint, type-check, then every test
# (real fio on small files; loop-device tests need root and are skipped otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh --dev
.venv/bin/ruff check src tests benchmarks
.venv/bin/ruff format --check src tests benchmarks
.venv/bin/mypy src
.venv/bin/python -m pytest -q "$@"
