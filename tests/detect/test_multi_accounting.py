"""MultiAccountingDetector on a planted warehouse: one person with three
accounts is found with the identifiers and tournaments that bind them;
housemates, a family card and a carrier NAT crowd are not flagged."""

from __future__ import annotations

import numpy as np
import pytest
from test_identity_features_world import Style, World, at

from detectors import get_detector
from detectors.multi_accounting import MultiAccountingDetector

PERSON = ["m1", "m2", "m3"]


@pytest.fixture(scope="module")
def world():
    w = World(seed=21)
    names = [f"h{i:02d}" for i in range(57)] + PERSON
    for n in names:
        w.account(n, payment=f"card-{n}")
    me = Style(vpip=0.24, pfr=0.19, aggr=0.66, size=0.72, log_ms=7.4, sd_ms=0.35)
    for n in PERSON:
        w.styles[n] = me
    # one person: home IP, a desktop for m1/m2, a phone for m3 that m1 also used
    w.session("m1", "84.10.20.30", "desk-M", at(-200), at(-100))
    w.session("m2", "84.10.20.30", "desk-M", at(-90), at(-10))
    w.session("m3", "84.10.20.30", "phone-M", at(-5), at(900))
    w.session("m1", "84.10.20.30", "desk-M", at(-4), at(900))
    w.session("m2", "84.10.20.30", "desk-M", at(-3), at(900))
    w.session("m1", "151.3.3.3", "phone-M", at(1000), at(1100))
    # housemates h01/h02 (and h03, who shares the family card with h02)
    for n, dev in (("h01", "pc-1"), ("h02", "pc-2"), ("h03", "pc-3")):
        w.session(n, "77.7.7.7", dev, at(-5), at(900))
    w.rows["accounts"] = [r if r[0] != "h03" else (r[0], r[1], r[2], "card-h02", None) for r in w.rows["accounts"]]
    # a carrier-NAT crowd: 30 phones on one address
    for n in names[10:40]:
        w.session(n, "100.64.9.9", f"ph-{n}", at(-5), at(900))
    for i, n in enumerate(names[40:57]):
        w.session(n, f"62.{i}.1.1", f"pc-{n}", at(-5), at(900))
    rng = np.random.default_rng(5)
    honest = [n for n in names if n not in PERSON]
    for t in range(14):
        players = rng.choice(honest, 25, replace=False).tolist()
        if t < 10:
            players += PERSON
        w.tournament(str(700 + t), players, at(60 * t), n_hands=45)
    return w


@pytest.fixture(scope="module")
def signals(world):
    con = world.build()
    out = MultiAccountingDetector().detect(con)
    con.close()
    return out


def test_registered_under_its_kind():
    assert isinstance(get_detector("multi_accounting"), MultiAccountingDetector)


def test_one_person_found_as_one_case(signals):
    flagged = [s for s in signals if s.flagged]
    assert [sorted(s.accounts) for s in flagged] == [PERSON]
    case = flagged[0]
    assert case.kind == "multi_accounting"
    assert case.tournaments == [str(700 + t) for t in range(10)]
    names = {e.name for e in case.evidence}
    assert {"shared device", "shared ip", "style likeness", "decision-time likeness"} <= names
    dev = {e.text.split()[1]: e.n for e in case.evidence if e.name == "shared device"}
    assert dev == {"desk-M": 2, "phone-M": 2}
    assert all(e.sql for e in case.evidence)
    assert case.hands, "hands where two of the accounts sat together"
    assert "Housemates" in case.benign
    assert case.p_value is not None and case.p_value < 0.01


def test_honest_look_alikes_not_flagged(signals):
    flagged_accounts = {a for s in signals if s.flagged for a in s.accounts}
    assert flagged_accounts.isdisjoint({"h01", "h02", "h03"})  # housemates + family card
    assert flagged_accounts.isdisjoint({f"h{i:02d}" for i in range(10, 40)})  # carrier NAT
    # the housemates are considered (a candidate), just not flagged
    house = [s for s in signals if set(s.accounts) <= {"h01", "h02", "h03"}]
    assert house and not any(s.flagged for s in house)


@pytest.fixture(scope="module")
def sng_world():
    """Sit-and-gos only, hand histories only: the person's three accounts sit
    down together in 12 of 60 nine-seat events (every fifth); everyone else
    enters at random."""
    w = World(seed=22)
    names = [f"h{i:02d}" for i in range(57)] + PERSON
    for n in names:
        w.account(n)
    me = Style(vpip=0.24, pfr=0.19, aggr=0.66, size=0.72, log_ms=7.4, sd_ms=0.35)
    for n in PERSON:
        w.styles[n] = me
    rng = np.random.default_rng(6)
    honest = [n for n in names if n not in PERSON]
    for t in range(60):
        mine = t % 5 == 0
        players = rng.choice(honest, 6 if mine else 9, replace=False).tolist() + (PERSON if mine else [])
        w.tournament(str(900 + t), players, at(30 * t), n_hands=30)
    return w


def test_hands_only_population_still_runs_and_says_what_it_lacked(sng_world):
    con = sng_world.build(drop_events=True)
    con.execute("UPDATE accounts SET payment = NULL")
    sigs = MultiAccountingDetector().detect(con)
    con.close()
    assert sigs
    for s in sigs:
        assert "device and IP links (no sessions)" in s.missing
        assert "decision-time likeness (no decisions)" in s.missing
    # no identifier at all: the three accounts stand out on co-entries and style
    top = [s for s in sigs if s.flagged]
    assert [sorted(s.accounts) for s in top] == [PERSON]
    assert not any(e.name.startswith("shared") for e in top[0].evidence)
    assert top[0].tournaments == [str(900 + t) for t in range(0, 60, 5)]


def test_hands_only_with_payment_hashes_still_uses_co_entries(sng_world):
    """Hand histories plus the accounts file (payment hashes, as an operator exports it) but
    no sessions: the card links only a family (h01 and h02 share one); the person pays with
    a card per account, so the co-entries and style must still find the three accounts.
    (Candidates were the payment links alone whenever any account had a card: the person
    was never even tested.)"""
    con = sng_world.build(drop_events=True)
    con.execute("UPDATE accounts SET payment = 'card-' || account")
    con.execute("UPDATE accounts SET payment = 'card-family' WHERE account IN ('h01', 'h02')")
    det = MultiAccountingDetector()
    sigs = det.detect(con)
    pairs = det.flag(det.score(con))
    con.close()
    for s in sigs:
        assert "device and IP links (no sessions)" in s.missing
        assert "payment links (no payment hashes)" not in s.missing
    top = [s for s in sigs if s.flagged]
    assert [sorted(s.accounts) for s in top] == [PERSON]
    # the family card is tested too (a candidate), and not enough alone
    fam = pairs.filter((pairs["a"] == "h01") & (pairs["b"] == "h02"))
    assert fam.height == 1 and not fam["pair_flagged"][0]


def _scored(monkeypatch, rows):
    """The detector and its score frame on given per-pair evidence (identity links, p-values), the warehouse
    feature steps replaced by the rows themselves."""
    import polars as pl

    from detectors.features import identity as idf

    base = {"w_device": 0.0, "w_payment": 0.0, "w_ip": 0.0, "w_net": 0.0, "idf_device": 0.0, "idf_payment": 0.0,
            "min_share": 2, "n_shared": 1, "weight": 1.0, "p_style": float("nan"), "p_timing": float("nan"),
            "p_coentry": float("nan"), "shared_tournaments": [], "device_overlap_s": 0.0}
    frame = pl.DataFrame([{**base, **r} for r in rows])
    det = MultiAccountingDetector()
    det.fingerprints_, det.window_ = None, None
    monkeypatch.setattr(det, "_candidates", lambda con: frame.drop("p_style", "p_timing", "p_coentry", "shared_tournaments",
                                                                   "device_overlap_s"))
    monkeypatch.setattr(idf, "likeness", lambda fp, cand, **kw: cand.join(frame.select("a", "b", "p_style", "p_timing"), on=["a", "b"]))
    monkeypatch.setattr(idf, "usage_patterns", lambda con, p: p.join(
        frame.select("a", "b", "p_coentry", "shared_tournaments", "device_overlap_s"), on=["a", "b"]))
    return det, det.score(None)


def _decide(monkeypatch, rows):
    """Each pair's flag on given per-pair evidence (:func:`_scored`)."""
    det, scores = _scored(monkeypatch, rows)
    return {(r["a"], r["b"]): r["pair_flagged"] for r in det.flag(scores).iter_rows(named=True)}


def _cases(monkeypatch, rows):
    """The cases of ``threshold`` on given per-pair evidence, in the queue's order (evaluation.ranking_key)."""
    from pipelines.lib.evaluation import ranking_key

    det, scores = _scored(monkeypatch, rows)
    return sorted(det.threshold(scores).to_dicts(), key=ranking_key, reverse=True)


def test_a_case_that_fails_a_condition_of_the_flag_ranks_below_the_flagged(monkeypatch):
    """Friends at one address who enter the same events (co-entry p 1e-9) but play and click nothing alike: one
    signal agrees, the flag needs two, so they are no case of one person; their combined p-value (1e-9 through
    co-entry alone) is far below the flagged multi-accounter's (device, style and timing agreeing moderately). The
    queue's order and its line are one thing: the friends' rate is above alpha and they rank below every flagged
    case (before, their q of 1e-7 put them first)."""
    ln2 = float(np.log(300 / 2))
    rows = [
        {"a": "f1", "b": "f2", "w_ip": 5.0, "w_net": 5.0, "p_style": 0.99, "p_timing": 0.5, "p_coentry": 1e-9},
        {"a": "m1", "b": "m2", "w_ip": 5.0, "w_net": 5.0, "w_device": ln2, "idf_device": ln2,
         "p_style": 0.08, "p_timing": 0.03, "p_coentry": 0.3},
    ] + [{"a": f"x{i:02d}", "b": f"y{i:02d}", "w_net": 1.0, "min_share": 3, "p_style": 0.2 + 0.1 * i,
          "p_timing": 0.9 - 0.1 * i, "p_coentry": 1.0} for i in range(6)]
    cases = _cases(monkeypatch, rows)
    order = [(tuple(c["accounts"]), c["flagged"]) for c in cases]
    assert order[0] == (("m1", "m2"), True), order
    friends = next(c for c in cases if set(c["accounts"]) == {"f1", "f2"})
    assert not friends["flagged"] and friends["q_value"] > 0.05
    assert cases[0]["q_value"] <= 0.05


def test_household_with_family_card_and_chance_agreements_not_flagged(monkeypatch):
    """Housemates: one home network, a family card, own devices (none shared),
    online at once, no event entered together; their style agrees by chance
    (p 0.04), and in the second household timing too (p 0.06): the card is a
    family's, not one person's, so neither is flagged (the old rule, with the
    card inside the tested p-value, flagged the second), while a multi-accounter
    (a shared device, a similar style and timing, events entered together) is."""
    ln2 = float(np.log(300 / 2))
    rng = np.random.default_rng(3)
    rows = [
        # household 1: network + card, one chance agreement (style)
        {"a": "hA", "b": "hB", "w_ip": 5.0, "w_net": 5.0, "w_payment": ln2, "idf_payment": ln2,
         "p_style": 0.04, "p_timing": 0.5, "p_coentry": 1.0},
        # household 2: network + card, style and timing both agree by chance
        {"a": "hC", "b": "hD", "w_ip": 5.0, "w_net": 5.0, "w_payment": ln2, "idf_payment": ln2,
         "p_style": 0.04, "p_timing": 0.06, "p_coentry": 1.0},
        # one person on two accounts: a shared device (and home), like play
        {"a": "m1", "b": "m2", "w_ip": 5.0, "w_net": 5.0, "w_device": ln2, "idf_device": ln2,
         "p_style": 0.08, "p_timing": 0.03, "p_coentry": 0.02},
    ] + [  # unrelated address-sharers (a café): behaviour at chance
        {"a": f"x{i:02d}", "b": f"y{i:02d}", "w_net": 1.0, "min_share": 3,
         "p_style": float(rng.uniform()), "p_timing": float(rng.uniform()), "p_coentry": 1.0}
        for i in range(6)
    ]
    flags = _decide(monkeypatch, rows)
    assert not flags[("hA", "hB")]
    assert not flags[("hC", "hD")]
    assert flags[("m1", "m2")]


def test_household_flagged_only_on_strong_combined_behaviour(monkeypatch):
    """No shared device, but the behaviour alone says one person (style, timing
    and co-entry combined at p 1e-9, among three household-shaped pairs): still flagged."""
    ln2 = float(np.log(300 / 2))
    rows = [
        {"a": "hA", "b": "hB", "w_ip": 5.0, "w_net": 5.0, "w_payment": ln2, "idf_payment": ln2,
         "p_style": 0.002, "p_timing": 0.004, "p_coentry": 1e-4},
        {"a": "x1", "b": "y1", "w_net": 1.0, "min_share": 3, "p_style": 0.6, "p_timing": 0.3, "p_coentry": 1.0},
        {"a": "x2", "b": "y2", "w_net": 1.0, "min_share": 3, "p_style": 0.8, "p_timing": 0.7, "p_coentry": 1.0},
    ]
    assert _decide(monkeypatch, rows)[("hA", "hB")]


def test_device_and_card_held_by_two_accounts_alone_are_two_signals(monkeypatch):
    """One person whose second account plays its own game (style and timing at
    chance, no event entered together) but logs in from the person's device
    and pays with the person's card, neither used by anyone else: flagged (the
    device and the card are two identifiers no household shares both of). A
    shared device alone with chance behaviour (a café machine), and a family
    card beside a home address (own devices), are not."""
    ln2 = float(np.log(300 / 2))
    rows = [
        {"a": "m1", "b": "m2", "w_ip": 5.0, "w_net": 5.0, "w_device": ln2, "idf_device": ln2,
         "w_payment": ln2, "idf_payment": ln2, "p_style": 0.17, "p_timing": 0.12, "p_coentry": 0.27},
        {"a": "c1", "b": "c2", "w_device": ln2, "idf_device": ln2,
         "p_style": 0.3, "p_timing": 0.4, "p_coentry": 0.5},
        {"a": "hA", "b": "hB", "w_ip": 5.0, "w_net": 5.0, "w_payment": ln2, "idf_payment": ln2,
         "p_style": 0.3, "p_timing": 0.06, "p_coentry": 1.0},
    ] + [
        {"a": f"x{i:02d}", "b": f"y{i:02d}", "w_net": 1.0, "min_share": 3,
         "p_style": 0.2 + 0.1 * i, "p_timing": 0.9 - 0.1 * i, "p_coentry": 1.0}
        for i in range(6)
    ]
    flags = _decide(monkeypatch, rows)
    assert flags[("m1", "m2")]
    assert not flags[("c1", "c2")]
    assert not flags[("hA", "hB")]


def test_device_used_by_both_accounts_at_once_is_a_second_signal(monkeypatch):
    """One person with the second account's own game (style and timing at chance) and a VPN
    address, but both accounts online on one device, held by these two alone, at once for
    40 minutes: flagged (one machine, two accounts at the same time). The honest look-alikes
    are not: housemates taking turns at a family computer (the device and the home address
    shared, never online on it at once), and a device two accounts used at once for two
    minutes only (a log-out recorded late)."""
    ln2 = float(np.log(600 / 2))
    dev = {"w_device": ln2, "idf_device": ln2, "p_style": 0.18, "p_timing": 0.3, "p_coentry": 0.13}
    rows = [
        {"a": "m1", "b": "m2", **dev, "device_overlap_s": 2400.0},
        {"a": "f1", "b": "f2", **dev, "w_ip": 5.0, "w_net": 5.0},
        {"a": "l1", "b": "l2", **dev, "device_overlap_s": 120.0},
    ] + [
        {"a": f"x{i:02d}", "b": f"y{i:02d}", "w_net": 1.0, "min_share": 3,
         "p_style": 0.2 + 0.1 * i, "p_timing": 0.9 - 0.1 * i, "p_coentry": 1.0}
        for i in range(6)
    ]
    flags = _decide(monkeypatch, rows)
    assert flags == {("m1", "m2"): True, ("f1", "f2"): False, ("l1", "l2"): False,
                     **{(f"x{i:02d}", f"y{i:02d}"): False for i in range(6)}}


def test_household_behaviour_judged_across_all_household_pairs(monkeypatch):
    """A household-shaped pair (home address, own devices) whose combined behaviour reaches
    p 8e-4 is flagged when it is one of three such pairs, but not among a hundred honest
    household pairs, where one reaches p ~ 1/100 by chance (BH over the household family),
    even beside ten multi-accounters found; a pair at p 1e-6 is flagged among them too."""
    def household(a, b, p_style, p_timing=float("nan")):
        return {"a": a, "b": b, "w_ip": 5.0, "w_net": 5.0, "p_style": p_style, "p_timing": p_timing}

    # style and timing each at 0.0088: combined (Fisher) p 8.1e-4, q 2.4e-3 among the three household pairs
    few = [household("hA", "hB", 0.0088, 0.0088), household("x1", "y1", 0.5), household("x2", "y2", 0.9)]
    assert _decide(monkeypatch, few)[("hA", "hB")]
    # ... and ten multi-accounters (a shared device, like play) whose discoveries would
    # otherwise lend the BH over all candidates the room to let a chance household through
    ln2 = float(np.log(600 / 2))
    crowd = [household(f"x{i:02d}", f"y{i:02d}", (i + 1) / 101) for i in range(100)] + [
        {"a": f"m{i}", "b": f"n{i}", "w_device": ln2, "idf_device": ln2, "p_style": 1e-3, "p_timing": 1e-3,
         "p_coentry": 1e-3} for i in range(10)]
    flags = _decide(monkeypatch, [household("hA", "hB", 0.0088, 0.0088)] + crowd)
    assert not flags[("hA", "hB")]
    assert not any(flags[(f"x{i:02d}", f"y{i:02d}")] for i in range(100))
    assert all(flags[(f"m{i}", f"n{i}")] for i in range(10))
    # style and timing each at 2.5e-4: combined p 1.1e-6
    assert _decide(monkeypatch, [household("mA", "mB", 2.5e-4, 2.5e-4)] + crowd)[("mA", "mB")]


def test_device_used_at_once_named_among_the_signals(signals):
    """m1 and m2 are online on desk-M at the same time; m1 and m3 used phone-M only at
    different times: the case's edges say so."""
    case = next(s for s in signals if s.flagged)
    edges = {(e["a"], e["b"]): e["signals"] for e in case.extra["edges"]}
    assert "device at once" in edges[("m1", "m2")]
    assert "device at once" not in edges[("m1", "m3")]


def test_household_line_follows_the_number_of_household_pairs(monkeypatch):
    """One person on two accounts behind one home address, each with its own device, whose style, timing and
    co-entry each agree (p 0.05, 0.02, 0.03: combined p 2.0e-3), among thirteen household-shaped pairs of a
    smaller room (honest housemates at chance): q 0.026 within that family, flagged, and the case says the figures.
    The old rule also asked combined p <= 1e-3 whatever the family's size (a constant fitted where households
    were a hundred) and left such a person under the line; among a hundred honest households the same pair is
    still not flagged (q 0.2)."""
    def household(a, b, p_style, p_timing, p_coentry=1.0):
        return {"a": a, "b": b, "w_ip": 5.0, "w_net": 5.0, "p_style": p_style, "p_timing": p_timing,
                "p_coentry": p_coentry}

    person = household("hA", "hB", 0.05, 0.02, 0.03)
    rng = np.random.default_rng(11)
    few = [household(f"x{i:02d}", f"y{i:02d}", float(rng.uniform(0.1, 1)), float(rng.uniform(0.1, 1)))
           for i in range(12)]
    assert _decide(monkeypatch, [person] + few)[("hA", "hB")]
    det, scores = _scored(monkeypatch, [person] + few)
    row = scores.filter((scores["a"] == "hA")).row(0, named=True)
    assert row["p_conduct"] == pytest.approx(2.0e-3, rel=0.05)
    assert row["n_household"] == 13 and row["q_household"] <= 0.05
    case = next(c for c in det.threshold(scores).to_dicts() if c["flagged"])
    text = det._benign(case, row, ["ip", "net"])
    assert "13 household-shaped pairs" in text and f"q {row['q_household']:.2g}" in text
    crowd = [household(f"x{i:02d}", f"y{i:02d}", (i + 1) / 101, 1.0) for i in range(100)]
    assert not _decide(monkeypatch, [person] + crowd)[("hA", "hB")]


def test_household_pair_at_one_table_and_opened_together_is_one_person(monkeypatch):
    """One person on two accounts behind one home address, each with its own device: style and timing agree
    (p 0.03 each, co-entry 0.3), the two accounts were dealt into more hands together than any other of the 26
    household-shaped pairs (60: share of the family 1/26) and were opened close together (``p_opened`` 0.04). The
    household test reads those two facts, which housemates do not share: combined p 1.1e-3, q 0.03 among the
    households, flagged. The old test read style, timing and co-entry alone (combined p 0.012, q 0.3) and left the
    person under the line. Housemates who sit at one table (a couple at one game, 40 hands) but play and click
    nothing alike are not flagged on that alone; the table is ranked among the households, not among all pairs."""
    def household(a, b, p_style, p_timing, p_coentry=1.0, hands=0.0, p_opened=0.5):
        return {"a": a, "b": b, "w_ip": 5.0, "w_net": 5.0, "p_style": p_style, "p_timing": p_timing,
                "p_coentry": p_coentry, "hands_together": hands, "p_opened": p_opened}

    rng = np.random.default_rng(5)
    honest = [household(f"x{i:02d}", f"y{i:02d}", float(rng.uniform(0.1, 1)), float(rng.uniform(0.1, 1)),
                        p_opened=float(rng.uniform(0.05, 1))) for i in range(24)]
    couple = household("cA", "cB", 0.6, 0.7, hands=40.0)
    person = household("hA", "hB", 0.03, 0.03, p_coentry=0.3, hands=60.0, p_opened=0.04)
    flags = _decide(monkeypatch, [person, couple] + honest)
    assert flags[("hA", "hB")]
    assert not flags[("cA", "cB")]
    assert not any(flags[(f"x{i:02d}", f"y{i:02d}")] for i in range(24))
    det, scores = _scored(monkeypatch, [person, couple] + honest)
    row = scores.filter(scores["a"] == "hA").row(0, named=True)
    assert row["p_seated_household"] == pytest.approx(1 / 26)
    assert row["p_conduct"] == pytest.approx(1.1e-3, rel=0.1)
