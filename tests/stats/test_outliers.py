from analysis.stats.per_run import mark_outliers


def _outliers(values):
    rows = [{"framework": "PyTorch", "model": "resnet50", "precision": "amp", "num_nodes": 1,
             "gpus_per_node": 4, "batch_size_per_device": 256, "case": "", "throughput": v}
            for v in values]
    mark_outliers(rows)
    return [r["outlier"] for r in rows]


def test_far_repeat_is_flagged_and_kept():
    flags = _outliers([1000.0, 1002.0, 998.0, 1001.0, 800.0])
    assert flags == [False, False, False, False, True]


def test_sub_percent_noise_of_a_very_repeatable_case_is_not_flagged():
    # seed-like spread: MAD is tiny, but 0.5 % run-to-run noise is not an outlier
    assert not any(_outliers([23362.79, 23380.0, 23254.81, 23399.37, 23350.0]))


def test_fewer_than_three_repeats_flag_nothing():
    assert not any(_outliers([1.0, 100.0]))


def test_a_run_without_a_figure_is_no_repeat():
    rows = _outliers([1000.0, 1002.0, 998.0, float("nan"), 800.0])
    assert rows == [False, False, False, False, True]
