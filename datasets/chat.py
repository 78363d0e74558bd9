"""Table chat: the room's banter and planted chat about a hand in play.

Method. Chat is added to a played :class:`~datasets.records.HandRecord` just
before it is written, as ``NAME said, "..."`` lines at their position among
the action lines (``HandRecord.extra_lines``: after action ``seq``; ``-1``
before the first post, i.e. between hands; a large number after the last
action, i.e. after the hand is over). Every draw comes from the chat's own
stream (``derive_seed(seed, "chat", chunk)``), and chat changes no decision,
stack or card: the hands, actions and platform events of a seed are those it
gives without chat.

Planted ``hand_chat`` groups (:func:`plant_chatters`) are pairs (*chatter*,
*partner*) of persons in no other group, drawn from a stream of their own
after the other kinds' groups. In a hand the partner is dealt in, the chatter
either sits at the table and has folded, or watches the partner's table
(rail): with probability ``strength`` the chatter tells the partner about the
hand while it is in play, right before one of the partner's decisions with at
least one other player still in the hand (the one the chat harms). What is
said is card talk in the chatter's language (English, German, Spanish,
Portuguese, Russian): the chatter's own folded cards ("folded AK", "hatte
Buben"), a read on the opponent ("he has nothing", "у него ничего"), a
draw and its outs, "fold"/"call". Explicitness rises with strength: a weak
group also sends vague lines ("careful", "hmm") that name no card.

Honest confounders, each at a rate drawn by ``--world-seed`` from
:data:`RANGES` (:func:`draw_chat_params`): banter during hands ("gl", "nh",
"lol", "ty", emoji, greetings); talk about the hand just finished, after its
last action (allowed); chat between hands, before the posts (allowed, card
talk included); card talk in play that no partner could use (a player in a
heads-up pot talking to the opponent, a folded player to a random table, a
watcher railing strangers); a few chatty players who do all of this ten
times as often.

Truth: a group's label ``hands`` are the hands in which a planted line was
sent (``sink.hit``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields

from datasets.cards import RANKS

KIND = "hand_chat"

#: --world-seed ranges of the chat mechanisms (low, high), drawn uniformly
RANGES: dict[str, tuple[float, float]] = {
    "banter_rate": (0.02, 0.06),        # hands with a line of banter while in play
    "post_rate": (0.01, 0.04),          # hands with talk about the hand after its last action
    "between_rate": (0.01, 0.03),       # hands with chat before the posts (between hands)
    "loose_talk_rate": (0.002, 0.008),  # hands with card talk in play no partner can use
    "chatty_share": (0.01, 0.04),       # players who chat ten times as often
    "rail_share": (0.3, 0.7),           # planted chatters' opportunities watched from the rail (not seated)
}


@dataclass(frozen=True)
class ChatParams:
    """The rates of the chat mechanisms (defaults: the middle of :data:`RANGES`)."""

    banter_rate: float = 0.04
    post_rate: float = 0.025
    between_rate: float = 0.02
    loose_talk_rate: float = 0.005
    chatty_share: float = 0.02
    rail_share: float = 0.5


def draw_chat_params(world_seed: int | None) -> ChatParams:
    """The chat rates of world ``world_seed``, each uniform in :data:`RANGES` (None: the defaults)."""
    if world_seed is None:
        return ChatParams()
    from datasets.population import derive_seed

    rng = random.Random(derive_seed(world_seed, "chat-params"))
    return ChatParams(**{f.name: rng.uniform(*RANGES[f.name]) for f in fields(ChatParams)})


# ---------------------------------------------------------------------------- the words people write
_RANK_WORD = {
    "en": dict(zip("AKQJT98765432", ["ace", "king", "queen", "jack", "ten", "nine", "eight", "seven", "six", "five",
                                     "four", "three", "deuce"])),
    "de": dict(zip("AKQJT", ["Ass", "König", "Dame", "Bube", "Zehn"])),
    "es": dict(zip("AKQJT", ["as", "rey", "reina", "jota", "diez"])),
    "pt": dict(zip("AKQJT", ["ás", "rei", "dama", "valete", "dez"])),
    "ru": dict(zip("AKQJT", ["туз", "король", "дама", "валет", "десятка"])),
}
_PAIR_WORD = {"en": "pocket {r}s", "de": "ein Paar {r}", "es": "par de {r}", "pt": "par de {r}", "ru": "пара {r}"}
_FOLDED = {
    "en": ["folded {h}", "i had {h}", "had {h} lol", "mucked {h}", "threw away {h}"],
    "de": ["hatte {h}", "{h} weggeworfen", "hab {h} gefoldet"],
    "es": ["tenia {h}", "tire {h}", "yo tenia {h}"],
    "pt": ["eu tinha {h}", "larguei {h}"],
    "ru": ["у меня был {h}", "сбросил {h}", "я скинул {h}"],
}
_READ = {
    "en": ["he has nothing", "he's bluffing", "he has {h}", "call he has air", "fold he has it", "he's on a flush draw",
           "he has {n} outs", "fold", "just call", "raise him, weak", "he has top pair", "he missed"],
    "de": ["er hat nichts", "er blufft", "er hat {h}", "fold", "call, er hat nix", "er hat einen Flushdraw",
           "er hat {n} Outs"],
    "es": ["no tiene nada", "esta faroleando", "tiene {h}", "foldea", "paga, no tiene nada", "tiene proyecto de color",
           "tiene {n} outs"],
    "pt": ["ele não tem nada", "ele tem {h}", "fold", "paga, ele blefa", "ele tem {n} outs"],
    "ru": ["у него ничего", "он блефует", "у него {h}", "фолд", "колл, у него ничего", "у него флеш дро",
           "у него {n} аутов"],
}
_VAGUE = {"en": ["careful", "hmm", "watch out", "easy"], "de": ["vorsicht", "hmm"], "es": ["cuidado", "ojo"],
          "pt": ["cuidado", "hmm"], "ru": ["осторожно", "хм"]}
_BANTER = {
    "en": ["gl", "gl all", "nh", "lol", "ty", "haha", "gg", "hi all", "hello", "wp", "omg", "brb", "😂", "👍", "🙂",
           "lucky", "sick", "nice one", ":D", "whats up", "morning all", "ugh", "so slow"],
    "de": ["hallo", "servus", "gl", "lol", "danke", "nh", "moin", "😂", "geil"],
    "es": ["hola", "jaja", "suerte", "gracias", "buena mano", "jajaja", "👍"],
    "pt": ["oi", "kkkk", "boa sorte", "valeu", "bh"],
    "ru": ["привет", "гл", "спс", "лол", "ахах", "нх", "😂"],
}
_POST = {
    "en": ["nh, i had {h}", "had {h} too", "how did you call with {h}", "folded {h} preflop lol", "nice {h}",
           "you had {h}??", "would have hit my flush", "i had the nut draw"],
    "de": ["nh, hatte {h}", "hatte auch {h}", "wie kannst du mit {h} callen"],
    "es": ["bh, tenia {h}", "con {h}? jaja", "yo tenia {h}"],
    "pt": ["bh, eu tinha {h}", "com {h}? kkkk"],
    "ru": ["нх, у меня был {h}", "с {h}? лол"],
}
_HEADS_UP_TALK = {
    "en": ["i have a monster", "you have nothing", "i have {h}", "nice bluff", "i know you have {h}"],
    "de": ["ich hab {h}", "du hast nichts"], "es": ["tengo {h}", "no tienes nada"], "pt": ["tenho {h}"],
    "ru": ["у меня {h}", "у тебя ничего"],
}
_LANG_OF_COUNTRY = {"DE": "de", "AT": "de", "MX": "es", "AR": "es", "BR": "pt", "PT": "pt"}


def _hand_words(rng: random.Random, lang: str, cards: list[int] | None) -> str:
    """Two cards as people write them: 'AK', 'AKs', 'ace king', 'pocket 7s', '77', 'Ass König'..."""
    if cards and len(cards) >= 2:
        r1, r2 = sorted((RANKS[cards[0] >> 2], RANKS[cards[1] >> 2]), key=RANKS.index, reverse=True)
        suited = (cards[0] & 3) == (cards[1] & 3)
    else:
        r1, r2 = sorted(rng.sample(RANKS, 2), key=RANKS.index, reverse=True)
        suited = rng.random() < 0.25
    words = _RANK_WORD.get(lang, _RANK_WORD["en"])
    if r1 == r2:
        forms = [r1 + r2, _PAIR_WORD[lang].format(r=words.get(r1, r1)), f"{r1}{r1}"]
        if lang == "en":
            forms.append(f"pocket {r1}s")
        return rng.choice(forms)
    forms = [r1 + r2, r1 + r2 + ("s" if suited else "o"), f"{r1}{r2}".lower()]
    if r1 in words and r2 in words:
        forms.append(f"{words[r1]} {words[r2]}")
    return rng.choice(forms)


def _say(rng: random.Random, table: dict[str, list[str]], lang: str, cards=None) -> str:
    t = rng.choice(table.get(lang) or table["en"])
    return t.format(h=_hand_words(rng, lang, cards), n=rng.choice([2, 4, 6, 8, 9, 12, 15]))


def sample_lines(n: int, seed: int = 0) -> tuple[list[str], list[int]]:
    """``n`` lines the world writes that speak of cards (label 1: planted, post-hand and loose card talk) and ``n``
    that do not (label 0: banter and the vague lines), in the world's languages: the reference a text model is
    measured on (``benchmarks/hand_chat_text.py``), never trained on."""
    rng = random.Random(seed)
    texts, labels = [], []
    for tables, label in (((_FOLDED, _READ, _POST, _HEADS_UP_TALK), 1), ((_BANTER, _BANTER, _VAGUE), 0)):
        for _ in range(n):
            texts.append(_say(rng, rng.choice(tables), rng.choice(list(_READ))))
            labels.append(label)
    return texts, labels


def plant_chatters(pop, groups: list, count: int, strength: tuple[float, float], seed: int) -> list:
    """``count`` hand-chat groups (chatter, partner) among the persons in no group of ``groups``.

    Drawn from ``Random(derive_seed(seed, "chat-groups"))``, changing no person: the other groups,
    the seating and the play are what they are without them. Partners are cash players (who sit
    down most often); strengths spread evenly over ``strength`` as :func:`datasets.collusion.plant_groups`.
    Returns the :class:`~datasets.collusion.Group` list (ids ``c1``, ``c2``...)."""
    from datasets.collusion import Group
    from datasets.population import derive_seed

    rng = random.Random(derive_seed(seed, "chat-groups"))
    taken = {pid for g in groups for pid in g.pids}
    free = [p for p in pop.persons if p.pid not in taken and p.household is None and p.accounts]
    cash = sorted((p for p in free if p.favourite == "cash"), key=lambda p: -p.activity)[:max(40, 4 * count)]
    lo, hi = strength
    strengths = [lo + (hi - lo) * (i / (count - 1) if count > 1 else 1.0) for i in range(count)]
    rng.shuffle(strengths)
    out = []
    for k in range(count):
        if not cash:
            break
        partner = cash.pop(rng.randrange(len(cash)))
        free.remove(partner)
        rest = [p for p in free if p not in cash] or cash
        chatter = rest.pop(rng.randrange(len(rest)))
        free.remove(chatter)
        if chatter in cash:
            cash.remove(chatter)
        a, b = chatter.accounts[0], partner.accounts[0]
        out.append(Group(f"c{k + 1}", KIND, [a, b], round(strengths[k], 3), pids=[chatter.pid, partner.pid],
                         roles={a: "chatter", b: "partner"}, venue="cash"))
    return out


@dataclass
class ChatPlan:
    """What the writer needs: the rates, the planted groups, each account's language and the chatty."""

    params: ChatParams
    groups: list
    lang: dict
    chatty: frozenset
    accounts: tuple


def plan_chat(pop, groups: list, params: ChatParams, seed: int) -> ChatPlan:
    """Each account's language (its person's country; one in ten writes Russian) and the chatty players,
    from ``Random(derive_seed(seed, "chat-plan"))``; ``groups`` the hand-chat groups only."""
    from datasets.population import derive_seed

    rng = random.Random(derive_seed(seed, "chat-plan"))
    lang, chatty = {}, set()
    for name in sorted(pop.accounts):
        country = pop.persons[pop.accounts[name].pid].country
        lang[name] = "ru" if rng.random() < 0.1 else _LANG_OF_COUNTRY.get(country, "en")
        if rng.random() < params.chatty_share:
            chatty.add(name)
    return ChatPlan(params, [g for g in groups if g.kind == KIND], lang, frozenset(chatty), tuple(sorted(pop.accounts)))


class ChatWriter:
    """Adds a hand's chat to its ``extra_lines`` before it is written (one per chunk, its own stream)."""

    LATE = 10**6  # extra_lines position after the last action

    def __init__(self, plan: ChatPlan, rng: random.Random):
        self.plan, self.rng = plan, rng
        self.by_partner: dict[str, list] = {}
        for g in plan.groups:
            self.by_partner.setdefault(g.accounts[1], []).append(g)

    def _line(self, player: str, text: str) -> str:
        return f'{player} said, "{text}"'

    def __call__(self, rec, start_ms: int, sink) -> None:
        """Add the chat of ``rec`` (planted lines call ``sink.hit``)."""
        rng, P = self.rng, self.plan.params
        dealt = list(rec.dealt)
        if len(dealt) < 2:
            return
        decisions = [a for a in rec.actions if a.kind in ("fold", "check", "call", "bet", "raise")]
        if not decisions:
            return
        lang = self.plan.lang
        tid = rec.tournament.tournament_id if rec.tournament else None
        folded_at: dict[str, int] = {a.player: a.seq for a in decisions if a.kind == "fold"}
        last = decisions[-1].seq

        def boost(p):
            return 10.0 if p in self.plan.chatty else 1.0

        def active_before(seq):
            return [p for p in dealt if folded_at.get(p, 10**9) >= seq]

        # planted: the chatter tells the partner about the hand, before one of the partner's decisions
        for partner in dealt:
            for g in self.by_partner.get(partner, ()):
                chatter = g.accounts[0]
                seated = chatter in dealt
                if not seated and rng.random() >= P.rail_share:
                    continue
                spots = [a for a in decisions if a.player == partner and a.seq > decisions[0].seq
                         and len([p for p in active_before(a.seq) if p != chatter]) >= 2
                         and (not seated or folded_at.get(chatter, 10**9) < a.seq)]
                if not spots or rng.random() >= g.strength:
                    continue
                at = rng.choice(spots)
                prev = max(s.seq for s in rec.actions if s.seq < at.seq)
                cards = rec.hole.get(chatter) if seated else None
                if rng.random() < 0.5 * (1.0 - g.strength):
                    text = _say(rng, _VAGUE, lang.get(chatter, "en"))
                    rec.extra_lines.append((prev, self._line(chatter, text)))
                text = _say(rng, _FOLDED if cards and rng.random() < 0.5 else _READ, lang.get(chatter, "en"), cards)
                rec.extra_lines.append((prev, self._line(chatter, text)))
                sink.hit(g.gid, rec.hand_id, start_ms, tid)
        self._honest(rec, dealt, decisions, folded_at, last, boost, active_before)

    def _honest(self, rec, dealt, decisions, folded_at, last, boost, active_before) -> None:
        """The confounders: banter in play, post-hand talk, between-hand chat, card talk no partner can use."""
        rng, P, lang = self.rng, self.plan.params, self.plan.lang
        speaker = rng.choice(dealt)
        b = boost(speaker)
        if rng.random() < P.banter_rate * b:  # banter while the hand is in play
            at = rng.choice(decisions)
            rec.extra_lines.append((at.seq, self._line(speaker, _say(rng, _BANTER, lang.get(speaker, "en")))))
        if rng.random() < P.post_rate * b:  # about the hand just finished: after its last action
            cards = rec.hole.get(speaker)
            rec.extra_lines.append((self.LATE, self._line(speaker, _say(rng, _POST, lang.get(speaker, "en"), cards))))
        if rng.random() < P.between_rate * b:  # between hands: before the posts
            table = _POST if rng.random() < 0.3 else _BANTER
            rec.extra_lines.append((-1, self._line(speaker, _say(rng, table, lang.get(speaker, "en")))))
        if rng.random() < P.loose_talk_rate * b:
            self._loose_talk(rec, dealt, decisions, folded_at, active_before)

    def _loose_talk(self, rec, dealt, decisions, folded_at, active_before) -> None:
        """Card talk in play that no partner can use: to the opponent heads-up, a folded player's own
        cards at a random table, a watcher railing strangers."""
        rng, lang = self.rng, self.plan.lang
        mode = rng.random()
        if mode < 0.4:  # heads-up: the only listener still in the hand is the opponent
            spots = [a for a in decisions if len(active_before(a.seq)) == 2 and a.player in active_before(a.seq)]
            if spots:
                at = rng.choice(spots)
                who = [p for p in active_before(at.seq) if p != at.player][0]
                rec.extra_lines.append((at.seq, self._line(who, _say(rng, _HEADS_UP_TALK, lang.get(who, "en"),
                                                                      rec.hole.get(who)))))
        elif mode < 0.75:  # a folded player names the cards it folded, to nobody in particular
            folders = [(p, s) for p, s in folded_at.items() if s < decisions[-1].seq]
            if folders:
                p, s = rng.choice(folders)
                rec.extra_lines.append((s, self._line(p, _say(rng, _FOLDED, lang.get(p, "en"), rec.hole.get(p)))))
        else:  # a watcher (an account not at the table) reads the hand aloud
            watcher = rng.choice(self.plan.accounts)
            if watcher not in {s.player for s in rec.seats}:
                at = rng.choice(decisions)
                rec.extra_lines.append((at.seq, self._line(watcher, _say(rng, _READ, lang.get(watcher, "en")))))


__all__ = ["KIND", "RANGES", "ChatParams", "ChatPlan", "ChatWriter", "draw_chat_params", "plan_chat", "plant_chatters",
           "sample_lines"]


def plan_world_chat(pop, groups: list, mix: dict, strength: tuple[float, float], seed: int,
                    world_seed: int | None) -> ChatPlan | None:
    """The world's table chat and its hand-chat groups, from streams of their own, where the mix names
    :data:`KIND` (``--mix hand_chat=5``; ``=0``: the chat with no planted pair); None otherwise (no chat
    at all, so populations without it keep their files).

    Parameters
    ----------
    pop, groups : the population and the collusion groups planned so far (chatters are appended to them).
    mix : collusion groups per kind.
    strength : the preset's range of group strengths.
    seed, world_seed : the population's seed and the world seed drawing the chat's parameters.
    """
    if KIND not in mix:
        return None
    chatters = plant_chatters(pop, groups, mix[KIND], strength, seed)
    return plan_chat(pop, chatters, draw_chat_params(world_seed), seed)
