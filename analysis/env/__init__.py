"""Environment and topology capture: what a benchmark ran on, as validated records."""
