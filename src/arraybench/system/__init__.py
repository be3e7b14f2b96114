"""The machine's facts: block devices in sysfs (the one `path -> device`), the same on a host
in `sh`, processes in /proc, signals. Below every package that asks them; no arraybench import."""
