"""Jitted functions in worker processes: they pickle by reference, and each spawned worker compiles its own
code (compiled code is never shared between processes or cached on disk)."""

import concurrent.futures
import multiprocessing
import os

import pytest
import worker_tasks

LIMITS = [500, 1000, 1500, 2000]


def expected(limit):
    return worker_tasks.collatz_steps.py_func(limit)


@pytest.mark.slow
def test_spawn_pool_gives_plain_results_and_each_worker_compiles():
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.map(worker_tasks.task, LIMITS, chunksize=1)
        direct = pool.map(worker_tasks.collatz_steps, LIMITS)  # the jitted function itself, pickled
    assert [r[0] for r in results] == [expected(limit) for limit in LIMITS]
    assert direct == [expected(limit) for limit in LIMITS]
    pids = {pid for _, pid, _, _ in results}
    assert os.getpid() not in pids
    for _, _, traces, native_entries in results:
        assert traces > 0 and native_entries > 0  # compiled in the worker, by the worker, and ran natively


@pytest.mark.slow
def test_process_pool_executor_with_spawn():
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as executor:
        results = list(executor.map(worker_tasks.task, LIMITS))
    assert [r[0] for r in results] == [expected(limit) for limit in LIMITS]
    assert all(traces > 0 for _, _, traces, _ in results)
