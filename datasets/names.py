"""Account names as real rooms have them: mostly plain, a share hostile to parsers and pages.

Method. The world is first drawn with plain screen names
(:class:`datasets.population.NameMaker`: letters, digits, ``_`` and ``.``).
:func:`dress_names` then gives each account, from a random stream of its own,
the name a real room would show: with probability :data:`DRESSED_SHARE` the
plain name is rewritten in one of the forms of :data:`FORMS` (drawn by its
weight), else it stays as it is. Because the names come from their own stream
and the world's seeds are keyed by the plain name
(:meth:`datasets.units.World.key`), a seed's persons, groups and hands are
the same with or without dressing, but for the names.

The forms follow what real hand histories hold (issue 31: a real player
whose name begins with a double quote stopped the nightly run): quotes
(leading, trailing, inside, single and double), backslashes, brackets,
colons and ``": "`` inside a name, ``#$%&<>``, runs of spaces and trailing
spaces, accents, non-Latin scripts, emoji (with variation selectors and
zero-width joiners), one-character names and names of 30 and more
characters, and names that read as the hand-history format's own words
(``Seat 1:``, ``folds``, ``said,``, ``*** FLOP ***``, ``Total pot``).

Names never hold a line break or a tab, never start with a space and are
unique after case folding, trimming and collapsing of spaces (a room would not
let ``Bob`` and ``bob `` both register).
"""

from __future__ import annotations

import random
import re
import unicodedata

# Share of accounts whose name is dressed (the rest keep the plain name).
DRESSED_SHARE = 0.25

# Words of the PokerStars text format (inputs.md), used as names or inside names.
FORMAT_WORDS = (
    "Seat 1:", "Seat 9:", "folds", "checks", "calls", "bets", "raises", "said,", "*** FLOP ***",
    "*** SUMMARY ***", "Total pot", "Dealt to", "and is all-in", "collected", "is sitting out",
    "has timed out", "shows", "mucks", "(button)", "Uncalled bet", "Board", "posts small blind",
    "leaves the table", "is connected", "(1500 in chips)", "wins the pot", "Rake 0",
)

_ACCENTED = ("José", "Müller", "Ångström", "Łukasz", "Çağrı", "Søren", "Nuñez", "François", "Dvořák", "Zoë",
             "Ólafur", "Ştefan", "Đorđe", "Grüße")
_SCRIPTS = ("Игрок", "Покерист", "玩家", "扑克之王", "ポーカー", "たなか", "لاعب", "محمد", "Παίκτης", "खिलाड़ी",
            "포커왕", "שחקן", "ผู้เล่น", "Ჯონი", "Ճանապարհ")
_EMOJI = ("🂡", "♠️", "♥", "💰", "😀", "🔥", "🐟", "🦈", "👑", "🍀", "👨‍👩‍👧", "🏳️‍🌈", "🇧🇷", "🎲")
_LONG_WORDS = ("TheRealSlimShady", "NeverFoldPocketAces", "ChampionOfTheUniverse", "MonteCarloSimulation",
               "xXx_DarkKnight_xXx", "GrandmasterFlashAndTheFurious5")


def _quote(plain: str, r: random.Random) -> str:
    q = r.choice(['"', "'", '""', "`"])
    where = r.random()
    if where < 0.35:
        return q + plain
    if where < 0.6:
        return plain + q
    if where < 0.8:
        return q + plain + q
    i = r.randrange(1, len(plain)) if len(plain) > 1 else 1
    return plain[:i] + q + plain[i:]


def _backslash(plain: str, r: random.Random) -> str:
    return r.choice([plain + "\\", "\\" + plain, "C:\\" + plain, plain[:2] + "\\\\" + plain[2:], "\\n" + plain,
                     plain + '\\"'])


def _bracket(plain: str, r: random.Random) -> str:
    return r.choice(["[" + plain + "]", "[TAG]" + plain, plain + "(2)", "(" + plain, plain + ")", "{" + plain + "}",
                     plain + " [AhKd]", "<" + plain + ">", plain + "]["])


def _colon(plain: str, r: random.Random) -> str:
    return r.choice([plain + ":", plain + ": " + str(r.randint(1, 99)), "mr: " + plain, plain + "::" + plain[:2],
                     ":" + plain, plain + " : x", "re:" + plain])


def _symbol(plain: str, r: random.Random) -> str:
    s = r.choice(["#", "$", "%", "&", "<", ">", "$$", "#1", "100%", "&amp;", "<b>", "</td>", "R&D", "<3", "${x}"])
    return r.choice([s + plain, plain + s, plain[:2] + s + plain[2:]])


def _spaces(plain: str, r: random.Random) -> str:
    i = r.randrange(1, len(plain)) if len(plain) > 1 else 1
    return r.choice([plain[:i] + "  " + plain[i:], plain + " ", plain + "   ", plain[:i] + "   " + plain[i:] + " ",
                     plain[:i] + " " + plain[i:]])


def _accent(plain: str, r: random.Random) -> str:
    w = r.choice(_ACCENTED)
    return r.choice([w, w + str(r.randint(1, 999)), w + "_" + plain, plain + w.lower()])


def _script(plain: str, r: random.Random) -> str:
    w = r.choice(_SCRIPTS)
    return r.choice([w, w + str(r.randint(1, 99)), w + " " + plain, plain + w])


def _emoji(plain: str, r: random.Random) -> str:
    e = r.choice(_EMOJI)
    return r.choice([e + plain, plain + e, e * r.randint(1, 3), plain + " " + e, e + " " + plain + " " + e])


def _short(plain: str, r: random.Random) -> str:
    return r.choice([plain[0], plain[:2], r.choice("abcxyzQZ7"), r.choice(_EMOJI[:6]), r.choice("é字ж")])


def _long(plain: str, r: random.Random) -> str:
    name = r.choice(_LONG_WORDS) + "_" + plain
    while len(name) < r.randint(30, 44):
        name += r.choice(_LONG_WORDS)
    return name[:r.randint(30, 50)]


def _format_word(plain: str, r: random.Random) -> str:
    w = r.choice(FORMAT_WORDS)
    return r.choice([w, w, w + " " + plain[:4], plain + " " + w, w + str(r.randint(2, 9))])


# form: (weight, rewrite of a plain name)
FORMS = {
    "quote": (14, _quote),
    "backslash": (7, _backslash),
    "bracket": (8, _bracket),
    "colon": (9, _colon),
    "symbol": (8, _symbol),
    "spaces": (10, _spaces),
    "accent": (10, _accent),
    "script": (10, _script),
    "emoji": (9, _emoji),
    "short": (4, _short),
    "long": (5, _long),
    "format_word": (12, _format_word),
}

_BAD = re.compile(r"[\r\n\t\x00-\x1f\x7f\u2028\u2029\x85]")


def name_key(name: str) -> str:
    """What two names must not share to both exist: case-folded, trimmed, spaces collapsed, NFC."""
    return " ".join(unicodedata.normalize("NFC", name).casefold().split())


def dress_names(plain: list[str], rng: random.Random, share: float = DRESSED_SHARE) -> dict[str, str]:
    """Map each plain name to the name the room shows (itself for most of them).

    Parameters: ``plain``, the plain names in a fixed order; ``rng``, a
    stream used for nothing else; ``share``, the probability a name is
    rewritten. Returns ``{plain: shown}``, one-to-one. A rewrite that is
    empty, holds a control character, starts with a space or collides with
    a name already taken (see :func:`name_key`) is drawn again, up to a few
    times, then the plain name is kept.
    """
    names, weights = list(FORMS), [FORMS[f][0] for f in FORMS]
    taken = {name_key(p) for p in plain}
    out: dict[str, str] = {}
    for p in plain:
        shown = p
        if rng.random() < share:
            for _ in range(8):
                form = rng.choices(names, weights=weights)[0]
                cand = unicodedata.normalize("NFC", FORMS[form][1](p, rng))
                key = name_key(cand)
                if cand and not cand[0].isspace() and not _BAD.search(cand) and key and key not in taken:
                    taken.add(key)
                    shown = cand
                    break
        out[p] = shown
    return out


__all__ = ["DRESSED_SHARE", "FORMS", "FORMAT_WORDS", "dress_names", "name_key"]
