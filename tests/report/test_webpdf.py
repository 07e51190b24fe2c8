"""PDF printing (``analysis.report.webpdf``) with the system Chromium: a page that cannot be
printed is one line naming it."""

from __future__ import annotations

import socket
import threading

import pytest

from analysis.report.webpdf import SystemChromiumWebPDFExporter

pytestmark = pytest.mark.slow


@pytest.fixture
def silent_server():
    """A loopback HTTP address that accepts connections and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


def test_a_page_that_does_not_load_is_one_line_naming_it(silent_server):
    exporter = SystemChromiumWebPDFExporter(load_timeout=2)
    pages = ["<html><body><p>first</p></body></html>",
             f'<html><body><img src="{silent_server}/chart.png"></body></html>']
    with pytest.raises(RuntimeError) as raised:
        exporter.print_pages(pages, names=["report_en.pdf", "report_zh.pdf"])
    assert str(raised.value) == ("report_zh.pdf: its page did not load within 2 s (an image "
                                 "or font it fetches does not answer)")

