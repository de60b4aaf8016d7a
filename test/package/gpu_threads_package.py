"""The streamlike package from 8 threads at once on a GPU (threads_stress.py): every thread makes at
least a tenth of the mean iteration count, with occasional syncs of streams and events in the loop,
and every shared count is back where it started. Skipped without a GPU."""

import pytest
import threads_stress
from gpu_presence import skip_module_without_gpu

skip_module_without_gpu()


def test_eight_threads_all_progress_and_the_counts_return(streamlike):
    try:
        streamlike.Stream.create().sync()
    except RuntimeError as e:
        pytest.skip(f"no usable GPU: {e}")
    threads_stress.check(threads_stress.run(streamlike))
