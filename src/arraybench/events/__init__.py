"""Events during a point: injectors (one module per event kind in events/event_kinds/), the timeline
that applies and reverts them while fio runs, and path snapshots (multipath, SCSI states) to
record what the host saw."""
