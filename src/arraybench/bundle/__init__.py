"""A run's evidence in one file (docs/bundle.md): `make.py` writes a bundle from the store and
the run's folder, `archive.py` reads one back as hostile input (bounded, no member trusted
before it is checked), `verify.py` checks it against its manifest and its signature,
`load.py` recreates the run in another results folder."""
