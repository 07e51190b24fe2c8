import pandas as pd
import pytest

from analysis import schema
from analysis.errors import SchemaError

ALL = [schema.OBSERVATIONS, schema.RUNS, schema.PROBLEMS, schema.PER_RUN, schema.SUMMARY]


@pytest.mark.parametrize("s", ALL)
def test_empty_frames_validate(s):
    schema.validate(schema.empty(s), s)


def test_validate_rejects_wrong_dtype_and_order():
    df = schema.empty(schema.PROBLEMS)
    with pytest.raises(SchemaError, match="columns"):
        schema.validate(df[df.columns[::-1]], schema.PROBLEMS)
    bad = df.assign(line=pd.Series(dtype="float64"))
    with pytest.raises(SchemaError, match="'line' has dtype float64"):
        schema.validate(bad, schema.PROBLEMS)


def test_coerce_names_missing_columns():
    with pytest.raises(SchemaError, match="missing columns"):
        schema.coerce(pd.DataFrame({"run_id": ["a"]}), schema.PROBLEMS)


def test_every_column_is_documented():
    for s in ALL:
        assert all(len(c.meaning) > 5 for c in s)


def test_per_run_frames_have_the_declared_dtypes(data_dir):
    """A per-run frame is schema.PER_RUN, whatever the family and whether a run has a
    figure; text columns take the dtype this pandas gives strings."""
    from analysis.collect import parse_paths
    from analysis.stats import METHOD_NAMES
    from analysis.stats.per_run import run_throughputs

    for family in ("dll_pytorch", "oneflow_gpt", "megatron"):
        frames = run_throughputs(parse_paths([data_dir / family], jobs=1), METHOD_NAMES)
        for df in frames.values():
            schema.validate(df, schema.PER_RUN)
    assert schema.dtype_name(schema.PER_RUN[0]) == str(pd.Series(["x"]).dtype)
