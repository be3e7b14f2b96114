"""The report model's renderers, one folder per output format: `html/`, `markdown/`, `csv/`,
`xlsx/`, `pdf/` (PDF and PNG printed from the HTML page) and `chartfiles/` (`--charts DIR`).
Each format folder's `write` is its writer in the registry, `formats.py`; `export.py` looks
a format up there. The charts they draw are report/charts/'s, the terminal's text
console_text.py's."""
