"""Why a REVIEW waits for a reader is the digest's to say (issue 31, item 2): decisions.json records it.

`reporter digest` writes each REVIEW's `review_reason` (null for a KEEP or a
DROP), the first of REVIEW_REASONS that fits; the week page lists the REVIEWs
under the recorded reason. A week decided before the field was recorded is
read with the reason its tags, score and thresholds make, so its page groups
its papers exactly as before; a reason that is not one, or one on a KEEP or a
DROP, is refused like any other broken decisions.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reporter.digest.archive import read_week, week_bytes
from reporter.digest.config import DigestSettings
from reporter.digest.records import REVIEW_REASONS, review_reason_of
from reporter.digest.weeks import run_weeks
from reporter.errors import InputError
from reporter.hashing import dump_json
from reporter.site.digest_groups import review_groups

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "digest"


@pytest.fixture(scope="module")
def weeks(tmp_path_factory) -> dict[str, bytes]:
    archive = tmp_path_factory.mktemp("archive")
    s = DigestSettings(papers=EXAMPLE / "papers", watchlist=EXAMPLE / "watchlist.txt",
                       criteria=EXAMPLE / "criteria.md", archive=archive, max_kept=3)
    run_weeks(s, ["2026-W25", "2026-W26"])
    return {w: week_bytes(archive, w) for w in ("2026-W25", "2026-W26")}


def test_every_review_records_the_reason_it_waits_for_a_reader(weeks):
    seen = set()
    for data in weeks.values():
        doc = json.loads(data)
        keep, review = doc["settings"]["keep_threshold"], doc["settings"]["review_threshold"]
        for d in doc["decisions"]:
            assert "review_reason" in d, d["id"]
            if d["decision"] == "REVIEW":
                assert d["review_reason"] == review_reason_of(tuple(d["tags"]), d["score"], keep, review), d["id"]
                seen.add(d["review_reason"])
            else:
                assert d["review_reason"] is None, d["id"]
    assert {"over-cap", "near-threshold"} <= seen <= set(REVIEW_REASONS), seen


def test_a_week_decided_before_the_reason_was_recorded_is_grouped_as_before(weeks):
    for week, data in weeks.items():
        doc = json.loads(data)
        old = {**doc, "decisions": [{k: v for k, v in d.items() if k != "review_reason"} for d in doc["decisions"]]}
        now, then = read_week(data, week), read_week(dump_json(old).encode(), week)
        assert [d.review_reason for d in then.decisions.decisions] == [d.review_reason
                                                                       for d in now.decisions.decisions]
        assert review_groups(then.decisions.decisions, then.head.settings) == review_groups(
            now.decisions.decisions, now.head.settings)


@pytest.mark.parametrize("decision, reason", [("REVIEW", "because"), ("REVIEW", 7), ("KEEP", "over-cap"),
                                              ("DROP", "other")])
def test_a_reason_that_is_not_one_or_on_another_decision_is_refused(weeks, decision, reason):
    doc = json.loads(weeks["2026-W25"])
    target = next(d for d in doc["decisions"] if d["decision"] == decision)
    target["review_reason"] = reason
    with pytest.raises(InputError, match=r"w25: not a decisions.json this tool wrote .*review_reason"):
        read_week(dump_json(doc).encode(), "w25")
