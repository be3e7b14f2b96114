"""The plan's machines: its targets, its hosts (reached over SSH) and the fabric between them."""

from __future__ import annotations

from pydantic import (
    Field,
    field_validator,
)

from arraybench.plan.links import parse_link
from arraybench.plan.types import (
    Mtu,
    PathText,
    Port,
    Size,
    Strict,
)


class Target(Strict):
    """A file or a block device. Files are created at `size` when missing."""

    path: PathText = Field(
        description=("The file or block device fio opens (a file is created when missing).")
    )
    # for files: the size to create/use; devices use their own size
    size: Size | None = Field(
        None,
        description=("For files: the size to create and use. Block devices use their own size."),
    )


class Ssh(Strict):
    """Start and stop `fio --server` on the host over SSH (key login only). The ssh commands
    of one arraybench command share one connection per host, closed when it ends."""

    user: str | None = Field(None, description="SSH login user (default: the current user).")
    # SSH address when it differs from the fio address
    host: str | None = Field(None, description="SSH address when it differs from the fio address.")
    port: Port = Field(22, description="SSH port.")
    # identity file
    key: str | None = Field(
        None, description="SSH identity file (key login only, never a password)."
    )
    fio: str = Field("fio", description="The fio binary on the host.")
    # `verify` on a many-host point runs arraybench's integrity writer and read-back on the
    # host over SSH: that host needs arraybench under this Python
    python: str = Field(
        "python3",
        description=(
            "The host's Python that has arraybench installed: `verify` runs its integrity "
            "writer and read-back there (`PYTHON -m arraybench.integrity...`)."
        ),
    )
    journals: str = Field(
        "arraybench-integrity",
        min_length=1,
        description=(
            "Folder on the host for `verify`'s journals of acknowledged writes (relative: in "
            "the SSH user's home); keep it off the targets' devices."
        ),
    )
    known_hosts: str | None = Field(
        None,
        description=(
            "A known_hosts file that holds the host's key (ssh -o UserKnownHostsFile, with "
            "StrictHostKeyChecking=yes); absent: ssh's own known_hosts."
        ),
    )


class Host(Strict):
    """A load host: fio's server on `address:port`, started over SSH or already running."""

    name: str = Field(
        min_length=1,
        pattern="^[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}$",
        description=("The host's name in reports and in host_sets (letters, digits, _ . -)."),
    )
    address: str = Field(
        min_length=1,
        description=(
            "The address fio's server listens on (one address: the server has no authentication)."
        ),
    )
    port: Port = Field(8765, description="fio's server port.")
    # None: "fio server already running"
    ssh: Ssh | None = Field(
        None,
        description=(
            "Start and stop `fio --server` over SSH; absent: the server is already running."
        ),
    )
    # this host's own targets (paths on the host); empty: the plan's targets, same paths on
    # every host
    targets: list[Target] = Field(
        default_factory=list,
        description=(
            "This host's own targets (paths on the host); empty: the "
            "plan's targets, same paths on every host."
        ),
    )

    @field_validator("address")
    @classmethod
    def _one_address(cls, address: str) -> str:
        if address in ("0.0.0.0", "::", "*"):
            raise ValueError(
                "fio's server has no authentication: bind it to one address, not all interfaces"
            )
        return address


class Fabric(Strict):
    """The links between one host and the storage: a ceiling for the charts."""

    # e.g. "4 x FC 16G", "2 x 25GbE iSCSI"
    links: list[str] = Field(
        min_length=1,
        description=(
            'The links between one host and the storage, e.g. "4 x FC 16G", "2 x 25GbE iSCSI".'
        ),
    )
    mtu: Mtu = Field(1500, description="MTU of the links, in bytes.")

    @field_validator("links")
    @classmethod
    def _known_links(cls, links: list[str]) -> list[str]:
        for text in links:
            parse_link(text)  # ValueError says which forms are accepted
        return links
