"""DLLogger JSON-stream backend (docs/formats.md §5): ``DLLL {json}`` records, one a line,
read with ``json.loads`` one by one (the files are small). The timestamp is the record's
``timestamp``, else its ``datetime``. The DLPerf PyTorch rule applies.
"""

from __future__ import annotations

import json
import re

import numpy as np

from analysis.estimate import Estimate, RunData
from analysis.logtext import LogText
from analysis.parsers import _dllogger as dll
from analysis.parsers import register
from analysis.parsers._fields import INT64_MAX, INT64_MIN
from analysis.parsers._rules import pytorch_rule
from analysis.parsers._scan import found
from analysis.parsers.base import LogParser, ParsedLog, iso_seconds
from analysis.problems import Problem

_RECORD = re.compile(rb"^DLLL (.*)$", re.M)
_KIND_OF_LEN = {0: dll.SUMMARY, 1: dll.EPOCH, 2: dll.TRAIN, 3: dll.VAL}
#: dtypes of a group's columns: line, timestamp, epoch, step, value
_COLUMNS = (np.int64, np.float64, np.int64, np.int64, np.float64)


def _timestamp(rec: dict) -> float:
    try:
        return float(rec["timestamp"])
    except (KeyError, TypeError, ValueError):
        pass
    t = iso_seconds(str(rec["datetime"])) if "datetime" in rec else None
    return float("nan") if t is None else t


@register
class DllJson(LogParser):
    name = "dll_json"
    markers = (b'dlll {',)
    framework = "PyTorch"
    description = "DLLogger JSON-stream backend (DLLL records)"

    max_score = 95
    printed_global_rate = True

    @classmethod
    def sniff(cls, head: bytes) -> int:
        return 95 if re.search(rb"^DLLL \{", head, re.M) else 0

    def parse(self, log: LogText) -> ParsedLog:
        parsed = ParsedLog(self.name)
        matches, lines = found(log, _RECORD)
        units: dict[str, str] = {}
        rows: dict[tuple, list] = {}
        params, plines = {}, {}
        for m, line in zip(matches, lines.tolist(), strict=True):
            text = m.group(1)
            try:
                rec = json.loads(text)
                if not isinstance(rec, dict):
                    raise ValueError("a record is a JSON object")
            except (ValueError, RecursionError) as exc:  # nested past the recursion limit
                parsed.problems.append(self._bad(log, line, f"not JSON ({exc})"))
                continue
            if rec.get("type") == "METADATA":
                meta = rec.get("metadata")
                if isinstance(meta, dict) and isinstance(rec.get("metric"), str):
                    units[rec["metric"]] = str(meta.get("unit") or "")
                continue
            step, data = rec.get("step"), rec.get("data")
            if not isinstance(data, dict):
                parsed.problems.append(self._bad(log, line, "no 'data' object"))
                continue
            if step == "PARAMETER":
                dll.state_parameters(log, ((str(k), str(v)) for k, v in data.items()), line,
                                     params, plines, parsed.problems)
                continue
            if (not isinstance(step, list) or len(step) not in _KIND_OF_LEN
                    or not all(isinstance(x, int) and not isinstance(x, bool)
                               and INT64_MIN <= x <= INT64_MAX for x in step)):
                parsed.problems.append(self._bad(log, line, f"unrecognised step {step!r}"))
                continue
            kind = _KIND_OF_LEN[len(step)]
            epoch = step[0] if step else -1
            it = step[1] if len(step) > 1 else -1
            ts = _timestamp(rec)
            for name, val in data.items():
                if isinstance(val, bool) or not isinstance(val, (int, float)) and val is not None:
                    parsed.problems.append(self._bad(
                        log, line, f"value {str(val)[:40]!r} of {name} is not a number"))
                    continue
                try:
                    v = float("nan") if val is None else float(val)
                except OverflowError:  # an int of hundreds of digits
                    parsed.problems.append(self._bad(
                        log, line, f"value {str(val)[:40]!r}… of {name} is beyond a float"))
                    continue
                rows.setdefault((kind, str(name)), []).append((line, ts, epoch, it, v))
        groups = [dll.Group(kind, name, "" if units.get(name) == "None" else units.get(name, ""),
                            *(np.array(c, dtype=t)
                              for c, t in zip(zip(*vals), _COLUMNS, strict=True)))
                  for (kind, name), vals in rows.items()]
        dll.add_groups(parsed, log, groups)
        dll.apply_parameters(parsed, params, plines, log.source)
        return parsed

    @staticmethod
    def _bad(log: LogText, line: int, reason: str) -> Problem:
        return Problem(log.source, line, "bad_line", f"unreadable DLLL record: {reason}",
                       log.line_text(line)[:300])

    def dlperf(self, run: RunData) -> Estimate:
        return pytorch_rule(run)
