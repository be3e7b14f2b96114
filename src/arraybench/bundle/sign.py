"""A bundle's manifest signed and checked with OpenSSH's own signatures (`ssh-keygen -Y`): a
key the user already has, no new dependency. The manifest holds every member's SHA-256, so
signing it signs them all. ssh-keygen runs from an argument list, never a shell."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from arraybench.bundle.limits import NAMESPACE
from arraybench.errors import ArraybenchError

SIGNER = "arraybench-bundle-signer"  # the principal a lone public key is checked as
TIMEOUT_S = 120  # a passphrase typed at ssh-keygen's prompt included


class SigningError(ArraybenchError):
    """ssh-keygen missing, or a key it cannot use: one line, exit 2."""


def _ssh_keygen(args: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["ssh-keygen", *args], input=data, capture_output=True,
                              timeout=TIMEOUT_S, check=False)  # fmt: skip
    except FileNotFoundError:
        raise SigningError("ssh-keygen is not installed", "install OpenSSH's client") from None
    except subprocess.TimeoutExpired:
        raise SigningError(f"ssh-keygen did not answer in {TIMEOUT_S} s") from None


def _said(done: subprocess.CompletedProcess[bytes]) -> str:
    text = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
    return text[-1] if text else f"exit status {done.returncode}"


def sign(key: Path, data: bytes) -> bytes:
    """The SSH signature of `data` with the private key at `key`."""
    if not key.is_file():
        raise SigningError(f"{key}: no such key file", "give --sign a private SSH key file")
    done = _ssh_keygen(["-Y", "sign", "-q", "-f", str(key), "-n", NAMESPACE], data)
    if done.returncode != 0 or not done.stdout.startswith(b"-----BEGIN SSH SIGNATURE-----"):
        raise SigningError(f"{key}: ssh-keygen could not sign with it ({_said(done)})",
                           "give --sign a private SSH key file")  # fmt: skip
    return done.stdout


def check(data: bytes, signature: bytes, public_key: Path | None,
          allowed_signers: Path | None) -> str | None:  # fmt: skip
    """None when `signature` is a good signature of `data` by `public_key`, or by a principal
    of the `allowed_signers` file (ssh-keygen's format); else why not."""
    with tempfile.TemporaryDirectory(prefix="arraybench-sig-") as tmp:
        sig = Path(tmp) / "manifest.sig"
        sig.write_bytes(signature)
        if public_key is not None:
            try:
                key_line = public_key.read_text(errors="replace").strip().splitlines()[0]
            except (OSError, IndexError):
                why = f"{public_key}: cannot read a public key from it"
                raise SigningError(why, "give --public-key an SSH public key file") from None
            allowed = Path(tmp) / "allowed_signers"
            allowed.write_text(f'{SIGNER} namespaces="{NAMESPACE}" {key_line}\n')
            principals = [SIGNER]
        else:
            assert allowed_signers is not None
            allowed = allowed_signers
            found = _ssh_keygen(["-Y", "find-principals", "-s", str(sig), "-f", str(allowed)], b"")
            principals = found.stdout.decode(errors="replace").split()
            if found.returncode != 0 or not principals:
                return f"signed by no key of {allowed_signers}"
        said = ""
        for principal in principals:
            args = ["-Y", "verify", "-f", str(allowed), "-I", principal, "-n", NAMESPACE,
                    "-s", str(sig)]  # fmt: skip
            done = _ssh_keygen(args, data)
            if done.returncode == 0:
                return None
            said = _said(done)
        return f"not signed by {public_key or allowed_signers} ({said})"
