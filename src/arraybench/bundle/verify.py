"""`arraybench bundle verify FILE`: every member against the manifest (changed, added,
removed: each a line naming it), the plan's SHA-256, and the signature when a key is given."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arraybench.bundle import limits, sign
from arraybench.bundle.archive import Bundle, BundleRefused, digest, open_bundle

PLAN = "plan/given.yaml"


@dataclass(frozen=True)
class Verified:
    run_id: str
    members: int
    problems: list[str]  # one line each; none: the bundle is as it was made
    signature: str  # what is known of its signature, for the line the command prints


def member_problems(bundle: Bundle) -> list[str]:
    """Each member that differs from the manifest, by name; members read one at a time."""
    listed, held = bundle.manifest.members, bundle.members
    problems = [f"removed: {name} (the manifest lists it, the bundle has not)"
                for name in sorted(listed.keys() - held.keys())]  # fmt: skip
    problems += [f"added: {name} (the bundle has it, the manifest does not list it)"
                 for name in sorted(held.keys() - listed.keys())]  # fmt: skip
    for name in sorted(listed.keys() & held.keys()):
        want, info = listed[name], held[name]
        try:
            got = digest(bundle.path, bundle.zip, info)
        except BundleRefused as exc:
            problems.append(f"changed: {name} ({exc.message.split(': ', 1)[-1]})")
            continue
        if got != want.sha256 or info.file_size != want.size:
            problems.append(
                f"changed: {name} (sha256 {got[:16]}..., {info.file_size} bytes; "
                f"the manifest says {want.sha256[:16]}..., {want.size} bytes)"
            )
    if why := plan_problem(bundle):
        problems.append(why)
    return problems


def plan_problem(bundle: Bundle) -> str | None:
    """The manifest's plan SHA-256 is its plan member's (a manifest edited to name another
    plan says so); None when it is."""
    plan = bundle.manifest.members.get(PLAN)
    if plan is None or plan.sha256 != bundle.manifest.plan_sha256:
        return f"changed: {PLAN} (not the plan whose SHA-256 the manifest gives)"
    return None


def verify_bundle(path: Path, public_key: Path | None = None,
                  allowed_signers: Path | None = None) -> Verified:  # fmt: skip
    with open_bundle(path) as bundle:
        problems = member_problems(bundle)
        keyed = public_key is not None or allowed_signers is not None
        if bundle.signature is None:
            said = "not signed"
            if keyed:
                problems.append(f"unsigned: no {limits.SIGNATURE}, and a key was given to check")
        elif not keyed:
            said = "signed (not checked: give --public-key or --allowed-signers)"
        elif why := sign.check(bundle.manifest_bytes, bundle.signature, public_key,
                               allowed_signers):  # fmt: skip
            said = "signature refused"
            problems.append(f"signature: {limits.SIGNATURE} is {why}")
        else:
            said = f"signed, signature good ({public_key or allowed_signers})"
        return Verified(bundle.manifest.run_id, len(bundle.manifest.members), problems, said)
