"""The text model's training data: a small grammar of card talk and of chat that is not.

Written apart from any world (``datasets/`` plants its own chat with its own
phrases): the model learns what card talk looks like from these templates
alone, never from the lines it will judge. Card talk names ranks, suits and
hands as players write them ("AQ", "KJs", "T9o", "pair of 8s", "big slick",
"Dame Bube", "пара валетов"), reads an opponent ("villain is weak", "tiene
color"), counts outs or tells a move ("muck it", "shove"), in English,
German, Spanish, Portuguese, Russian, French and Italian. The rest is what
tables say otherwise: greetings, thanks, laughter, emoji, complaints, small
talk.
"""

from __future__ import annotations

import random

RANKS = "AKQJT98765432"

_WORDS = {
    "en": ["ace", "king", "queen", "jack", "ten", "nine", "eight", "seven", "six", "five", "four", "trey", "deuce"],
    "de": ["As", "König", "Dame", "Bube", "Zehner", "Neuner", "Achter", "Siebener", "Sechser", "Fünfer", "Vierer",
           "Dreier", "Zweier"],
    "es": ["as", "rey", "dama", "jota", "diez", "nueve", "ocho", "siete", "seis", "cinco", "cuatro", "tres", "dos"],
    "pt": ["ás", "rei", "dama", "valete", "dez", "nove", "oito", "sete", "seis", "cinco", "quatro", "três", "dois"],
    "ru": ["туз", "король", "дама", "валет", "десятка", "девятка", "восьмерка", "семерка", "шестерка", "пятерка",
           "четверка", "тройка", "двойка"],
    "fr": ["as", "roi", "dame", "valet", "dix", "neuf", "huit", "sept", "six", "cinq", "quatre", "trois", "deux"],
    "it": ["asso", "re", "donna", "fante", "dieci", "nove", "otto", "sette", "sei", "cinque", "quattro", "tre", "due"],
}
_PAIRS = {"en": ["pair of {w}s", "{w}s", "pocket {w}s", "two {w}s"], "de": ["Paar {w}", "zwei {w}"],
          "es": ["pareja de {w}", "doble {w}"], "pt": ["par de {w}", "dupla de {w}"], "ru": ["пара {w}", "две {w}"],
          "fr": ["paire de {w}"], "it": ["coppia di {w}"]}
_CARD_TALK = {
    "en": ["{h}", "i got {h}", "dumped {h}", "my {h} was no good", "villain has {h}", "he holds {h}", "{h} here",
           "laid down {h}", "he's got the nuts", "he has trips", "he is weak, shove", "nothing there, bet",
           "straight draw", "he's drawing to the flush", "{n} outs for him", "only {n} outs", "go all in he has air",
           "muck it", "don't call", "he has a set", "two pair for him", "top pair weak kicker", "he's got a gutshot",
           "shove now", "he missed his draw", "i'd fold {h} here", "he flopped two pair", "overpair", "he's on {h}"],
    "de": ["ich hatte {h}", "{h} weg", "der hat {h}", "er ist schwach", "der hat nix, setz", "er hat ein Set",
           "Flush Draw bei ihm", "{n} Outs", "weglegen", "nicht callen", "er hat die Nuts", "schieb all in",
           "er hat Trips", "Straßendraw"],
    "es": ["llevaba {h}", "tire {h}", "el tiene {h}", "esta debil", "no lleva nada, apuesta", "tiene trio",
           "va a color", "{n} outs", "tirala", "no pagues", "tiene las nuts", "all in ya", "tiene escalera"],
    "pt": ["eu tinha {h}", "joguei fora {h}", "ele tem {h}", "ele ta fraco", "não paga", "ele tem trinca",
           "{n} outs", "vai de all in", "ele tem flush"],
    "ru": ["у меня было {h}", "скинул {h}", "у него {h}", "он слабый", "у него пусто, ставь", "у него сет",
           "он тянет флеш", "{n} аутов", "скидывай", "не колли", "у него натсы", "пуш", "у него две пары"],
    "fr": ["j'avais {h}", "il a {h}", "il est faible", "il a rien, mise", "tirage couleur", "{n} outs", "couche",
           "il a un brelan", "tapis"],
    "it": ["avevo {h}", "lui ha {h}", "è debole", "non ha niente", "progetto colore", "{n} outs", "passa",
           "ha un tris"],
}
_NOT_CARD_TALK = [
    "hi", "hey guys", "hello everyone", "good luck", "gl everyone", "gg", "ty", "thx", "thanks", "nice one", "nh",
    "vnh", "lol", "lmao", "haha", "hahaha", "rofl", "omg", "wow", "sick", "ugh", "grr", "nooo", "yes!", "sure",
    "ok", "k", "brb", "back", "bbl", "gotta go", "gn", "good night", "morning", "whats up", "where you from",
    "canada", "germany here", "how are you", "fine thanks", "this site is rigged", "so slow tonight", "hurry up",
    "time bank again", "wp", "well played", "donk", "fish", "nice river", "unlucky", "sorry", "np", "ty sir",
    "gl all", "cya", "bye", "good game", "weekend finally", "beer time", "coffee", ":)", ":(", ":D", "xD", "<3",
    "😂", "👍", "🙂", "😡", "🍀", "🔥", "😭", "hallo zusammen", "viel glück", "danke", "tschüss", "gute nacht",
    "schönen abend", "hola a todos", "buenas", "suerte", "gracias", "jajaja", "adios", "buenas noches",
    "olá", "obrigado", "boa noite", "kkkkk", "valeu", "привет всем", "удачи", "спасибо", "пока", "ахахах",
    "всем привет", "bonjour", "merci", "bonne chance", "ciao a tutti", "grazie", "buona fortuna", "salut",
    "nice stack", "big pot", "see you tomorrow", "tilted", "im done", "last hand", "one more table",
    "anyone watching the game", "football tonight", "what a day", "my internet sucks", "lag", "sorry lag",
]


_SYLLABLES = ["ba", "be", "lo", "mu", "ri", "sa", "te", "vo", "xe", "zu", "ch", "sch", "ny", "ka", "pi", "ol",
              "um", "ek", "ar", "ti", "wo", "gu", "he", "fi", "ро", "ла", "ми", "да", "ну", "ко"]


def _hand(rng: random.Random, lang: str) -> str:
    """Two ranks as one of the ways players write them."""
    i, j = sorted(rng.sample(range(13), 2)) if rng.random() < 0.8 else (rng.randrange(13),) * 2
    words = _WORDS[lang]
    if i == j:
        return rng.choice([RANKS[i] * 2, rng.choice(_PAIRS[lang]).format(w=words[i])])
    r = rng.random()
    if r < 0.35:
        return RANKS[i] + RANKS[j] + rng.choice(["", "", "s", "o"])
    if r < 0.5:
        return (RANKS[i] + RANKS[j]).lower() if rng.random() < 0.5 else f"{RANKS[i]}-{RANKS[j]}"
    if r < 0.6 and lang == "en":
        return rng.choice(["big slick", "cowboys", "ducks", "rockets", "hooks", "ladies", "snowmen"])
    return f"{words[i]} {words[j]}"


def training_set(n: int = 3000, random_state: int = 0) -> tuple[list[str], list[int]]:
    """``n`` card-talk lines (label 1) and ``n`` other lines (label 0), drawn from the grammar.

    Other lines are the table's small talk, sometimes two joined, sometimes
    with a number that is not a card ("back in 5", "3rd table")."""
    rng = random.Random(random_state)
    texts, labels = [], []
    langs = list(_CARD_TALK)
    for _ in range(n):
        lang = rng.choice(langs)
        t = rng.choice(_CARD_TALK[lang]).format(h=_hand(rng, lang), n=rng.choice([2, 3, 4, 6, 8, 9, 11, 14, 15]))
        texts.append(t.upper() if rng.random() < 0.1 else t)
        labels.append(1)
    for _ in range(n):
        r = rng.random()
        t = rng.choice(_NOT_CARD_TALK)
        if r < 0.2:
            t = f"{t} {rng.choice(_NOT_CARD_TALK)}"
        elif r < 0.4:  # a word the grammar does not know (a name, slang, a typo) is not card talk by itself
            t = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 3)))
            if rng.random() < 0.3:
                t = f"{t} {rng.choice(_NOT_CARD_TALK)}"
        elif r < 0.5:
            t = rng.choice([f"back in {rng.randint(2, 15)}", f"{rng.randint(2, 9)} tables", f"{rng.randint(1, 23)}:00 here",
                            f"lvl {rng.randint(2, 20)}", f"{rng.randint(10, 99)} min"])
        texts.append(t.upper() if rng.random() < 0.1 else t)
        labels.append(0)
    return texts, labels


__all__ = ["training_set"]
