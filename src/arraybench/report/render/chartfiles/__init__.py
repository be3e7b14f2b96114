"""`report --charts DIR`: every chart of the HTML page as its own SVG and PNG file, under a
stable name the page's save links share (`export.py`)."""
