"""The one gate for values written into a fio job file or onto a fio command line.

fio reads a job file line by line and a value only up to a comment: measured with fio 3.33,

* a newline (or CR) ends the value and starts a new option line: ``exec_prerun=...`` there runs
  a shell command, ``filename=/dev/sda`` there moves the job to another file;
* ``#`` and ``;`` start a comment: ``filename=dir/lnk#x`` opens ``dir/lnk``;
* ``$`` is substituted: ``${VAR}`` by the environment, ``$ncpus``, ``$pagesize`` and
  ``$mb_memory`` by fio (``a$ncpus`` opens ``a2``);
* leading and trailing blanks are cut;
* ``:`` separates several files or directories (written ``\\:`` for a literal colon), and a
  backslash escapes the next character, so a path ending in ``\\`` would swallow the colon.

More: docs/internals.md, `engines/fio/values.py`."""

from __future__ import annotations

import re

from arraybench.errors import PlanError

# Control characters (newline, CR, NUL, tab, escape ...): a job file line cannot carry them,
# and a terminal would interpret some of them when the value is printed back.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_JOB_SPECIAL = {"#": "starts a comment", ";": "starts a comment", "$": "is substituted"}
_HINT = "rename it, or point a symlink with a plain name at it"


def _describe(char: str) -> str:
    names = {"\n": "a newline", "\r": "a carriage return", "\x00": "a NUL byte", "\t": "a tab"}
    return names.get(char, f"control character {ord(char):#04x}")


def _refuse_controls(value: str, where: str) -> None:
    found = _CONTROL.search(value)
    if found:
        raise PlanError(
            f"{where} {value!r} contains {_describe(found.group())}, which fio would read as "
            "the end of the value",
            _HINT,
        )


def fio_value(value: str, where: str) -> str:
    """``value`` unchanged when fio reads exactly it from ``option=value``; else PlanError.

    ``where`` locates the value for the user, e.g. ``"targets[0].path"``."""
    if not value:
        raise PlanError(f"{where} is empty", "give a value")
    _refuse_controls(value, where)
    for char, why in _JOB_SPECIAL.items():
        if char in value:
            raise PlanError(
                f"{where} {value!r} contains {char!r}, which {why} in a fio job file", _HINT
            )
    if value != value.strip():
        raise PlanError(f"{where} {value!r} starts or ends with a blank, which fio cuts off", _HINT)
    return value


def fio_path(path: str, where: str) -> str:
    """A file or directory path as fio's ``filename=`` / ``directory=`` want it: checked by
    fio_value, with a backslash refused (fio's escape) and ``:`` escaped as ``\\:``."""
    fio_value(path, where)
    if "\\" in path:
        raise PlanError(
            f"{where} {path!r} contains a backslash, which fio reads as an escape", _HINT
        )
    return path.replace(":", "\\:")


def fio_comment(text: str, where: str) -> str:
    """Text for a ``;`` comment line: anything but a line break or another control character."""
    _refuse_controls(text, where)
    return text


def argv_value(value: str, where: str) -> str:
    """A value for an argv list (no shell): NUL cannot be passed, control characters are
    refused so the value reads the same when the command is shown back."""
    _refuse_controls(value, where)
    return value
