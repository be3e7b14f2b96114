"""Events during a point: injectors (throttle, netem, signal, SCSI offline, commands, prompts),
the timeline that applies and reverts them while fio runs, and path snapshots (multipath,
SCSI states) to record what the host saw."""
