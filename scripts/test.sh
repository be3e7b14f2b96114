#!/usr/bin/env bash
# The whole test suite, as CI runs it: install, lint, type-check, then every test
# (real fio on small files; loop-device tests need root and are skipped otherwise).
# The tests run in two phases: first all but those marked `serial` on three pytest-xdist
# workers (the suite mostly waits on fio and on child processes; four took 313 s where three
# took 352 s, but a quiet fresh-clone run on four lost a namespace host's fio server start,
# and CI is one shot),
# then the `serial` ones alone: they judge rates,
# CPU use or timing that a second worker on a 2-CPU machine would disturb. Arguments go to
# both phases (e.g. a test file); one phase selecting no test is not a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh --dev
.venv/bin/ruff check src tests benchmarks
.venv/bin/ruff format --check src tests benchmarks
.venv/bin/mypy src
# The core fio tests run on the system's fio and on a current one (tests/conftest.py each_fio):
# say which were found (an absent one's tests are skipped, each with the reason)
echo "fio: $(fio --version 2>/dev/null || echo none); current fio: $(../shared/tools/fio-3.42/fio \
    --version 2>/dev/null || echo 'absent at ../shared/tools/fio-3.42/fio: its tests skip')"

phase() {
    local code=0
    .venv/bin/python -m pytest -q --durations=10 "$@" || code=$?
    if [ "$code" -eq 5 ]; then # no test selected in this phase
        empty=$((empty + 1))
        code=0
    fi
    return "$code"
}
# Python may cache the compiled tests and sources (an environment asking it not to write
# them makes every pytest process and every child `arraybench` compile them again: 5 s of
# collection per process). The caches are git-ignored __pycache__ folders.
unset PYTHONDONTWRITEBYTECODE
status=0
empty=0
phase -n 3 --dist loadgroup -m "not serial" "$@" || status=$?
phase -m serial "$@" || status=$?
[ "$empty" -eq 2 ] && status=5 # neither phase selected a test
exit "$status"
