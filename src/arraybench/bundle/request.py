"""What `arraybench bundle` is asked: make a run's bundle or verify one, its arguments checked
together (one command takes both forms, so argparse cannot tell a wrong mix alone)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arraybench.errors import ArraybenchError

VERIFY = "verify"  # `arraybench bundle verify FILE`: the word in the run's place


@dataclass(frozen=True)
class BundleRequest:
    verify: bool
    file: Path  # the bundle: to write (-o), or to check
    key: Path | None = None  # making: the private key to sign with; verifying: a public key
    signers: Path | None = None  # verifying: ssh-keygen's allowed-signers file


def bundle_request(
    run_id: str, file: str | None, output: str | None, sign: str | None,
    public_key: str | None, allowed_signers: str | None,
) -> BundleRequest:  # fmt: skip
    """The request, or one line (exit 2) for a mix of arguments neither form takes."""
    if run_id != VERIFY:
        if file is not None:
            raise ArraybenchError(f"unexpected argument {file!r}",
                                  "bundle a run with `arraybench bundle RUN -o FILE`")  # fmt: skip
        if not output or public_key or allowed_signers:
            raise ArraybenchError("`arraybench bundle RUN` needs -o FILE (and takes no key to "
                                  "check)", "e.g. arraybench bundle latest -o run.zip")  # fmt: skip
        return BundleRequest(False, Path(output), Path(sign) if sign else None)
    if file is None or output or sign:
        raise ArraybenchError("`arraybench bundle verify` takes the bundle, and no -o or --sign",
                              "e.g. arraybench bundle verify run.zip")  # fmt: skip
    if public_key and allowed_signers:
        raise ArraybenchError("give --public-key or --allowed-signers, not both")
    return BundleRequest(True, Path(file), Path(public_key) if public_key else None,
                         Path(allowed_signers) if allowed_signers else None)  # fmt: skip


def refuse_pattern(pattern: str | None) -> None:
    """`import --pattern` names points from result files' names: a bundle holds its run whole."""
    if pattern:
        raise ArraybenchError("--pattern reads result files' names; a bundle has its own run",
                              "import the bundle without --pattern")  # fmt: skip
