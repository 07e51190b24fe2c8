"""Settings of the JupyterLab that `make lab` starts (scripts/lab.sh passes this file)."""

import nbconvert.exporters

from analysis.report.webpdf import SystemChromiumWebPDFExporter

# File › Save and Export › PDF and WebPDF: nbconvert's PDF needs pandoc and xelatex, its WebPDF
# a Chromium that Playwright downloads, and neither is installed (a raw "500" page). Both print
# through the system Chromium that `dlperf report` prints with. The exporters are looked up by
# their entry points (nbconvert.exporters:PDFExporter, …) when an export is asked for.
nbconvert.exporters.PDFExporter = SystemChromiumWebPDFExporter
nbconvert.exporters.WebPDFExporter = SystemChromiumWebPDFExporter
