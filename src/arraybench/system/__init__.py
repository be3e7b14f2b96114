"""The machine's facts: block devices in sysfs, processes in /proc. Below every package that
asks them; the rest of issue 26's consolidation (sysfs, signals) comes here later."""
