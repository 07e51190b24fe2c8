"""Settings of the JupyterLab that `make lab` starts (scripts/lab.sh passes this file)."""

import nbconvert.exporters

from analysis.report.webpdf import SystemChromiumWebPDFExporter

c = get_config()  # noqa: F821 - defined by the config loader

# File › Save and Export › PDF and WebPDF: nbconvert's PDF needs pandoc and xelatex, its WebPDF
# a Chromium that Playwright downloads, and neither is installed (a raw "500" page). Both print
# through the system Chromium that `dlperf report` prints with. The exporters are looked up by
# their entry points (nbconvert.exporters:PDFExporter, …) when an export is asked for.
nbconvert.exporters.PDFExporter = SystemChromiumWebPDFExporter
nbconvert.exporters.WebPDFExporter = SystemChromiumWebPDFExporter

# A notebook git tracks is saved as committed (no outputs): running and saving one in Lab
# leaves `git status` clean.
c.FileContentsManager.pre_save_hook = "analysis.lab_contents.save_as_committed"
# Lab's copy of each file it opens goes to a tree of its own, not beside the file: beside a
# log under data/ it would be parsed as one more run.
c.ContentsManager.checkpoints_class = "analysis.lab_contents.TreeCheckpoints"
