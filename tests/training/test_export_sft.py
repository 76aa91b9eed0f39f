"""mua export -> datasets -> mua sft: the round trip, and the exported episode tokenises exactly as the
policy's own stream of the same gold episode."""
import json
import os

import pytest

from mua.harness.cli import main

datasets = pytest.importorskip("datasets")
pytest.importorskip("trl")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from training_fakes import BOOKINGS_PACK as PACK  # noqa: E402


def test_export_rows(exported):
    ds = datasets.load_from_disk(str(exported / "ds"))
    assert len(ds) == 6
    assert {"messages", "tools", "reward", "component_db", "task_id", "split", "termination"} <= set(ds.column_names)
    row = ds[0]
    assert row["reward"] == 1.0 and row["component_db"] == 1.0 and row["split"] == "train"
    assert row["messages"][0]["role"] == "system" and "<policy>" in row["messages"][0]["content"]
    assert [t["function"]["name"] for t in json.loads(row["tools"])] == ["book_table"]
    assert any(m["tool_calls"] for m in row["messages"] if m["role"] == "assistant")


def test_min_reward_filter_and_errors(exported, tmp_path, capsys):
    assert main(["export", str(exported / "run"), "--out", str(tmp_path / "x.jsonl"), "--format", "jsonl",
                 "--min-reward", "1.5", "--data-dir", str(PACK)]) == 2
    assert "no finished episodes with reward >= 1.5" in capsys.readouterr().err
    assert main(["export", str(tmp_path), "--out", str(tmp_path / "y"), "--data-dir", str(PACK)]) == 2
    assert "not a mua run" in capsys.readouterr().err


def test_exported_row_tokenises_as_the_policy_stream(exported, tmp_path):
    from gold_warmup import gold_streams
    from transformers import AutoTokenizer

    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.models.tiny import build_tiny_checkpoint
    from mua.training.sft import row_stream

    tok = AutoTokenizer.from_pretrained(build_tiny_checkpoint(tmp_path / "tiny"))
    row = datasets.load_from_disk(str(exported / "ds"))[0]
    bench = PackBenchmark(PACK)
    gold = gold_streams(bench, [bench.find_task("tasks", row["task_id"])], tok, {tok.eos_token_id})[0]
    stream = row_stream(row, tok, {tok.eos_token_id})
    assert stream.ids == gold.ids and stream.env_mask == gold.env_mask
    trained = tok.decode([i for i, m in zip(stream.completion_ids, stream.env_mask) if m])
    assert "book_table" in trained and "How can I help" not in trained  # the scripted greeting is prompt


@pytest.mark.parametrize("model", ["tiny", "smollm2"])
def test_the_dataset_of_many_rows_is_each_rows_own_stream(model, exported, tmp_path, monkeypatch, request):
    """sft_dataset shares one memoising suffixer across rows: the ids and masks are each row's stream built alone,
    also when the memo is smaller than the repeats (evicted entries are rebuilt); live suffixers memoise nothing."""
    from transformers import AutoTokenizer

    from mua.harness.models import stream as stream_module
    from mua.harness.models.tiny import build_tiny_checkpoint
    from mua.training.sft import row_stream, sft_dataset

    # the real pretrained model's tokenizer and chat template as well as the tiny one's
    path = request.getfixturevalue("smollm2_checkpoint") if model == "smollm2" else build_tiny_checkpoint(
        tmp_path / "tiny")
    tok = AutoTokenizer.from_pretrained(path)
    rows = list(datasets.load_from_disk(str(exported / "ds"))) * 2
    alone = [row_stream(r, tok, {tok.eos_token_id}) for r in rows]
    for size in (4096, 2):
        monkeypatch.setattr(stream_module, "MEMO_SIZE", size)
        built = sft_dataset(rows, tok, {tok.eos_token_id})
        assert built["input_ids"] == [s.ids for s in alone]
        assert built["completion_mask"] == [[0] * len(s.prompt_ids) + s.env_mask for s in alone]
    live = stream_module.TemplateSuffixer(tok, tok.eos_token)  # an episode's suffixer keeps nothing
    live.suffix_ids([stream_module.Message(role="user", content="hi")], True)
    assert not live._memo


def test_sft_one_step(exported, tmp_path, capsys):
    from mua.harness.models.tiny import build_tiny_checkpoint

    base = build_tiny_checkpoint(tmp_path / "tiny")
    out = tmp_path / "sft"
    assert main(["sft", "--policy", str(base), "--dataset", str(exported / "ds"), "--output-dir", str(out),
                 "--max-steps", "1", "--batch-size", "2", "--no-progress", "--save-steps", "1"]) == 0
    assert "1 steps" in capsys.readouterr().out
    assert (out / "config.json").is_file() and (out / "tokenizer.json").is_file()
    assert main(["sft", "--policy", str(tmp_path), "--dataset", str(exported / "ds"), "--output-dir",
                 str(out)]) == 2


def test_datasets_export_prints_no_progress_bar_and_writes_the_same_bytes(tmp_path, capfd):
    from mua.harness.tools.export import write_dataset

    rows = [{"task_id": f"t{i}", "messages": [{"role": "user", "content": "hi"}], "reward": 1.0} for i in range(3)]
    datasets.enable_progress_bars()
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "with-bars"))
    assert "Saving the dataset" in capfd.readouterr().err  # what the export used to print
    write_dataset(rows, tmp_path / "quiet", "datasets")
    assert "Saving the dataset" not in capfd.readouterr().err
    assert not datasets.are_progress_bars_disabled()  # the process's setting is left as it was
    files = sorted(p.name for p in (tmp_path / "with-bars").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "quiet").iterdir())
    for name in files:
        assert (tmp_path / "quiet" / name).read_bytes() == (tmp_path / "with-bars" / name).read_bytes(), name
    datasets.disable_progress_bars()
    write_dataset(rows, tmp_path / "still-off", "datasets")
    assert datasets.are_progress_bars_disabled()
    datasets.enable_progress_bars()
