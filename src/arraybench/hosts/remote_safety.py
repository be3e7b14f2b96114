"""The local target safety rule, applied to targets on a remote host over SSH.

The host is inspected with a POSIX shell script (sysfs, /proc and blkid, as the local check
does); its facts come back one per line and are judged here, on the controller:

* a mounted device or an active swap device is refused, even when allow_destroy lists it;
* a device with partitions, holders (LVM, MD RAID, dm) or a signature (filesystem, RAID,
  partition table) is refused unless allow_destroy lists it;
* a device that looks unused is written, with a warning, like a local one.

More: docs/internals.md, `hosts/remote_safety.py`."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from arraybench.system.shell import sh_command

END_MARK = "end-of-arraybench-check"

# One line per fact: "<word> <target> [detail]". Targets are passed as positional
# parameters, so no path is ever spliced into the script's text.
TARGET_SCRIPT = r"""
first() { printf '%s' "$1" | head -n 1 | cut -c 1-120; }
for t in "$@"; do
  if [ -b "$t" ]; then k=block; elif [ -f "$t" ]; then k=file;
  elif [ -e "$t" ]; then k=other; else echo "missing $t"; continue; fi
  [ -r "$t" ] || echo "unreadable $t"
  [ "$k" = other ] && echo "other $t"
  [ "$k" = file ] && echo "file $t"
  case $k$t in file/*) r=$(readlink -f "$t" 2>/dev/null) &&
    [ -n "$r" ] && echo "resolved $t $r";; esac
  [ "$k" = block ] || continue
  echo "block $t"
  for tool in readlink basename awk blkid; do
    command -v "$tool" >/dev/null 2>&1 ||
      { echo "uncheckable $t $tool is not installed"; continue 2; }
  done
  r=$(readlink -f "$t")
  [ -n "$r" ] || { echo "uncheckable $t readlink -f gave no path"; continue; }
  echo "resolved $t $r"
  n=$(basename "$r"); s=/sys/class/block/$n
  mm=$(cat "$s/dev" 2>/dev/null)
  [ -n "$mm" ] || { echo "uncheckable $t $s/dev is missing"; continue; }
  awk -v d="$mm" -v t="$t" '$3 == d {print "mounted " t " " $5; exit}' /proc/self/mountinfo
  awk -v r="$r" -v t="$t" '$1 == r {print "swap " t}' /proc/swaps
  h=$(ls "$s/holders" 2>/dev/null | tr '\n' ' ')
  [ -n "$h" ] && echo "holders $t $h"
  for p in "$s"/"$n"*; do
    [ -e "$p/partition" ] && { echo "partitions $t"; break; }
  done
  out=$(blkid -p -o export "$r" 2>&1); rc=$?
  case $rc in
    0) ty=$(printf '%s\n' "$out" | sed -n 's/^TYPE=//p' | head -n 1)
       pt=$(printf '%s\n' "$out" | sed -n 's/^PTTYPE=//p' | head -n 1)
       [ -n "$ty$pt" ] ||
         echo "uncheckable $t blkid found something but said no TYPE: $(first "$out")"
       [ -n "$ty" ] && echo "signature $t $ty"
       [ -n "$pt" ] && echo "ptable $t $pt";;
    2) [ -z "$out" ] || echo "uncheckable $t blkid exited with 2: $(first "$out")";;
    8) echo "signature $t several conflicting signatures";;
    *) echo "uncheckable $t blkid exited with $rc: $(first "$out")";;
  esac
done
echo "END"
""".replace("END", END_MARK)

ALWAYS_REFUSED = {"mounted", "swap", "other"}  # when written; "other": a directory, a tty...
REFUSED_UNLESS_ALLOWED = {"holders", "partitions", "signature", "ptable", "uncheckable"}
_KINDS = ("block", "file", "missing", "other")
_WORDS = {
    "missing": "does not exist on the host",
    "unreadable": "is not readable by the SSH user",
    "other": "is neither a regular file nor a block device",
    "mounted": "is mounted at {}: unmount it first; allow_destroy does not cover a mounted device",
    "swap": "is an active swap device: swapoff first",
    "holders": "is held by {} (LVM, RAID or device-mapper)",
    "partitions": "has partitions",
    "signature": "holds a {} signature",
    "ptable": "holds a {} partition table",
    "uncheckable": "could not be checked ({})",
}
_SILENT = {"block", "file", "resolved"}  # facts that are no problem in themselves


def target_command(targets: Sequence[str]) -> str:
    """The remote command line: the script with the targets as its arguments."""
    return sh_command(TARGET_SCRIPT, targets, "arraybench-check")


def normal_path(path: str) -> str:
    """A remote path's one spelling: `//dev/sdb`, `/./dev/sdb`, `/srv/../dev/sdb` -> /dev/sdb.
    (Lexical only: a link on the host cannot be followed from here.)"""
    normal = posixpath.normpath(path)
    return "/" + normal.lstrip("/") if normal.startswith("/") else normal


@dataclass
class RemoteTarget:
    path: str
    kind: str = "unknown"  # "block", "file", "other", "missing"
    facts: dict[str, str] = field(default_factory=dict)  # word -> detail


def parse_facts(output: str, targets: Sequence[str] = ()) -> dict[str, RemoteTarget]:
    """The script's facts per target. Output without the end mark or with a word the script
    does not write makes every target (of `targets`) "uncheckable": the check failed."""
    found: dict[str, RemoteTarget] = {t: RemoteTarget(t) for t in targets}
    lines = output.splitlines()
    broken = "its output was cut off" if END_MARK not in lines else ""
    for line in lines:
        if line == END_MARK:
            continue
        word, _, rest = line.partition(" ")
        if word not in _WORDS and word not in _SILENT:
            broken = broken or f"unexpected output {line[:80]!r}"
            continue
        known = sorted((t for t in found if rest == t or rest.startswith(t + " ")), key=len)
        path = known[-1] if known else rest.split(" ", 1)[0]
        target = found.setdefault(path, RemoteTarget(path))
        detail = rest[len(path) :].strip()
        if word in _KINDS:
            target.kind = word
        target.facts[word] = detail
    for target in found.values():
        if broken:
            target.facts["uncheckable"] = f"the check script failed: {broken}"
        elif target.kind == "unknown":
            target.facts["uncheckable"] = "the check script said nothing about it"
    return found


def resolved_paths(facts: dict[str, RemoteTarget]) -> dict[str, str]:
    """Absolute target path -> the path it resolves to on the host (links followed), for the
    host's job files: fio there opens what was checked, not a link that may be swapped."""
    return {
        t.path: t.facts["resolved"]
        for t in facts.values()
        if t.path.startswith("/") and t.facts.get("resolved", "").startswith("/")
    }


def _allowed(target: RemoteTarget, allow_destroy: Iterable[str]) -> bool:
    allowed = {normal_path(p) for p in allow_destroy}
    resolved = target.facts.get("resolved")
    return normal_path(target.path) in allowed or (resolved is not None and resolved in allowed)


def judge(
    host: str,
    facts: dict[str, RemoteTarget],
    *,
    writers: Mapping[str, str] | None,
    allow_destroy: Iterable[str],
) -> list[str]:
    """One line per problem; refusals name the target, the phase writing it and what to do.
    `writers`: target path -> the phase that writes it (None: every target is written)."""
    allow_destroy = list(allow_destroy)
    problems = []
    for target in facts.values():
        phase = "the run" if writers is None else writers.get(target.path)
        for word, detail in target.facts.items():
            if word not in _WORDS:
                continue
            what = f"{host}: target {target.path} " + _WORDS[word].format(detail)
            if word in REFUSED_UNLESS_ALLOWED:
                if not phase or _allowed(target, allow_destroy):
                    continue
                what += f"; refused: {phase} writes it (list it in allow_destroy to consent)"
            elif word in ALWAYS_REFUSED and phase:
                what += f"; refused: {phase} writes it"
            problems.append(what)
    return problems


def unchecked_targets(
    host: str,
    targets: Sequence[str],
    *,
    writers: Mapping[str, str] | None,
    allow_destroy: Iterable[str],
) -> list[str]:
    """Without SSH: the written targets the plan has not consented to (any of them may be a
    device: nothing on the host can be examined)."""
    allowed = {normal_path(p) for p in allow_destroy}
    lines = []
    for target in targets:
        phase = "the run" if writers is None else writers.get(target)
        if phase and normal_path(target) not in allowed:
            lines.append(
                f"{host}: target {target} cannot be examined without SSH (it may be a device "
                f"or a link to one) and {phase} writes it; refused: list "
                f"{normal_path(target)} in allow_destroy to consent"
            )
    return lines
