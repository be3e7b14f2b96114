"""The charts, drawn as inline SVG in plain Python and shared by the report's formats and
the live view (live/charts.py): the curve over load levels (`curve.py`), series against time
or data written (`timechart.py`, from `timedata.py`, `timeaxes.py`, `timemarks.py`), the seed
figures (`figures.py`), what every chart draws with (`parts.py`) and their offline hover and
zoom (`interact.py`). Nothing here imports report/render/: a view of charts needs no format."""
