"""The identity side of a hand-off: how foreign the device that took the seat is, ranked among this population's
own mid-event device changes.

A helper brings a machine of his own: it takes the account's seat in mid-event and never starts play of its own
on the account, and it arrives on a network the account had not used, often a home-sized one. An owner's own
moves (a phone left for the desktop, a habitual switcher's laptop, a carrier's or a cafe's network shared by
many) show some of these signs too, and how often is what this population's own switches say. Each switch device
(an account and a device that took one of its seats mid-event, tested or not) gets the count of foreign signs:

* ``takeover_only``: the device never starts play of its own on the account (a login outside every span of its
  tournament play);
* ``new_net``: one of its take-over logins came from a network the account had never used before;
* ``home_net``: that network is home-sized (at most ``household_max`` accounts ever used it).

A candidate's identity p-value is the share of the population's switch devices with at least as many signs,
its own device among them, (#{devices with signs >= its}) / N: the Monte Carlo p-value of a rank among the
population's own draws (Davison & Hinkley, *Bootstrap Methods and their Application*, 1997, ch. 4), valid when
under the null the candidate's device is one more of the population's owner moves; a switch with no sign has
p = 1. It is combined with the play's p-value by Fisher's method (what device took the seat says nothing of how
the owner plays on it). Its resolution is 1 / N: with a few dozen switches in a population it supports a play
shift, it never flags alone.
"""

from __future__ import annotations

import numpy as np
import polars as pl


def identity_p(cand: pl.DataFrame, household_max: int) -> pl.DataFrame:
    """The identity p-value of each switch device of the population.

    Parameters
    ----------
    cand : every candidate login (``account``, ``device``, ``device_changed``, ``dev_own_sessions``, ``new_net``,
        ``net_accounts``): the population's mid-event switches, tested or not.
    household_max : a home-sized network: at most this many accounts ever used it.

    Returns
    -------
    One row per (``account``, ``device``) that took a seat mid-event from another device: ``id_takeover_only``,
    ``id_new_net``, ``id_home_net``, ``id_signs`` (their count), ``id_n`` (the switch devices ranked among) and
    ``p_identity``."""
    schema = {"account": pl.Utf8, "device": pl.Utf8, "id_takeover_only": pl.Boolean, "id_new_net": pl.Boolean,
              "id_home_net": pl.Boolean, "id_signs": pl.Int64, "id_n": pl.Int64, "p_identity": pl.Float64}
    sw = cand.filter(pl.col("device_changed").fill_null(False) & pl.col("device").is_not_null())
    if sw.height == 0:
        return pl.DataFrame(schema=schema)
    new_net = pl.col("new_net").fill_null(False)
    dev = sw.group_by("account", "device").agg(
        id_takeover_only=(pl.col("dev_own_sessions").fill_null(0) == 0).all(),
        id_new_net=new_net.any(),
        id_home_net=(new_net & (pl.col("net_accounts").fill_null(household_max + 1) <= household_max)).any(),
    ).with_columns(id_signs=pl.sum_horizontal(pl.col("id_takeover_only", "id_new_net", "id_home_net").cast(pl.Int64)))
    s = dev["id_signs"].to_numpy()
    ranked = np.sort(s)
    at_least = ranked.size - np.searchsorted(ranked, s, side="left")
    p = np.where(s > 0, at_least / ranked.size, 1.0)
    return dev.with_columns(id_n=pl.lit(int(ranked.size), dtype=pl.Int64), p_identity=pl.Series(p)).select(list(schema))
