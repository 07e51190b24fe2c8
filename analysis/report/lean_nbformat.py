"""Import nbformat without jsonschema's optional IRI format checker (import this module
before nbformat, papermill or nbconvert).

nbformat imports jsonschema whatever ``NBFORMAT_VALIDATOR`` says (fastjsonschema, its default,
validates; jsonschema is imported anyway), and jsonschema loads every optional format checker
installed. JupyterLab's jupyter-events installs ``jsonschema[format-nongpl]``, whose
``rfc3987_syntax`` builds a Lark grammar when imported: 2-3.5 s of a 2-core machine, spent
before a report build could start its kernel. No notebook field has the "iri" format, so
jsonschema is imported here with that module unavailable (an ImportError, which jsonschema
expects and skips); other code can still import ``rfc3987_syntax`` afterwards.
"""

from __future__ import annotations

import sys

#: Optional jsonschema format checker left out: its import builds a parser (seconds).
SLOW_FORMAT_CHECKER = "rfc3987_syntax"


def import_jsonschema_without_iri_checker() -> None:
    """Import jsonschema, its "iri" checker left out, unless jsonschema or the checker's
    module is imported already (then nothing changes)."""
    if "jsonschema" in sys.modules or SLOW_FORMAT_CHECKER in sys.modules:
        return
    sys.modules[SLOW_FORMAT_CHECKER] = None  # type: ignore[assignment]  # import -> ImportError
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        pass  # not installed: nbformat's own import says so
    finally:
        if sys.modules.get(SLOW_FORMAT_CHECKER, 0) is None:
            del sys.modules[SLOW_FORMAT_CHECKER]


import_jsonschema_without_iri_checker()
