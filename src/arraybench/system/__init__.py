"""The machine's facts: block devices in sysfs (the one `path -> device`), the same on a host
in `sh`, processes in /proc, signals, shared SSH connections. Below every package that asks
them; nothing from arraybench outside this package."""
