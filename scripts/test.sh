#!/usr/bin/env bash
# The whole test suite, as CI runs it: install, lint, type-check, then every test
# (real fio on small files; loop-device tests need root and are skipped otherwise).
# The tests run in three phases (each test's marker says which; pyproject.toml lists them):
# 1. all but `paced` and `serial` on six pytest-xdist workers: both CPUs 92-100 % busy (since
#    shared SSH connections, five left them idle at times: 265 s, six 247 s);
# 2. `paced`, four at a time: they judge rates or seconds but use little CPU (0.1-0.6 of one
#    CPU each, measured), so side by side they keep the machine they need, where the parallel
#    phase (both CPUs busy) would not (five at a time, 70-94 % busy, failed 3 in 2 runs);
# 3. `serial`, alone: they judge CPU use, noise between runs or the machine's block devices.
# Arguments go to every phase (e.g. a test file); a phase selecting no test is not a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh --dev
# Python may cache the compiled tests and sources (an environment asking it not to write
# them makes every pytest process and every child `arraybench` compile them again: 5 s of
# collection per process). The caches are git-ignored __pycache__ folders.
unset PYTHONDONTWRITEBYTECODE
# One collection compiles them beside the lint (mypy uses one CPU): the workers of a
# fresh clone each compiled all 300 test files and the sources, 6.5 CPU-s apiece
.venv/bin/python -m pytest -q --collect-only -p no:cacheprovider >/dev/null 2>&1 &
compiling=$!
trap 'kill "$compiling" 2>/dev/null || true' EXIT # a lint failure ends the script here
.venv/bin/ruff check src tests benchmarks
.venv/bin/ruff format --check src tests benchmarks
.venv/bin/mypy src
wait "$compiling" || true # a test that cannot be collected is said by the phases below
trap - EXIT
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
status=0
empty=0
# Without arguments the last two phases read only the files that say their mark (each pytest
# process collecting all 300 test files costs 4 s of CPU); tests/conftest.py fails a test whose
# mark its file does not say, so none can be left out of every phase.
marked() {
    if [ "$#" -gt 1 ]; then printf '%s\n' "${@:2}"; else git grep -l "pytest.mark.$1\b" -- 'tests/*.py'; fi
}
mapfile -t paced < <(marked paced "$@")
mapfile -t alone < <(marked serial "$@")
phase -n 6 --dist loadgroup -m "not paced and not serial" "$@" || status=$?
phase -n 4 --dist loadgroup -m paced "${paced[@]}" || status=$?
phase -m serial "${alone[@]}" || status=$?
[ "$empty" -eq 3 ] && status=5 # no phase selected a test
exit "$status"
