import asyncio

import pytest

from mua.harness.models.batching import MicroBatcher


def doubled(batch):
    if any(x < 0 for x in batch):
        raise RuntimeError("negative input")
    return [2 * x for x in batch]


def submit_all(batcher, items):
    async def main():
        return await asyncio.gather(*[batcher.submit(x) for x in items], return_exceptions=True)
    return asyncio.run(main())


def test_concurrent_requests_share_batches_up_to_the_limit():
    batcher = MicroBatcher(doubled, max_batch=4)
    assert submit_all(batcher, list(range(10))) == [2 * x for x in range(10)]
    assert batcher.batch_sizes == [4, 4, 2]


def test_a_failing_batch_fails_its_callers_only_and_the_worker_survives():
    batcher = MicroBatcher(doubled, max_batch=2)
    out = submit_all(batcher, [1, -1, 3])
    assert isinstance(out[0], RuntimeError) and isinstance(out[1], RuntimeError) and out[2] == 6


def test_a_new_event_loop_gets_a_new_worker():
    batcher = MicroBatcher(doubled, max_batch=8)
    assert submit_all(batcher, [1]) == [2]
    assert submit_all(batcher, [5, 6]) == [10, 12]  # a second asyncio.run: new loop, new queue


@pytest.mark.parametrize("max_batch", [0, -1, "4", 2.0, True])
def test_bad_max_batch_is_a_config_error_naming_it(max_batch):
    from mua.harness.errors import ConfigError

    with pytest.raises(ConfigError, match="max_batch"):
        MicroBatcher(doubled, max_batch=max_batch)
