"""A plan's values judged for where they go, before anything runs (``plan check`` and ``run``).

Each value is given to the one refusing function of its destination: paths and names written
into fio job files to ``fio.values`` (no newline, ``#``, ``;``, ``$``, edge blanks), host
addresses to ``hosts.address`` (parsed by value, wildcards refused in every spelling), SSH
users and hosts to the SSH checks (nothing ssh could read as an option). The job file writers
call the same functions again, so a value that skipped this check still cannot escape.

``resolve_targets`` then gives fio exactly the path the safety check examines: local targets
(and the metadata test's directory) resolved through symlinks.
"""

from __future__ import annotations

import os
from pathlib import Path

from arraybench.engines import registry  # loaded first: the plan's parser knows the engines
from arraybench.engines.fio.choice import FIO_ENV
from arraybench.engines.fio.features import FeatureUse, feature_uses
from arraybench.engines.fio.reduction import unreachable
from arraybench.engines.fio.values import argv_value, fio_path, fio_value
from arraybench.engines.mdtest.argv import mdtest_arg, ssh_config
from arraybench.engines.mdtest.engine import MdtestEngine, on_mdtest
from arraybench.errors import PlanError
from arraybench.hosts.address import check_address, check_ssh_user
from arraybench.plan.expand import Point
from arraybench.plan.model import Plan
from arraybench.run.host_verify import check_verify_hosts
from arraybench.run.kinds.metadata import metadata_directory


def _strings(value: object, where: str) -> list[tuple[str, str]]:
    """Every string in a dumped plan with its location (``workloads[0].name``)."""
    if isinstance(value, str):
        return [(where, value)]
    if isinstance(value, dict):
        items = [(f"{where}.{k}" if where else str(k), v) for k, v in value.items()]
        return [found for key, v in items for found in _strings(v, key)]
    if isinstance(value, list | tuple):
        return [found for i, v in enumerate(value) for found in _strings(v, f"{where}[{i}]")]
    return []


def check_plan_values(plan: Plan, results_dir: Path | None = None) -> None:
    """PlanError / AddressError (exit 2) naming the first value its destination would misread.

    ``results_dir`` (at ``run``) also checks the metadata test's default directory under it."""
    for where, text in _strings(plan.model_dump(mode="json"), ""):
        if "\0" in text:  # no file name, argv or job file line can carry it
            raise PlanError(f"{where} contains a NUL byte", "remove it")
    for i, target in enumerate(plan.targets):
        fio_path(target.path, f"targets[{i}].path")
        if not plan.hosts:  # fio will be given the resolved path (resolve_targets)
            where = f"targets[{i}].path {target.path!r} resolves to"
            fio_path(os.path.realpath(target.path), where)
    fio_value(plan.ioengine, "ioengine")
    for i, workload in enumerate(plan.workloads):
        if workload.ioengine is not None:
            fio_value(workload.ioengine, f"workloads[{i}].ioengine")
    if plan.metadata and (plan.metadata.directory is not None or results_dir is not None):
        directory = metadata_directory(plan, plan.metadata, results_dir or Path("."))
        fio_path(str(directory), "metadata.directory")
    for i, path in enumerate(plan.allow_destroy):
        argv_value(path, f"allow_destroy[{i}]")
    for h, host in enumerate(plan.hosts):
        where = f"hosts[{h}]"
        check_address(host.address, f"{where}.address")
        for i, target in enumerate(host.targets):
            fio_path(target.path, f"{where}.targets[{i}].path")
        if host.ssh is None:
            continue
        if host.ssh.host is not None:
            check_address(host.ssh.host, f"{where}.ssh.host")
        if host.ssh.user is not None:
            check_ssh_user(host.ssh.user, f"{where}.ssh.user")
        if host.ssh.key is not None:
            argv_value(host.ssh.key, f"{where}.ssh.key")
        argv_value(host.ssh.fio, f"{where}.ssh.fio")
        argv_value(host.ssh.python, f"{where}.ssh.python")
        argv_value(host.ssh.journals, f"{where}.ssh.journals")
        if host.ssh.known_hosts is not None:
            known = argv_value(host.ssh.known_hosts, f"{where}.ssh.known_hosts")
            if any(c.isspace() for c in known):  # ssh splits the option's value at blanks
                raise PlanError(f"{where}.ssh.known_hosts: {known!r} contains a blank",
                                "give a path without spaces")  # fmt: skip
    check_verify_hosts(plan)
    check_engine_parts(plan)
    check_data(plan)


def check_data(plan: Plan) -> None:
    """PlanError naming the first writing workload whose `data:` fio cannot write with its
    block size (docs/data.md), before anything runs rather than after the run."""
    for i, workload in enumerate(plan.workloads):
        if workload.read == 100:
            continue
        where = f"workloads[{i}].data" if workload.data is not None else "data"
        if (why := unreachable(workload.data or plan.data, workload.bs)) is not None:
            raise PlanError(f"{where} (workload {workload.name!r}): {why}",
                            "change the ratio, the granule or the block size")  # fmt: skip


def check_engine_parts(plan: Plan) -> None:
    """The parts of the plan the engine declares it can run (`Engine.capabilities`): hosts
    (client/server), interference and metadata (job files of their own) are refused with an
    engine that cannot (docs/engines.md), except a metadata test on mdtest, which names its
    own tool (`metadata.engine`) and is checked here: mdtest and mpirun found, its values what
    mpirun and mdtest read (`engines/mdtest/argv.py`)."""
    can = registry.engine_for(plan.engine).capabilities
    if not can.grid:
        raise PlanError(f"engine: {plan.engine!r} runs only the metadata test, not the grid's "
                        "points", f"leave `engine:` out and write `metadata: {{engine: "
                        f"{plan.engine}}}`")  # fmt: skip
    meta = plan.metadata
    mdtest_meta = meta is not None and on_mdtest(meta.engine, meta.mdtest)
    wanted = [
        ("hosts", plan.hosts, can.many_hosts),
        ("interference", plan.interference, can.kind_jobs),
        ("metadata", plan.metadata and not mdtest_meta, can.kind_jobs),
    ]
    refused = [key for key, asked, able in wanted if asked and not able]
    if refused:
        raise PlanError(f"engine: {plan.engine!r} cannot run `{refused[0]}` (fio only)",
                        "remove `engine:` to run fio, or that part of the plan")  # fmt: skip
    if meta is not None and mdtest_meta:
        mdtest_arg(meta.mdtest, "metadata.mdtest")
        if meta.directory is not None:
            mdtest_arg(meta.directory, "metadata.directory", "@")
        ssh_config(plan.hosts)  # every host value mpirun's ssh launcher is given
        MdtestEngine(meta.mdtest).check()  # mdtest or mpirun missing: one line, exit 2


def resolve_targets(plan: Plan) -> Plan:
    """The plan with its local target paths (and metadata directory) resolved through
    symlinks: fio opens what the safety check examined. Plans with hosts are unchanged
    (their paths are on the hosts)."""
    if plan.hosts:
        return plan
    targets = []
    for i, target in enumerate(plan.targets):
        real = os.path.realpath(target.path)  # a plain link may lead to a name fio misreads
        fio_path(real, f"targets[{i}].path {target.path!r} resolves to")
        targets.append(target.model_copy(update={"path": real}))
    update: dict[str, object] = {"targets": targets}
    if plan.metadata and plan.metadata.directory:
        directory = os.path.realpath(plan.metadata.directory)
        fio_path(directory, "metadata.directory resolves to")
        update["metadata"] = plan.metadata.model_copy(update={"directory": directory})
    return plan.model_copy(update=update)


def check_fio_features(plan: Plan, points: list[Point], version: str) -> list[FeatureUse]:
    """Each feature the plan asks of the fio of `version` (engines/fio/features.py); PlanError
    (exit 2), one line naming the release each needs and the one found, for those the run
    cannot do without (a figure that is only left out is not refused: it is said)."""
    uses = feature_uses(plan, points, version)
    refused = [u.line() for u in uses if not u.present and not u.feature.left_out]
    if refused:
        raise PlanError("; ".join(refused), f"name a newer fio with --fio PATH ({FIO_ENV})")
    return uses
