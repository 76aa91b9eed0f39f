"""A missing or structurally wrong tau2 domain database fails when tasks are loaded (and in start()), with a
DataError naming the file and what is wrong, never a TypeError deep inside a tool."""
from __future__ import annotations

import pytest

from mua.benchmarks.tau2 import Tau2Benchmark
from mua.benchmarks.tau2.tasks import load_tasks as read_task_file
from mua.harness.errors import DataError

TELECOM_DB = "tau2/domains/telecom/db.toml"
TELECOM_USER_DB = "tau2/domains/telecom/user_db.toml"


def _error(root, domain: str) -> str:
    with pytest.raises(DataError) as info:
        Tau2Benchmark(root).load_tasks(domain, "base")
    return str(info.value)


def _start_error(root, domain: str) -> str:
    """start() on a task whose data dir holds the broken database (read without the benchmark's check)."""
    task = read_task_file(root, domain, None)[0]
    with pytest.raises(DataError) as info:
        Tau2Benchmark(root).start(task)
    return str(info.value)


def test_the_intact_copy_loads(shadow):
    shadow.path("tau2/domains/retail/db.json")
    assert len(Tau2Benchmark(shadow.root).load_tasks("retail", "base")) > 0


def test_missing_airline_db(shadow):
    shadow.remove("tau2/domains/airline/db.json")
    assert "missing data file tau2/domains/airline/db.json" in _error(shadow.root, "airline")
    assert "missing data file tau2/domains/airline/db.json" in _start_error(shadow.root, "airline")


@pytest.mark.parametrize("domain, change, expected", [
    ("retail", lambda db: db.clear(), "missing key 'products'"),
    ("retail", lambda db: db.pop("orders"), "missing key 'orders'"),
    ("retail", lambda db: db.update(users=[]), "'users' should be an object, found a list"),
    ("retail", lambda db: db["users"]["noah_brown_6181"].pop("name"), "users/noah_brown_6181: missing key 'name'"),
    ("retail", lambda db: db["users"].update(noah_brown_6181="Noah"),
     "users/noah_brown_6181: expected an object, found a string"),
    ("airline", lambda db: db.update(flights=None), "'flights' should be an object, found null"),
    ("airline", lambda db: db["reservations"]["4WQ150"].update(flights=7),
     "reservations/4WQ150: malformed record (TypeError"),
])
def test_structurally_wrong_json_db(shadow, domain, change, expected):
    relpath = f"tau2/domains/{domain}/db.json"
    shadow.edit_json(relpath, change)
    message = _error(shadow.root, domain)
    assert f"data file {relpath}" in message and expected in message, message


def test_retail_db_replaced_by_a_list(shadow):
    shadow.write("tau2/domains/retail/db.json", "[]")
    expected = "data file tau2/domains/retail/db.json: expected an object, found a list"
    assert expected in _error(shadow.root, "retail")
    assert expected in _start_error(shadow.root, "retail")


def test_telecom_db_missing_tables(shadow):
    shadow.write(TELECOM_DB, "plans = []\n")
    message = _error(shadow.root, "telecom")
    assert f"data file {TELECOM_DB}: missing key 'customers'" in message, message


def test_telecom_table_of_the_wrong_type(shadow):
    shadow.write(TELECOM_DB, 'plans = []\ncustomers = []\nlines = []\nbills = []\ndevices = "none"\n')
    assert "'devices' should be a list, found a string" in _error(shadow.root, "telecom")


def test_telecom_record_missing_a_field(shadow):
    text = shadow.path(TELECOM_DB).read_text(encoding="utf-8")
    shadow.write(TELECOM_DB, text.replace('plan_id = "P1001"\n', "", 1))
    message = _error(shadow.root, "telecom")
    assert f"data file {TELECOM_DB}, plans[0]: missing key 'plan_id'" in message, message


def test_telecom_user_db_device_not_a_table(shadow):
    shadow.write(TELECOM_USER_DB, "device = 3\n")
    message = _error(shadow.root, "telecom")
    assert f"data file {TELECOM_USER_DB}: 'device' should be an object, found an integer" in message, message


def test_split_file_of_the_wrong_shape(shadow):
    shadow.write("tau2/domains/airline/split_tasks.json", "[]")
    assert "split_tasks.json: expected an object of split name" in _error(shadow.root, "airline")
