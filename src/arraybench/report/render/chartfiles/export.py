"""Every chart of a report as a file a customer can lift into a slide: SVG and PNG.

A chart's name is stable and says what it is: its form (the kind of figure: `curve`,
`overlay`, `bars`, `timeseries`, ...) and what it draws (the workload heading above it and
its own title), in safe characters only (`curve-random-8-kib-read-...`). The HTML carries the
same name on each chart (`data-name`) with a small "save SVG / PNG" link under it, so a chart
saved from the page and one written by `arraybench report RUN --charts DIR` have one name.

The names are given after the HTML is rendered, from the page itself: every `<svg
class="chart">` in document order, named by the section it sits in and its title. So no
writer has to thread names through, and a chart added anywhere is exported too.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path

from arraybench.errors import ArraybenchError
from arraybench.outfiles import check_writable, write_file

# section id -> the form of the charts in it (the seed reports' kinds of figure)
FORMS = {
    "workloads": "curve",
    "overlays": "overlay",
    "seedfigures": "figure",
    "distribution": "percentiles",
    "timelines": "timeseries",
    "tables": "table",
    "curve": "ratecurve",
}
MAX_NAME = 90  # characters of a file name before its extension
PNG_SCALE = 2  # device pixels per SVG unit: sharp on a projected slide

_SVG = re.compile(r"<svg\b[^>]*\bclass=\"chart[^\"]*\"[^>]*>.*?</svg>", re.S)
_SECTION = re.compile(r"<(?:section|div)\b[^>]*\bid=\"([^\"]+)\"")
_HEADING = re.compile(r"<h3\b[^>]*>(.*?)</h3>|<summary\b[^>]*>(.*?)</summary>", re.S)
_FORM = re.compile(r"\bdata-form=\"([^\"]+)\"")
_LABEL = re.compile(r"\baria-label=\"([^\"]*)\"")
_TAG = re.compile(r"<[^>]+>")
_SIZE = re.compile(r"\bwidth=\"([\d.]+)\"[^>]*\bheight=\"([\d.]+)\"")


@dataclass(frozen=True)
class Chart:
    name: str  # file name without extension, unique in the report
    svg: str  # the standalone SVG document
    width: float
    height: float


def slug(text: str) -> str:
    """Safe file-name characters: lower-case ASCII letters, digits and single hyphens."""
    text = text.replace("µ", "u").replace("%", " pct ")
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")


def _unescape(text: str) -> str:
    from html import unescape

    return unescape(_TAG.sub("", text)).strip()


@dataclass(frozen=True)
class _Outline:
    """Where the page's sections and headings start, found once (a 10,000-point page holds
    hundreds of charts: each looks its context up by bisection, not by a new scan)."""

    sections: list[tuple[int, str]]
    headings: list[tuple[int, str]]

    @classmethod
    def of(cls, html: str) -> _Outline:
        sections = [(m.start(), m.group(1)) for m in _SECTION.finditer(html)
                    if m.group(1) in FORMS]  # fmt: skip
        headings = [(m.start(), m.group(1) or m.group(2) or "") for m in _HEADING.finditer(html)]
        return cls(sections, headings)

    def context(self, at: int) -> tuple[str, str]:
        """The form of the section around `at` and the last heading before it there."""
        i = bisect_right(self.sections, at, key=lambda s: s[0])
        start, section = self.sections[i - 1] if i else (0, "")
        j = bisect_right(self.headings, at, key=lambda h: h[0])
        head = self.headings[j - 1] if j and self.headings[j - 1][0] >= start else None
        form = FORMS.get(section, slug(section) or "chart")
        return form, _unescape(head[1]) if head else ""


def _name(form: str, heading: str, title: str) -> str:
    # the title often repeats the heading ("Random 8 KiB: ..."): say it once
    lead = slug(heading.split(":")[0]).rstrip("s")
    repeated = not heading or slug(title).startswith(lead)
    words = [form] if repeated else [form, heading]
    # "... against workers per host (iodepth 2)" and the dual-axis boilerplate say no more
    title = title.rsplit(" against ", 1)[0].replace("throughput and latency", "")
    base = slug(" ".join([*words, title]))
    return base[:MAX_NAME].rstrip("-") or form


def _unique(name: str, taken: set[str]) -> str:
    n, candidate = 1, name
    while candidate in taken:
        n += 1
        candidate = f"{name}-{n}"
    taken.add(candidate)
    return candidate


def _standalone(svg: str) -> str:
    """An inline chart as an SVG file: its namespace, a white background, no hover target."""
    svg = re.sub(r"<rect class=\"hover\"[^>]*/>", "", svg)
    head_end = svg.index(">") + 1
    head = svg[:head_end]
    if "xmlns=" not in head:
        head = head.replace("<svg", '<svg xmlns="http://www.w3.org/2000/svg"', 1)
    background = '<rect width="100%" height="100%" fill="#ffffff"/>'
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + head + background + svg[head_end:] + "\n"


def name_charts(html: str) -> tuple[str, list[Chart]]:
    """The page with `data-name` on every chart and a save link under it, and its charts."""
    taken: set[str] = set()
    charts: list[Chart] = []
    out: list[str] = []
    last = 0
    outline = _Outline.of(html)
    for m in _SVG.finditer(html):
        svg = m.group(0)
        head = svg[: svg.index(">")]
        form, heading = outline.context(m.start())
        own = _FORM.search(head)  # a seed figure: its form and a title that says it all
        form, heading = (own.group(1), "") if own else (form, heading)
        label = _LABEL.search(head)
        name = _unique(_name(form, heading, _unescape(label.group(1)) if label else ""), taken)
        size = _SIZE.search(head)
        width, height = (float(size.group(1)), float(size.group(2))) if size else (720.0, 260.0)
        charts.append(Chart(name, _standalone(svg), width, height))
        # after the opening tag's own attributes: `<svg class="chart"` stays the chart's mark
        head_end = svg.index(">")
        named = svg[:head_end] + f' data-name="{name}"' + svg[head_end:]
        link = (
            f'<p class="chart-save" data-name="{name}">{name} &middot; save '
            '<a href="#" data-save="svg">SVG</a> <a href="#" data-save="png">PNG</a></p>'
        )
        out += [html[last : m.start()], named, link]
        last = m.end()
    out.append(html[last:])
    page = "".join(out)
    if charts:  # into the page's one style sheet and one script
        page = page.replace("</style>", f"{CSS}</style>", 1)
        at = page.rfind("</script>")
        page = page[:at] + SCRIPT + page[at:] if at >= 0 else page
    return page, charts


CSS = (
    ".chart-save{margin:2px 0 10px;font-size:11px;color:#6b7280}"
    ".chart-save a{color:#1f5fa8}@media print{.chart-save{display:none}}"
)

# save the chart above as NAME.svg or NAME.png (drawn on a canvas at twice the size), offline
SCRIPT = """
(function () {
  function chartOf(p) { return document.querySelector('svg[data-name="' + p.dataset.name + '"]'); }
  function saveAs(href, file) {
    var a = document.createElement("a"); a.href = href; a.download = file;
    document.body.appendChild(a); a.click(); a.remove();
  }
  document.addEventListener("click", function (ev) {
    var a = ev.target.closest ? ev.target.closest("a[data-save]") : null;
    if (!a) return;
    ev.preventDefault();
    var p = a.closest(".chart-save"), svg = chartOf(p);
    if (!svg) return;
    var copy = svg.cloneNode(true);
    copy.setAttribute("xmlns", svg.namespaceURI);
    var text = new XMLSerializer().serializeToString(copy);
    var blob = new Blob([text], {type: "image/svg+xml"});
    var link = window.URL["createObjectURL"](blob);
    if (a.dataset.save === "svg") { saveAs(link, p.dataset.name + ".svg"); return; }
    var img = new Image();
    img.onload = function () {
      var w = +svg.getAttribute("width"), h = +svg.getAttribute("height");
      var c = document.createElement("canvas"); c.width = 2 * w; c.height = 2 * h;
      var g = c.getContext("2d"); g.fillStyle = "#fff"; g.fillRect(0, 0, c.width, c.height);
      g.drawImage(img, 0, 0, c.width, c.height);
      saveAs(c["toDataURL"]("image/png"), p.dataset.name + ".png");
    };
    img.src = link;
  });
})();
"""


def check_chart_names(html: str, folder: Path, *, png: bool = True) -> list[Chart]:
    """The page's charts; OutputFileError when a link, a FIFO or a folder is at any of their
    names in `folder` (outfiles.py): refused before any chart (or report) is written."""
    _, charts = name_charts(html)
    for chart in charts:
        for ext in ("svg", "png") if png else ("svg",):
            check_writable(folder / f"{chart.name}.{ext}", "a chart")
    return charts


def write_charts(html: str, folder: Path, *, png: bool = True) -> list[Path]:
    """Every chart of the rendered page as NAME.svg and NAME.png in `folder`."""
    charts = check_chart_names(html, folder, png=png)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for chart in charts:
        written.append(write_file(folder / f"{chart.name}.svg", chart.svg, "a chart"))
    if png and charts:
        written += _pngs(charts, folder)
    return written


def _pngs(charts: list[Chart], folder: Path) -> list[Path]:
    """One Chromium for all charts: each SVG file opened and captured at PNG_SCALE."""
    from arraybench.report.render.pdf.printout import TIMEOUT_S, _Chromium

    paths = []
    timeout = TIMEOUT_S + 0.5 * len(charts)
    with _Chromium([], pipe=True, timeout=timeout, what=f"drawing charts in {folder}") as c:
        session = c.open_page("about:blank")  # one tab for all: a tab each cost 0.2 CPU-s
        for chart in charts:
            w, h = int(chart.width), int(chart.height)
            c.send("Emulation.setDeviceMetricsOverride",
                   {"width": w, "height": h, "deviceScaleFactor": PNG_SCALE, "mobile": False},
                   session=session)  # fmt: skip
            c.navigate(session, (folder / f"{chart.name}.svg").resolve().as_uri())
            shot = c.send("Page.captureScreenshot",
                          {"format": "png", "clip": {"x": 0, "y": 0, "width": w, "height": h,
                                                     "scale": 1}},
                          session=session)  # fmt: skip
            paths.append(write_file(folder / f"{chart.name}.png", _decode(shot.get("data", "")),
                                    "a chart"))  # fmt: skip
    return paths


def _decode(data: str) -> bytes:
    import base64

    raw = base64.b64decode(data)
    if not raw.startswith(b"\x89PNG"):
        raise ArraybenchError("chromium returned no PNG for a chart")
    return raw
