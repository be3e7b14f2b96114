"""The local target safety rule, applied to targets on a remote host over SSH.

The host is inspected with a POSIX shell script (sysfs, /proc and blkid, as the local check
does); its facts come back one per line and are judged here, on the controller:

* a mounted device or an active swap device is refused, even when allow_destroy lists it;
* a device with partitions, holders (LVM, MD RAID, dm) or a signature (filesystem, RAID,
  partition table) is refused unless allow_destroy lists it;
* a device that looks unused is written, with a warning, like a local one.

Without SSH nothing can be looked at (fio's own protocol cannot inspect a file without
risking it), so a remote path under /dev/ is written only when allow_destroy lists it.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

# One line per fact: "<word> <target> [detail]". Targets are passed as positional
# parameters, so no path is ever spliced into the script's text.
TARGET_SCRIPT = r"""
for t in "$@"; do
  if [ -b "$t" ]; then k=block; elif [ -f "$t" ]; then k=file;
  elif [ -e "$t" ]; then k=other; else echo "missing $t"; continue; fi
  [ -r "$t" ] || echo "unreadable $t"
  [ "$k" = other ] && echo "other $t"
  [ "$k" = file ] && echo "file $t"
  [ "$k" = block ] || continue
  echo "block $t"
  r=$(readlink -f "$t"); n=$(basename "$r"); s=/sys/class/block/$n
  mm=$(cat "$s/dev" 2>/dev/null)
  [ -n "$mm" ] && awk -v d="$mm" -v t="$t" '$3 == d {print "mounted " t " " $5; exit}' \
    /proc/self/mountinfo
  awk -v r="$r" -v t="$t" '$1 == r {print "swap " t}' /proc/swaps
  h=$(ls "$s/holders" 2>/dev/null | tr '\n' ' ')
  [ -n "$h" ] && echo "holders $t $h"
  for p in "$s"/"$n"*; do
    [ -e "$p/partition" ] && { echo "partitions $t"; break; }
  done
  sig=$(blkid -p -o value -s TYPE "$r" 2>/dev/null)
  [ -n "$sig" ] && echo "signature $t $sig"
done
true
"""

ALWAYS_REFUSED = {"mounted", "swap"}
REFUSED_UNLESS_ALLOWED = {"holders", "partitions", "signature"}


def target_command(targets: Sequence[str]) -> str:
    """The remote command line: the script with the targets as its arguments."""
    quoted = " ".join(shlex.quote(t) for t in targets)
    return f"sh -c {shlex.quote(TARGET_SCRIPT)} arraybench-check {quoted}"


@dataclass
class RemoteTarget:
    path: str
    kind: str = "unknown"  # "block", "file", "other", "missing"
    facts: dict[str, str] = field(default_factory=dict)  # word -> detail


def parse_facts(output: str) -> dict[str, RemoteTarget]:
    found: dict[str, RemoteTarget] = {}
    for line in output.splitlines():
        word, _, rest = line.partition(" ")
        known = sorted((t for t in found if rest == t or rest.startswith(t + " ")), key=len)
        path = known[-1] if known else rest.split(" ", 1)[0]
        target = found.setdefault(path, RemoteTarget(path))
        detail = rest[len(path) :].strip()
        if word in ("block", "file", "missing", "other"):
            target.kind = word
        target.facts[word] = detail
    return found


_WORDS = {
    "missing": "does not exist on the host",
    "unreadable": "is not readable by the SSH user",
    "other": "is neither a regular file nor a block device",
    "mounted": "is mounted at {}: unmount it first; allow_destroy does not cover a mounted device",
    "swap": "is an active swap device: swapoff first",
    "holders": "is held by {} (LVM, RAID or device-mapper)",
    "partitions": "has partitions",
    "signature": "holds a {} signature",
}


def judge(
    host: str, facts: dict[str, RemoteTarget], *, writes: bool, allow_destroy: Iterable[str]
) -> list[str]:
    """One line per problem; refusals name the target and what to do."""
    allowed = set(allow_destroy)
    problems = []
    for target in facts.values():
        for word, detail in target.facts.items():
            if word not in _WORDS:
                continue
            what = f"{host}: target {target.path} " + _WORDS[word].format(detail)
            if word in REFUSED_UNLESS_ALLOWED:
                if not writes or target.path in allowed:
                    continue
                what += "; refused: writing destroys it (list it in allow_destroy to consent)"
            problems.append(what)
    return problems


def unchecked_devices(
    host: str, targets: Sequence[str], *, writes: bool, allow_destroy: Iterable[str]
) -> list[str]:
    """Without SSH: device paths the plan has not consented to write."""
    allowed = set(allow_destroy)
    return [
        f"{host}: target {t} cannot be inspected without SSH; refused: list it in "
        "allow_destroy to write it"
        for t in targets
        if writes and t.startswith("/dev/") and t not in allowed
    ]
