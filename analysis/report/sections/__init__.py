"""Report sections, one module each."""
