import pandas as pd
import pytest

from analysis import schema
from analysis.errors import SchemaError


@pytest.mark.parametrize("s", [schema.OBSERVATIONS, schema.RUNS, schema.PROBLEMS])
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
    for s in (schema.OBSERVATIONS, schema.RUNS, schema.PROBLEMS):
        d = schema.describe(s)
        assert (d["meaning"].str.len() > 5).all()
