"""Numbered schema migrations. Append only: never edit a migration that has shipped."""

from __future__ import annotations

# Each migration is literal text: one built from a live constant (the metric names) would
# change the schema of stores already made when the constant changes.
MIGRATIONS: list[str] = [
    # 1: runs, points with their metrics, 1-second samples
    """
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    plan_name TEXT NOT NULL,
    scenario TEXT NOT NULL,
    labels_json TEXT NOT NULL,
    plan_yaml TEXT NOT NULL,
    folder TEXT NOT NULL,
    scale REAL NOT NULL,
    status TEXT NOT NULL,
    started TEXT NOT NULL,
    finished TEXT,
    total_points INTEGER NOT NULL,
    fio_version TEXT,
    arraybench_version TEXT NOT NULL,
    host TEXT NOT NULL,
    kernel TEXT NOT NULL,
    targets_json TEXT NOT NULL,
    latency_bound_us REAL NOT NULL,
    latency_stat TEXT NOT NULL
);
CREATE TABLE points (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id),
    seq INTEGER NOT NULL,
    key TEXT NOT NULL,
    workload TEXT NOT NULL,
    family TEXT NOT NULL,
    mix TEXT NOT NULL,
    pattern TEXT NOT NULL,
    bs INTEGER NOT NULL,
    read_pct INTEGER NOT NULL,
    region TEXT NOT NULL,
    ioengine TEXT NOT NULL,
    unit TEXT NOT NULL,
    workers INTEGER NOT NULL,
    iodepth INTEGER NOT NULL,
    jobs INTEGER NOT NULL,
    targets TEXT NOT NULL,
    folder TEXT NOT NULL,
    started TEXT NOT NULL,
    finished TEXT NOT NULL,
    runtime_s REAL NOT NULL,
    fio_version TEXT,
    usr_cpu REAL,
    sys_cpu REAL,
    read_ios INTEGER,
    read_bytes INTEGER,
    read_iops REAL,
    read_mbps REAL,
    read_lat_mean_us REAL,
    read_lat_p50_us REAL,
    read_lat_p99_us REAL,
    read_lat_p999_us REAL,
    read_lat_max_us REAL,
    write_ios INTEGER,
    write_bytes INTEGER,
    write_iops REAL,
    write_mbps REAL,
    write_lat_mean_us REAL,
    write_lat_p50_us REAL,
    write_lat_p99_us REAL,
    write_lat_p999_us REAL,
    write_lat_max_us REAL,
    total_ios INTEGER,
    total_bytes INTEGER,
    total_iops REAL,
    total_mbps REAL,
    total_lat_mean_us REAL,
    total_lat_p50_us REAL,
    total_lat_p99_us REAL,
    total_lat_p999_us REAL,
    total_lat_max_us REAL,
    UNIQUE (run_id, key)
);
CREATE TABLE samples (
    point_id INTEGER NOT NULL REFERENCES points(id) ON DELETE CASCADE,
    t INTEGER NOT NULL,
    read_iops REAL, write_iops REAL,
    read_mbps REAL, write_mbps REAL,
    read_lat_us REAL, write_lat_us REAL,
    PRIMARY KEY (point_id, t)
);
CREATE INDEX points_run ON points(run_id, seq);
""",
    # 2: steady state and early stop, kernel's view of the targets, findings, pauses
    """
ALTER TABLE points ADD COLUMN devices INTEGER;
ALTER TABLE points ADD COLUMN steady_attained INTEGER;
ALTER TABLE points ADD COLUMN ended_early INTEGER;
ALTER TABLE points ADD COLUMN pause_s REAL;
ALTER TABLE points ADD COLUMN kernel_iops REAL;
ALTER TABLE points ADD COLUMN kernel_mbps REAL;
ALTER TABLE points ADD COLUMN cpu_busy_pct REAL;
CREATE TABLE host_samples (
    point_id INTEGER NOT NULL REFERENCES points(id) ON DELETE CASCADE,
    t INTEGER NOT NULL,
    device TEXT NOT NULL,
    read_iops REAL, write_iops REAL, read_mbps REAL, write_mbps REAL,
    await_ms REAL, util_pct REAL,
    PRIMARY KEY (point_id, t, device)
);
CREATE TABLE cpu_samples (
    point_id INTEGER NOT NULL REFERENCES points(id) ON DELETE CASCADE,
    t INTEGER NOT NULL,
    user_pct REAL, system_pct REAL, iowait_pct REAL, busy_pct REAL,
    PRIMARY KEY (point_id, t)
);
CREATE TABLE findings (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id),
    point_id INTEGER REFERENCES points(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    data_json TEXT NOT NULL
);
CREATE INDEX findings_run ON findings(run_id, kind);
""",
    # 3: points run on several hosts at once
    """
ALTER TABLE points ADD COLUMN hosts INTEGER;
ALTER TABLE points ADD COLUMN partial INTEGER;
ALTER TABLE points ADD COLUMN failed_hosts TEXT;
ALTER TABLE points ADD COLUMN start_spread_ms REAL;
""",
    # 4: imported points: the scenario and labels a file name gave (import --pattern)
    """
ALTER TABLE points ADD COLUMN scenario TEXT;
ALTER TABLE points ADD COLUMN labels_json TEXT;
""",
    # 5: the injection journal: every event injection written before it is applied, with what
    # undoes it, so `arraybench revert` can undo what a killed controller left (on any host)
    """
CREATE TABLE injections (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    point_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    label TEXT NOT NULL,
    host TEXT NOT NULL,
    reach_json TEXT NOT NULL,
    undo_json TEXT NOT NULL,
    state TEXT NOT NULL,
    created TEXT NOT NULL,
    owner_pid INTEGER NOT NULL,
    reverted TEXT
);
CREATE INDEX injections_state ON injections(state, run_id);
""",
    # 6: a point's identity in columns (point_identity.py): the key's level, SNIA round,
    # repetition and plan scenario, read as fields instead of parsed back from the key. Rows
    # stored before are filled once by store/db.py, the key read back by point_identity.
    """
ALTER TABLE points ADD COLUMN level TEXT;
ALTER TABLE points ADD COLUMN round INTEGER;
ALTER TABLE points ADD COLUMN repetition INTEGER;
ALTER TABLE points ADD COLUMN plan_scenario TEXT;
""",
    # 7: what a report reads of a point's folder, stored when the point is: its merged json+
    # latency bins (ns -> count) and its job files, so a report reads no point's files again
    """
CREATE TABLE latency_bins (
    point_id INTEGER NOT NULL REFERENCES points(id) ON DELETE CASCADE,
    ns INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (point_id, ns)
);
CREATE TABLE job_files (
    point_id INTEGER NOT NULL REFERENCES points(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (point_id, name)
);
""",
    # 8: the tool's version under a tool-neutral name: a run's and a point's version is any
    # engine's or importer's (fio, mdtest, elbencho, vdbench, DiskSpd). A bundle's rows written
    # before still name the old column: store/portable.py `RENAMED` reads them.
    """
ALTER TABLE runs RENAME COLUMN fio_version TO engine_version;
ALTER TABLE points RENAME COLUMN fio_version TO engine_version;
""",
]
