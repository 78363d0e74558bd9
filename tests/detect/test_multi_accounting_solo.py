"""Multi-accounting on behaviour alone: one person's two accounts that share no device, address or card are found
(their play, decision times, hours and openings beyond every pair of the population), while friends who opened
their accounts together and keep the same hours, but play as two people, are not."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from test_identity_features_world import T0, Style, World, at

from detectors.features import identity as idf
from detectors.multi_accounting import MultiAccountingDetector

PERSON = ["p1", "p2"]
FRIENDS = ["f1", "f2"]
COUNTRIES = ("DE", "FR", "GB", "SE", "CA", "IE", "NL", "AT")


@pytest.fixture(scope="module")
def world():
    w = World(seed=31)
    rng = np.random.default_rng(7)
    honest = [f"h{i:02d}" for i in range(46)]
    country = {n: COUNTRIES[i % len(COUNTRIES)] for i, n in enumerate(honest)}
    country.update({"p1": "FR", "p2": "FR", "f1": "GB", "f2": "GB"})
    opened = {n: T0 - dt.timedelta(days=float(rng.uniform(30, 1500))) for n in honest}
    opened.update({"p1": T0 - dt.timedelta(days=400), "p2": T0 - dt.timedelta(days=397),
                   "f1": T0 - dt.timedelta(days=200), "f2": T0 - dt.timedelta(days=200, hours=2)})
    me = Style(vpip=0.31, pfr=0.22, aggr=0.62, size=0.8, log_ms=7.6, sd_ms=0.4)
    for n in honest + FRIENDS:
        w.account(n, payment=f"card-{n}", country=country[n])
    for n in PERSON:
        w.account(n, me, payment=f"card-{n}", country=country[n])
    w.rows["accounts"] = [(r[0], opened[r[0]], *r[2:]) for r in w.rows["accounts"]]
    # sessions: everyone on their own address and device; the person's two clients and the two friends are online
    # at the same hours, every other account at hours of its own
    for i, n in enumerate(honest):
        for d in range(4):
            t0 = at(d * 1440 + float(rng.uniform(0, 1200)))
            w.session(n, f"62.{i}.{d}.1", f"pc-{n}", t0, t0 + dt.timedelta(minutes=float(rng.uniform(60, 200))))
    for k, pair in enumerate((PERSON, FRIENDS)):
        for d in range(4):
            t0 = at(d * 1440 + 300 + 400 * k)
            for j, n in enumerate(pair):
                w.session(n, f"81.{k}.{j}.{d}", f"phone-{n}", t0 + dt.timedelta(minutes=j), t0 + dt.timedelta(minutes=150))
    everyone = honest + PERSON + FRIENDS
    for t in range(30):
        w.tournament(str(800 + t), rng.choice(everyone, 27, replace=False).tolist(), at(120 * t), n_hands=110)
    return w


@pytest.fixture(scope="module")
def con(world):
    c = world.build()
    yield c
    c.close()


def test_behaviour_pairs_rank_every_pair(con):
    """One row per pair of accounts with enough hands; the person's pair is the strongest and alone below alpha."""
    fp = idf.style_fingerprints(con)
    out = idf.behaviour_pairs(con, fp)
    n = int((fp["n_hands"] >= 30).sum())
    assert out.height == n * (n - 1) // 2
    top = out.sort("p_solo").row(0, named=True)
    assert (top["a"], top["b"]) == ("p1", "p2")
    assert out.filter(pl.col("q_solo") <= 0.05).select("a", "b").rows() == [("p1", "p2")]
    friends = out.filter((pl.col("a") == "f1") & (pl.col("b") == "f2")).row(0, named=True)
    # the friends match the person on hours, openings and country; their play tells two people
    assert friends["p_hours"] <= top["p_hours"] and friends["p_opened"] <= top["p_opened"]
    assert friends["q_solo"] > 0.05
    assert idf.behaviour_pairs(con, fp, max_pairs=10) is None


def test_one_person_without_shared_identifier_flagged(con):
    sigs = MultiAccountingDetector().detect(con)
    flagged = [s for s in sigs if s.flagged]
    assert [sorted(s.accounts) for s in flagged] == [PERSON]
    case = flagged[0]
    assert "behaviour alone" in case.summary
    ev = {e.name: e for e in case.evidence}
    assert "one person on behaviour alone" in ev and "share no device" in ev["one person on behaviour alone"].text
    assert not any(e.name.startswith("shared ") for e in case.evidence)


def test_friends_with_same_hours_and_openings_not_flagged(con):
    sigs = MultiAccountingDetector().detect(con)
    assert not {a for s in sigs if s.flagged for a in s.accounts} & set(FRIENDS)


def test_path_off_above_max_pairs_says_so(con):
    det = MultiAccountingDetector(solo_max_pairs=10).fit(con)
    assert not det.solo_
    assert any("behaviour-only pairs" in m for m in det.missing_)
    assert not any(s.flagged for s in det.detect(con))


def test_country_of_no_accounts_is_empty_not_an_error():
    """A population whose accounts table holds none of the judged accounts' countries (none at all) gives empty
    arrays: the mask of known countries is boolean even when empty (it was a float array, and ``&`` failed)."""
    import numpy as np

    from detectors.features.identity.behaviour import _country

    none = np.array([], dtype=np.int64)
    same, p = _country([], none, none)
    assert same.dtype == bool and same.size == 0 and p.size == 0


def test_pairs_asked_for_are_returned_whatever_their_q(con):
    """The household test of linked pairs reads their behaviour-only fields: ``also`` returns those pairs (with
    their own figures, the same as among every pair) even where no pair's q is small enough to keep."""
    fp = idf.style_fingerprints(con)
    every = idf.behaviour_pairs(con, fp)
    asked = every.sort("p_solo", descending=True).head(3).select("a", "b")
    got = idf.behaviour_pairs(con, fp, keep_q=0.0, also=asked)
    assert got.select("a", "b").sort("a", "b").equals(asked.sort("a", "b"))
    same = got.join(every, on=["a", "b"], suffix="_all")
    assert (same["p_seated"] == same["p_seated_all"]).all() and (same["q_solo"] == same["q_solo_all"]).all()
