"""Metadata test (CSCS-style mdtest: create / stat / remove) built on fio's own engines.

One job file per thread count: one stonewalled section per operation, each with
``numjobs=threads`` and ``nrfiles=files_per_thread``, all in one shared directory (mdtest's
default shared-directory mode). Every section uses the same ``filename_format``
(``mdfile.$jobnum.$filenum``: ``$jobnum`` is the clone's index within its section), so clone k
of [stat] and [delete] meets exactly the files clone k of [create] made, and no two threads
touch the same name.

More: docs/internals.md, `engines/fio/metadata.py`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arraybench.engines.fio.features import DIR_OPS as DIR_FEATURE
from arraybench.engines.fio.runner import available_engines, fio_binary, fio_version
from arraybench.engines.fio.values import fio_comment, fio_path
from arraybench.errors import FioMissingError
from arraybench.units import fio_size

# mdtest's order: directory phases, then file phases; within each, create -> stat -> remove.
ALL_OPS = ("dir-create", "dir-stat", "dir-delete", "create", "stat", "delete")
FILE_OPS = ("create", "stat", "delete")
DIR_OPS = ("dir-create", "dir-stat", "dir-delete")
ENGINES = {
    "create": "filecreate",
    "stat": "filestat",
    "delete": "filedelete",
    "dir-create": "dircreate",
    "dir-stat": "dirstat",
    "dir-delete": "dirdelete",
}
FILE_PREFIX = "mdfile"
DIR_PREFIX = "mddir"
# One fake I/O of this size per file: total_ios == files. Never written (the engines do no I/O).
OBJECT_SIZE = 4096
DIR_ENGINES_SINCE = DIR_FEATURE.needs


@dataclass(frozen=True)
class MetadataSpec:
    """One point of the metadata test: ``threads`` workers, each on its own files."""

    directory: str
    threads: int
    files_per_thread: int = 1000
    ops: tuple[str, ...] = FILE_OPS

    def __post_init__(self) -> None:
        if not self.directory:
            raise ValueError("metadata test: directory must not be empty")
        if self.threads < 1:
            raise ValueError(f"metadata test: threads must be >= 1, got {self.threads}")
        if self.files_per_thread < 1:
            raise ValueError(
                f"metadata test: files_per_thread must be >= 1, got {self.files_per_thread}"
            )
        unknown = [op for op in self.ops if op not in ALL_OPS]
        if unknown:
            raise ValueError(
                f"metadata test: unknown operation(s) {', '.join(unknown)}; "
                f"known: {', '.join(ALL_OPS)}"
            )
        if len(set(self.ops)) != len(self.ops) or not self.ops:
            raise ValueError("metadata test: ops must name each operation once, at least one")
        for family in (FILE_OPS, DIR_OPS):
            create = family[0]
            needy = [op for op in family[1:] if op in self.ops]
            if needy and create not in self.ops:
                # stat/delete of objects nobody created: fio would fail (or, for directories,
                # silently mkdir them in setup); refuse up front.
                raise ValueError(
                    f"metadata test: {', '.join(needy)} need(s) {create} in the same run"
                )

    @property
    def ordered_ops(self) -> tuple[str, ...]:
        """The operations in the order they run (mdtest's order, whatever ``ops`` says)."""
        return tuple(op for op in ALL_OPS if op in self.ops)

    @property
    def total_per_op(self) -> int:
        return self.threads * self.files_per_thread


def _escape(path: str) -> str:
    # refused when fio would read another directory; ':' (fio's list separator) escaped
    return fio_path(path, "metadata.directory")


def _section(op: str, spec: MetadataSpec, first: bool) -> list[str]:
    lines = [f"[{op}]"]
    if not first:
        lines.append("stonewall")  # starts only when every job of the previous phase ended
    prefix = DIR_PREFIX if op in DIR_OPS else FILE_PREFIX
    if op == "dir-create":  # names of its own: dir-stat's setup has made the others
        prefix = f"{DIR_PREFIX}.new"
    lines += [
        f"ioengine={ENGINES[op]}",
        f"numjobs={spec.threads}",
        f"nrfiles={spec.files_per_thread}",
        f"filename_format={prefix}.$jobnum.$filenum",
    ]
    if op in ("stat", "delete"):
        # no layout (it would unlink, re-create and fill the files); a missing file is an error
        lines += ["create_on_open=1", "allow_file_create=0"]
    if op == "dir-create":
        # mkdir timed when the job opens each name, not untimed in setup; its directories
        # are removed (untimed) when it ends: dir-stat and dir-delete time their own
        lines += ["create_on_open=1", "unlink=1"]
    return [*lines, ""]


def render_metadata_jobfile(spec: MetadataSpec) -> str:
    """fio job text: one stonewalled section per operation, in run order."""
    ops = spec.ordered_ops
    directory = spec.directory
    lines = [
        f"; arraybench metadata test: {spec.threads} thread(s) x {spec.files_per_thread}"
        f" files/directories each, shared directory {fio_comment(directory, 'metadata.directory')}",
        f"; phases (each starts when the previous ended): {' -> '.join(ops)}",
        "; re-run by hand (the directory must exist and hold no mdfile.*/mddir.* entries):",
        "; fio metadata.fio --output-format=json+ --output=fio.json",
        "[global]",
        f"directory={_escape(spec.directory)}",
        # one fake I/O per file: total_ios counts operations
        f"filesize={fio_size(OBJECT_SIZE)}",
        f"bs={fio_size(OBJECT_SIZE)}",
        "rw=read",  # the engines record their latency in rw's direction
        "openfiles=1",  # one file open at a time: each open is one timed operation
        # finish a file, then take the next; roundrobin's pick costs O(nrfiles) per file
        "file_service_type=sequential",
        "unlink=0",  # the delete phase removes the files, timed; fio must not do it untimed
        "",
    ]
    for index, op in enumerate(ops):
        lines += _section(op, spec, first=index == 0)
    return "\n".join(lines)


def supported_ops(binary: str | None = None) -> tuple[set[str], list[str]]:
    """Operations this fio (default: the chosen one, `runner.fio_binary`) can time (from
    ``fio --enghelp``), and a note per missing one."""
    binary = binary or fio_binary()
    try:
        engines = available_engines(binary)
        version = fio_version(binary)
    except OSError as exc:
        raise FioMissingError(
            f"cannot run {binary}: {exc.strerror or exc}",
            "install fio (apt-get install fio) or give its path",
        ) from exc
    supported = {op for op, engine in ENGINES.items() if engine in engines}
    notes = []
    for op in ALL_OPS:
        if op in supported:
            continue
        engine = ENGINES[op]
        if op in DIR_OPS:
            notes.append(
                f"{op}: {version} has no '{engine}' engine (fio's directory engines first "
                f"shipped in fio {DIR_FEATURE.since[0]}.{DIR_FEATURE.since[1]}: these figures "
                f"need {DIR_FEATURE.needs}); no engine of this fio times a directory "
                "operation, so directory phases are left out rather than approximated"
            )
        else:
            notes.append(f"{op}: {version} has no '{engine}' engine; this phase cannot run")
    return supported, notes


def leftovers(spec: MetadataSpec) -> list[Path]:
    """Entries of the test's names in ``spec.directory`` (none before a run, none after)."""
    folder = Path(spec.directory)
    if not folder.is_dir():
        return []
    prefixes = (f"{FILE_PREFIX}.", f"{DIR_PREFIX}.")
    return sorted(p for p in folder.iterdir() if p.name.startswith(prefixes))
