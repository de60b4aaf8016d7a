"""Synthetic Google Benchmark output for the benchmark judge's tests (ratios_test.py,
run_all_test.py): rows with given times, in the JSON that --benchmark_format=json prints."""

import json


def benchmark_json(rows, errors=(), metric_scale=None, counters=None):
    """rows: {name: [ns per repetition, ...]} (cpu_time and real_time alike, unless metric_scale
    {name: factor} makes real_time = cpu_time * factor); errors: names that SkipWithError'd;
    counters: {name: {counter: [value per repetition, ...]}}, the user counters of row name (a
    counter with fewer values than the row has repetitions is left out of the later ones)."""
    benchmarks = []
    for family, (name, times) in enumerate(rows.items()):
        for i, ns in enumerate(times):
            factor = (metric_scale or {}).get(name, 1.0)
            user = {c: values[i] for c, values in (counters or {}).get(name, {}).items() if i < len(values)}
            benchmarks.append(
                {
                    "name": name,
                    "run_name": name,
                    "run_type": "iteration",
                    "repetitions": len(times),
                    "repetition_index": i,
                    "family_index": family,
                    "per_family_instance_index": 0,
                    "iterations": 1000,
                    "real_time": ns * factor,
                    "cpu_time": ns,
                    "time_unit": "ns",
                    **user,
                }
            )
    for family, name in enumerate(errors, start=len(rows)):
        benchmarks.append(
            {
                "name": name,
                "run_name": name,
                "run_type": "iteration",
                "family_index": family,
                "per_family_instance_index": 0,
                "error_occurred": True,
                "error_message": "no CUDA device",
            }
        )
    return {
        "context": {
            "date": "2026-12-01T00:00:00",
            "host_name": "fixture",
            "num_cpus": 2,
            "mhz_per_cpu": 1000,
            "cpu_scaling_enabled": False,
            "load_avg": [0.0],
        },
        "benchmarks": benchmarks,
    }


def dumps(rows, **kwargs):
    return json.dumps(benchmark_json(rows, **kwargs))
