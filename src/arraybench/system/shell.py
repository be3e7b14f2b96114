"""The machine's facts on a host over SSH: fixed POSIX `sh` scripts and the one command line
that runs them.

A host is asked with `sh_command(script, args)`: `sh -c SCRIPT NAME ARG...`, quoted for the
host's login shell (ssh hands the remote command to it as one string), every plan value a
positional parameter, so the remote shell never parses a plan value as code. Locally nothing
goes through a shell: ssh itself gets an argv (hosts/server.py `ssh_command`).

`DEVICE_SH` is `path -> device` of blockdev.py in `sh`, for the scripts that need a target's
disk on a host (its queue settings, a throttle): one copy, included by each of them.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

# blockof PATH: n=MAJ:MIN of the block device PATH is, or of the device its filesystem lives on
#   (1 when stat fails). stat -c %d gives st_dev whole: split as the kernel's new_decode_dev
#   does, with glibc's 64-bit dev_t high bits.
# diskof PATH: s=/sys folder of that device's whole disk (a partition's parent) and n its
#   number; 1 when stat fails, 2 when no block device has the number (tmpfs, overlay, btrfs).
# diskname NAME: the whole disk of a kernel device name (sdc1 -> sdc; a disk's own name).
DEVICE_SH = r"""blockof() {
  if [ -b "$1" ]; then
    n=$(printf '%d:%d' "0x$(stat -L -c %t "$1")" "0x$(stat -L -c %T "$1")") || return 1
  else d=$(stat -L -c %d "$1") || return 1
    n=$(( ((d >> 8) & 4095) | ((d >> 32) & ~4095) )):$(( (d & 255) | ((d >> 12) & ~255) )); fi
}
diskof() {
  blockof "$1" || return 1
  s=$(readlink -f "/sys/dev/block/$n" 2>/dev/null)
  [ -n "$s" ] && [ -e "$s" ] || return 2
  if [ -e "$s/partition" ]; then s=$(dirname "$s"); n=$(cat "$s/dev"); fi
}
diskname() {
  c=/sys/class/block/$1
  if [ -e "$c/partition" ]; then basename "$(dirname "$(readlink -f "$c")")"; else echo "$1"; fi
}
"""


def sh_command(script: str, args: Sequence[str] = (), name: str = "arraybench") -> str:
    """The remote command line that runs `script` with `sh` ($0 `name`, then `args`)."""
    return shlex.join(["sh", "-c", script, name, *args])
