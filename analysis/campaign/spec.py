"""Campaign specs: YAML → validated :class:`Spec` → cases → runs.

A spec describes a sweep once. Either a matrix (``precisions`` × ``batch_sizes`` × ``devices``)
or an explicit ``cases:`` list (where a product makes no sense, e.g. GPT parallel layouts) is
expanded into :class:`Case` objects; each case × repeat is a :class:`Run` with a stable id
``<N>n<G>g/<stem>`` and the DLPerf log path ``<out>/<N>n<G>g/<stem>.log``. The keys and
their checks are the schema of :mod:`analysis.campaign.spec_schema`; the YAML is read by
:mod:`analysis.yamlio`. Every problem raises :class:`SpecError` naming the file, the line
and the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from analysis import config, yamlio
from analysis.campaign.spec_schema import LIMITS, SpecError, SpecFile, invalid, validate
from analysis.layout import normalize_model
from analysis.redact import secrets_in

__all__ = ["Case", "Run", "Spec", "SpecError", "from_dict", "load"]


@dataclass(frozen=True)
class Case:
    """One benchmark configuration (everything but the repeat)."""

    num_nodes: int
    gpus_per_node: int
    precision: str
    batch_size: int
    model: str
    name: str = ""  # stem prefix; default <model>_b<bsz>_<precision>
    args: tuple[str, ...] = ()
    params: tuple[tuple[str, Any], ...] = ()  # workload-specific (GPT dp/mp/pp, ...)

    @property
    def config(self) -> str:
        return f"{self.num_nodes}n{self.gpus_per_node}g"

    @property
    def param(self) -> dict[str, Any]:
        return dict(self.params)


@dataclass(frozen=True)
class Run:
    """A case × repeat: what the runner launches once."""

    case: Case
    repeat: int
    stem: str

    @property
    def run_id(self) -> str:
        return f"{self.case.config}/{self.stem}"

    def path(self, out_dir: Path, suffix: str = ".log", node: int | None = None) -> Path:
        """``<out>/<N>n<G>g/<stem>[.node<k>]<suffix>``."""
        node_part = "" if node is None else f".node{node}"
        return Path(out_dir) / self.case.config / f"{self.stem}{node_part}{suffix}"

    def log_path(self, out_dir: Path, node: int = 0) -> Path:
        return self.path(out_dir, ".log", None if node == 0 else node)

    def files(self, out_dir: Path, node: int) -> tuple[Path, Path, Path]:
        """The finished log, environment record and GPU samples of `node`."""
        return (self.log_path(out_dir, node), self.path(out_dir, ".env.json", node=node),
                self.path(out_dir, ".gpu.csv", None if node == 0 else node))


class Spec(SpecFile):
    """A validated campaign spec: the schema's keys (:class:`SpecFile`) with their defaults
    filled in, the cases of its matrix or list, nested mappings as dicts of the keys given,
    and the mapping as written (``raw``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)  # Case is a plain dataclass

    framework: str
    model: str
    cases: list[Case]
    iterations: int
    hosts: list[dict]
    ssh: dict
    slurm: dict
    container: dict | None
    raw: dict

    def runs(self) -> list[Run]:
        """Every case × repeat, in a stable order (cases in spec order, repeats 1..R)."""
        from analysis.campaign import workloads

        wl = workloads.get(self.workload)
        runs = [Run(c, r, wl.stem(c, r)) for c in self.cases for r in range(1, self.repeats + 1)]
        seen: dict[str, Run] = {}
        for run in runs:
            if run.run_id in seen:
                raise SpecError(f"two runs share the id {run.run_id!r}; give the cases "
                                "distinct 'name' values")
            seen[run.run_id] = run
        return runs

    def resolve_out_dir(self, out_dir: str | Path | None = None) -> Path:
        return Path(out_dir or self.out_dir or config.RAW_LOGS_DIR / self.name).resolve()

    def secrets(self) -> list[str]:
        """Secret strings of the spec (values of secret-named keys, URL passwords) that no
        written file may contain."""
        return secrets_in(self.raw)


def _case_list(v, model: str) -> list[Case]:
    """The cases of a checked spec: its explicit ``cases`` or the matrix product."""
    if v.cases is not None:
        return [Case(*c.devices, c.precision, c.batch_size, c.model or model, c.name,
                     tuple(c.args), tuple(sorted(c.params.items()))) for c in v.cases]
    for k in ("precisions", "batch_sizes", "devices"):
        if getattr(v, k) is None:
            raise SpecError(f"spec key {k!r} is required (or give an explicit 'cases:' list)",
                            k)
    # aliases (fp16 = amp) and repeated entries name the same case once
    precs, bszs, devs = (list(dict.fromkeys(x)) for x in (v.precisions, v.batch_sizes,
                                                          v.devices))
    _check_run_count(len(precs) * len(bszs) * len(devs), v.repeats)
    return [Case(n, g, p, b, model) for n, g in devs for p in precs for b in bszs]


def _check_run_count(cases: int, repeats: int) -> None:
    if cases * repeats > LIMITS["runs"]:
        raise SpecError(f"spec: {cases} cases x {repeats} repeats = {cases * repeats} runs; "
                        f"a campaign has at most {LIMITS['runs']} runs (split it)")


def _given(section) -> dict:
    return {} if section is None else section.model_dump(exclude_none=True)


def _check_warmup(spec: Spec, wl) -> None:
    """A stated warm-up must reach the program and leave iterations to measure (an unstated
    one is the program's own: the built-in workload's 20 with fewer iterations is its rule)."""
    if spec.warmup is None:
        return
    if not wl.warmup_option:
        raise SpecError(f"spec key 'warmup': workload {wl.name!r} gives its program no warm-up "
                        "setting, so this one would not run; leave it out", "warmup")
    if spec.warmup >= spec.iterations:
        raise invalid("warmup", spec.warmup, f"fewer than iterations ({spec.iterations})")


def from_dict(raw: dict) -> Spec:
    """Validate a spec mapping (as loaded from YAML) into a :class:`Spec`."""
    from analysis.campaign import workloads

    if raw is None:
        raise SpecError("the spec is empty; a campaign spec is a mapping of keys (name, "
                        "workload, ...)")
    if not isinstance(raw, dict):
        raise SpecError(f"a campaign spec is a mapping of keys; got {type(raw).__name__}")
    v = validate(raw)
    if v.workload not in workloads.names():
        raise invalid("workload", raw["workload"], ", ".join(workloads.names()))
    wl = workloads.get(v.workload)
    if v.framework and v.framework.lower() != wl.framework:
        raise invalid("framework", raw["framework"], f"{wl.framework} (workload {wl.name})")
    model = v.model or normalize_model(wl.default_model)
    cases = _case_list(v, model)
    _check_run_count(len(cases), v.repeats)
    for c in cases:
        wl.check_case(c)
    nested = {"hosts": [_given(h) for h in v.hosts], "ssh": _given(v.ssh),
              "slurm": _given(v.slurm), "container": _given(v.container) or None}
    spec = Spec.model_construct(**{
        **v.model_dump(exclude={"cases", *nested}), **nested, "workload": wl.name,
        "framework": wl.framework, "model": model, "cases": cases,
        "iterations": v.iterations or wl.default_iterations, "raw": dict(raw)})
    _check_warmup(spec, wl)
    nodes = max(c.num_nodes for c in cases)
    if spec.backend == "ssh" and len(spec.hosts) < nodes:
        raise SpecError(f"spec key 'hosts': backend ssh needs at least {nodes} hosts for "
                        f"{nodes}-node cases; got {len(spec.hosts)}",
                        "hosts")
    spec.runs()  # stable ids, no duplicates
    return spec


def load(path: str | Path, overrides: dict | None = None) -> Spec:
    """Read a YAML spec file; `overrides` (e.g. from the CLI) replace top-level keys.
    Every error names the file, and the line when it is about one key."""
    try:
        text = yamlio.read_text(path, what="a campaign spec, a short YAML file")
        raw = yamlio.parse(text, str(path))
    except yamlio.YamlError as exc:
        raise SpecError(str(exc)) from None
    if isinstance(raw, dict):
        raw.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        return from_dict(raw)
    except SpecError as exc:
        line = yamlio.node_at(text, exc.key)[1] if exc.key else None
        what = str(exc).removeprefix("spec: ")
        raise SpecError(f"{path}{f':{line}' if line else ''}: {what}", exc.key) from None

