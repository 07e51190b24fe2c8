"""nbconvert's WebPDF exporter driven by the system Chromium (Debian's /usr/bin/chromium).

nbconvert 7.17 has no option for the browser executable and Playwright reads none from the
environment, so this subclass injects ``executable_path`` (and the fontconfig file that keeps
the AR PL fonts out) into Playwright's ``BrowserType.launch`` for the duration of one export.
Never run ``playwright install``: the system browser is the one we use.

Chromium dates each PDF with the time it printed it; the exporter replaces both dates by
``SOURCE_DATE_EPOCH`` (0 when unset), so the same HTML gives the same bytes.
"""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

from nbconvert.exporters.webpdf import WebPDFExporter
from traitlets import Int, Unicode, default

from analysis.errors import UsageError

FONTS_CONF = Path(__file__).resolve().parent / "fonts.conf"
#: Flags for headless Chromium on CI machines without a display, GPU or network.
CHROMIUM_ARGS = ["--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]
_PATCH_LOCK = threading.Lock()
#: A PDF date in the document information: 14 digits, then the zone ("Z" or "+HH'MM'").
_PDF_DATE = re.compile(rb"/(CreationDate|ModDate) ?\(D:(\d{14})(Z|[+-]\d\d'\d\d')\)")
_UTC = {1: b"Z", 7: b"+00'00'"}
_YEAR_10000 = 253402300800  # the first second whose date no longer has 14 digits


def source_date_epoch() -> int:
    """Seconds since 1970 that date the PDFs: ``$SOURCE_DATE_EPOCH``, 0 when unset."""
    value = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not value:
        return 0
    if not value.isdigit() or int(value) >= _YEAR_10000:
        raise UsageError(f"SOURCE_DATE_EPOCH must be whole seconds since 1970 (before the year "
                         f"10000), not {value!r}")
    return int(value)


def with_fixed_dates(pdf: bytes, epoch: int) -> bytes:
    """`pdf` with its CreationDate and ModDate set to `epoch` (UTC); every replacement has the
    length of what it replaces, so the cross-reference offsets stay right."""
    stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(epoch)).encode()

    def fixed(m: re.Match) -> bytes:
        return m.group(0)[:m.start(2) - m.start()] + stamp + _UTC[len(m.group(3))] + b")"

    return _PDF_DATE.sub(fixed, pdf)


def chromium_path() -> str:
    return os.environ.get("DLPERF_CHROMIUM", "/usr/bin/chromium")


def browser_env(temp_dir: str = "") -> dict[str, str]:
    """Environment for Chromium: ours plus the report fontconfig file, and `temp_dir` as its
    TMPDIR when given (a Chromium killed by Ctrl-C leaves its temporary files behind: in
    the build's private folder they go with it)."""
    env = dict(os.environ)
    env.setdefault("FONTCONFIG_FILE", str(FONTS_CONF))
    if temp_dir:
        env["TMPDIR"] = temp_dir
    return env


class SystemChromiumWebPDFExporter(WebPDFExporter):
    """WebPDF through a Chromium binary given by path (default ``$DLPERF_CHROMIUM`` or
    ``/usr/bin/chromium``)."""

    executable_path = Unicode(help="Chromium binary Playwright launches").tag(config=True)
    temp_dir = Unicode("", help="TMPDIR of the browser ('' for the caller's)").tag(config=True)
    epoch = Int(0, help="the PDF's creation date, seconds since 1970 (UTC)").tag(config=True)

    @default("executable_path")
    def _executable_default(self):
        return chromium_path()

    @default("disable_sandbox")
    def _sandbox_default(self):
        return os.geteuid() == 0  # Chromium refuses its sandbox as root

    @default("browser_args")
    def _args_default(self):
        return list(CHROMIUM_ARGS)

    def run_playwright(self, html):
        from playwright.async_api import BrowserType, Page

        exe, env = self.executable_path, browser_env(self.temp_dir)
        # the parent appends --no-sandbox to browser_args on every call: keep ours clean
        self.browser_args = [a for a in self.browser_args if a != "--no-sandbox"]
        with _PATCH_LOCK:
            original = BrowserType.launch

            async def launch(browser_type, *args, **kwargs):
                kwargs.setdefault("executable_path", exe)
                kwargs.setdefault("env", env)
                return await original(browser_type, *args, **kwargs)

            original_pdf = Page.pdf

            async def pdf_css_size(page, *args, **kwargs):  # the page size of @page (A4)
                kwargs.setdefault("prefer_css_page_size", True)
                return await original_pdf(page, *args, **kwargs)

            BrowserType.launch, Page.pdf = launch, pdf_css_size
            try:
                pdf = super().run_playwright(html)
            finally:
                BrowserType.launch, Page.pdf = original, original_pdf
        return with_fixed_dates(pdf, self.epoch)
