"""One warehouse has one location however it is spelled, and the jobs' runs carry it as a tag."""

import pytest

from pipeline.definitions import build_definitions
from pipeline.defs.tags import WAREHOUSE_TAG
from pipeline.settings import Settings
from pipeline.systems.registry import SYSTEM_NAMES


@pytest.mark.parametrize(
    "spellings",
    [
        ("wh", "./wh", "wh/", "sub/../wh", "{tmp}/wh", "{tmp}//wh/"),
        ("s3://bucket/prefix", "S3://bucket/prefix/", "s3://bucket//prefix"),
    ],
)
def test_one_warehouse_has_one_canonical_location(tmp_path, monkeypatch, spellings):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    locations = {Settings.from_env({}, warehouse_dir=s.format(tmp=tmp_path)).warehouse_dir for s in spellings}
    assert len(locations) == 1, locations
    assert locations.pop() in {str(tmp_path / "wh"), "s3://bucket/prefix"}


def test_jobs_of_the_code_location_carry_the_canonical_location(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    relative = build_definitions(Settings.from_env({}, warehouse_dir="wh"))
    absolute = build_definitions(Settings.from_env({}, warehouse_dir=str(tmp_path / "wh") + "/"))
    for defs in (relative, absolute):
        ingest = defs.resolve_job_def("ingest")
        assert ingest.tags == {WAREHOUSE_TAG: str(tmp_path / "wh")}
        for system in SYSTEM_NAMES:
            assert defs.resolve_job_def(f"{system}_job").tags == {WAREHOUSE_TAG: str(tmp_path / "wh")}
    # The schedule and the file sensor launch the ingest job; rate_after_ingest the rating jobs.
    assert relative.resolve_schedule_def("monthly_tables").job_name == "ingest"
    assert relative.resolve_sensor_def("new_raw_files").job_name == "ingest"
    assert {job.name for job in relative.resolve_sensor_def("rate_after_ingest").jobs} == {
        f"{s}_job" for s in SYSTEM_NAMES
    }
