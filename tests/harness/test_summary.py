import pytest

from mua.harness.summary import pass_hat_k, summarize_episodes


def test_pass_hat_k_hand_checked():
    # 4 trials, 2 successes: pass^1 = 2/4, pass^2 = C(2,2)/C(4,2) = 1/6, pass^3 = 0
    assert pass_hat_k(2, 4, 1) == 0.5
    assert pass_hat_k(2, 4, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(2, 4, 3) == 0
    assert pass_hat_k(4, 4, 4) == 1
    with pytest.raises(ValueError):
        pass_hat_k(1, 2, 3)


def rec(task, reward, error=None, components=None):
    return {"subset": "s", "task_id": task, "reward": reward, "error": error, "components": components or {}}


def test_summary_pools_tasks_and_counts_errors_apart():
    rows = [rec("a", 1.0), rec("a", 1.0), rec("b", 1.0), rec("b", 0.0), rec("c", None, error="model error: x"),
            rec("c", 0.0, components={"db": 0.0, "nl_assertion": None})]
    s = summarize_episodes(rows, trials=2)
    assert s["errors"] == 1 and s["episodes"] == 6 and s["tasks"] == 3
    assert s["pass^1"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert s["pass^2"] == pytest.approx((1 + 0) / 2)  # task c has one non-error trial: no pass^2 for it
    assert s["incomplete_components"] == ["nl_assertion"] and s["components"] == {"db": 0.0}
