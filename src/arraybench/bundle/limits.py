"""The bounds a bundle is read within (docs/bundle.md states them): a bundle past any of them
is refused whole, in one line, before anything is written."""

from __future__ import annotations

FORMAT = "arraybench-bundle"
VERSION = 1
NAMESPACE = "arraybench-bundle"  # ssh-keygen -Y's namespace: a signature made for nothing else
MANIFEST = "manifest.json"
SIGNATURE = "manifest.json.sig"  # over the manifest's bytes; outside the manifest itself
ROWS = "store/rows.jsonl"
RUN_DIR = "run/"  # the run's folder, as it was under runs/RUN/

MAX_MEMBERS = 100_000  # files in one bundle
MAX_MEMBER_BYTES = 1 << 30  # 1 GiB: one member, uncompressed
MAX_TOTAL_BYTES = 8 << 30  # 8 GiB: every member together, uncompressed
MAX_MANIFEST_BYTES = 64 << 20  # 64 MiB: the manifest (about 150 bytes a member)
MAX_SIGNATURE_BYTES = 64 << 10
MAX_NAME_BYTES = 1024  # a member's name (a path of at most 255 bytes a part)
# deflate cannot shrink data more than about 1032 to 1: a member saying it does is a lie
MAX_RATIO = 1100
