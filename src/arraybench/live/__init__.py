"""The live view of a running campaign: its state and live.json, the terminal view, `watch`,
the `--serve` server with its page and Prometheus /metrics (docs/live.md)."""
