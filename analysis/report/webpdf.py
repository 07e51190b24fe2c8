"""nbconvert's WebPDF exporter driven by the system Chromium (Debian's /usr/bin/chromium).

nbconvert 7.17 has no option for the browser executable and Playwright reads none from the
environment, so this subclass prints with Playwright itself: the system browser, the
fontconfig file that keeps the AR PL fonts out, one browser for every page of a build.
Never run ``playwright install``: the system browser is the one we use.

Chromium dates each PDF with the time it printed it; the exporter replaces both dates by
``SOURCE_DATE_EPOCH`` (0 when unset), and numbers the tagged elements' IDs in their order
(:func:`with_fixed_node_ids`), so the same HTML gives the same bytes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from nbconvert.exporters.webpdf import WebPDFExporter
from traitlets import Float, Int, Unicode, default

from analysis.errors import UsageError

FONTS_CONF = Path(__file__).resolve().parent / "fonts.conf"
#: Flags for headless Chromium on CI machines without a display, GPU or network.
CHROMIUM_ARGS = ["--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]
#: A PDF date in the document information: 14 digits, then the zone ("Z" or "+HH'MM'").
#: Script run on a page before it is printed: a link relative to the HTML file (the logs
#: and files beside the report) would become a ``file://`` link into the build's temporary
#: folder in the PDF, so it stays text; web, mail and in-document links stay links.
UNLINK_RELATIVE = """() => {
  for (const a of document.querySelectorAll("a[href]")) {
    if (!/^(https?:|mailto:|#)/i.test(a.getAttribute("href"))) a.removeAttribute("href");
  }
}"""
_PDF_DATE = re.compile(rb"/(CreationDate|ModDate) ?\(D:(\d{14})(Z|[+-]\d\d'\d\d')\)")
_UTC = {1: b"Z", 7: b"+00'00'"}
#: A tagged element's ID, ``(node00000065)``: Chromium's DOM node id, drawn from a counter of
#: the renderer that other work draws from too, so that under load the same page can print
#: one element as node00000065 in one build and node00000066 in the next.
_NODE_ID = re.compile(rb"\(node(\d+)\)")
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


def with_fixed_node_ids(pdf: bytes) -> bytes:
    """`pdf` with the IDs of its structure elements (``/ID (node…)``, and the same strings in
    the ID tree) numbered 1, 2, … in the order of their values, each as wide as before: the
    order the ID tree is sorted by and the cross-reference offsets stay right."""
    ids = sorted({int(d) for d in re.findall(rb"/ID \(node(\d+)\)", pdf)})
    rank = {value: i + 1 for i, value in enumerate(ids)}

    def fixed(m: re.Match) -> bytes:
        if int(m[1]) not in rank:
            return m[0]
        return b"(node" + str(rank[int(m[1])]).zfill(len(m[1])).encode() + b")"

    return _NODE_ID.sub(fixed, pdf)


def chromium_path() -> str:
    return os.environ.get("DLPERF_CHROMIUM", "/usr/bin/chromium")


class SystemChromiumWebPDFExporter(WebPDFExporter):
    """WebPDF through a Chromium binary given by path (default ``$DLPERF_CHROMIUM`` or
    ``/usr/bin/chromium``); :meth:`print_pages` prints several pages in one browser."""

    executable_path = Unicode(help="Chromium binary Playwright launches").tag(config=True)
    temp_dir = Unicode("", help="TMPDIR of the browser ('' for the caller's)").tag(config=True)
    epoch = Int(0, help="the PDF's creation date, seconds since 1970 (UTC)").tag(config=True)
    load_timeout = Float(30.0, help="seconds a page may take to load").tag(config=True)

    @default("executable_path")
    def _executable_default(self):
        return chromium_path()

    def run_playwright(self, html):
        """JupyterLab's File › Save and Export › PDF (nbconvert's one-notebook path, through
        scripts/jupyter_server_config.py): printed as the reports are, in the same browser."""
        return self.print_pages([html])[0]

    def print_pages(self, pages: list[str], names: list[str] | None = None) -> list[bytes]:
        """Each HTML page of `pages` printed to PDF (A4 as its CSS says, backgrounds on,
        dated `epoch`) by one Chromium, the pages side by side. nbconvert's WebPDF starts a
        browser per page and waits a fixed 0.7 s in each (network idle, two pauses) for
        pages that have nothing to fetch: ours are self-contained (no script, images
        embedded), so a page is ready when loaded and its fonts are. A page that fails is
        a RuntimeError of one line naming it (`names`, default "page 1"...)."""
        names = names or [f"page {i + 1}" for i in range(len(pages))]
        folder = tempfile.mkdtemp(prefix="pdf-", dir=self.temp_dir or None)
        try:
            files = []
            for i, html in enumerate(pages):
                path = Path(folder) / f"page{i}.html"
                path.write_text(html, encoding="utf-8")
                files.append(path.as_uri())
            with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a loop of its own
                printed = pool.submit(asyncio.run, self._print(files, names)).result()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return [with_fixed_node_ids(with_fixed_dates(pdf, self.epoch)) for pdf in printed]

    async def _print(self, urls: list[str], names: list[str]) -> list[bytes]:
        from playwright.async_api import async_playwright

        # Chromium refuses its sandbox as root
        args = CHROMIUM_ARGS + (["--no-sandbox"] if os.geteuid() == 0 else [])
        env = {"FONTCONFIG_FILE": str(FONTS_CONF), **os.environ}
        if self.temp_dir:  # a Chromium killed by Ctrl-C leaves its temporary files there
            env["TMPDIR"] = self.temp_dir
        async with async_playwright() as playwright:
            try:
                browser = await playwright.chromium.launch(
                    executable_path=self.executable_path, env=env,
                    args=args, handle_sigint=False, handle_sigterm=False, handle_sighup=False)
            except Exception as exc:  # noqa: BLE001 - Playwright's errors have no common base
                raise RuntimeError(f"Chromium did not start: {str(exc).splitlines()[0]}") from exc
            try:
                return list(await asyncio.gather(*(self._print_one(browser, url, name)
                                                   for url, name in zip(urls, names))))
            finally:
                await browser.close()

    async def _print_one(self, browser, url: str, name: str) -> bytes:
        from playwright.async_api import Error
        from playwright.async_api import TimeoutError as LoadTimeout

        page = await browser.new_page()
        try:
            await page.emulate_media(media="print")
            try:
                await page.goto(url, wait_until="load", timeout=self.load_timeout * 1000)
            except LoadTimeout as exc:
                raise RuntimeError(f"{name}: its page did not load within "
                                   f"{self.load_timeout:g} s (an image or font it fetches "
                                   f"does not answer)") from exc
            await page.evaluate(UNLINK_RELATIVE)
            await page.evaluate("document.fonts.ready.then(() => true)")
            # outline: the headings as PDF bookmarks (it needs the tagged structure)
            return await page.pdf(print_background=True, prefer_css_page_size=True,
                                  outline=True, tagged=True)
        except Error as exc:
            raise RuntimeError(f"{name}: {str(exc).strip().splitlines()[0]}") from exc
        finally:
            await page.close()
