"""Club rating golden cases (SPEC §3.2) as game feeds through the real ingest, validation and asset."""

from decimal import ROUND_HALF_UP, Decimal

import pytest

from tests.fixtures import club_cases
from tests.support import make_raw, rankings, run_cli


def published(value):
    return Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


@pytest.fixture(scope="module")
def club_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("club")
    rows = club_cases.alice_rows() + club_cases.pablo_rows() + club_cases.freddy_tom_rows() + club_cases.legacy_rows()
    raw = make_raw(root / "raw", games=rows)
    warehouse = root / "warehouse"
    code, out, err = run_cli("run", "--raw", str(raw), "--warehouse", str(warehouse), "--systems", "club")
    assert code == 0 and "quarantine entr" not in out, out + err
    return warehouse


def player(warehouse, month, pid):
    return {r["player_id"]: r for r in rankings(warehouse, "club", month)}.get(pid)


def test_alice(club_run):
    assert published(player(club_run, "2024-01", "alice")["rating"]) == Decimal("38.17")
    february = player(club_run, "2024-02", "alice")
    assert (february["wins"], february["losses"], february["draws"]) == (4, 0, 0)
    assert published(february["rating"]) == Decimal("55.92")


def test_pablo_freddy_tom(club_run):
    pablo = player(club_run, "2024-03", "pablo")
    assert (pablo["wins"], pablo["losses"], pablo["draws"]) == (7, 6, 2)
    assert pablo["schedule_strength"] == 0.5 and published(pablo["rating"]) == Decimal("49.30")
    assert published(player(club_run, "2024-05", "freddy")["rating"]) == Decimal("47.71")
    assert published(player(club_run, "2024-05", "tom")["rating"]) == Decimal("23.86")


def test_year_boundary_legacy(club_run):
    lena_2021 = player(club_run, "2021-12", "lena")["rating"]
    lena_2022 = player(club_run, "2022-12", "lena")
    assert lena_2022["legacy"] == pytest.approx(0.1 * lena_2021, abs=1e-12)
    lena_2023 = player(club_run, "2023-12", "lena")
    assert lena_2023["legacy"] == pytest.approx(0.1 * lena_2022["rating"], abs=1e-12)
    nina = player(club_run, "2022-01", "nina")
    assert nina["base_rating"] == 0 and nina["win_pct"] is None and nina["schedule_strength"] is None
    assert player(club_run, "2023-06", "nina") is None
    oscar = player(club_run, "2023-07", "oscar")
    assert oscar["legacy"] == 0.0
