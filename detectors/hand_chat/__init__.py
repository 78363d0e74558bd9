"""Hand chat: chat about a hand while it is in play, helping a partner still in it.

House rules 000 rule 19 ("players are prohibited from chatting about the
play of their and/or their opponents' hands until all actions for that hand
are complete") and 003 ("any action or chat intended to help another player
is unethical and is prohibited").

Method
------
1. *Placing*: each chat line is placed before the decision it preceded
   (:mod:`detectors.hand_chat.lines`); it is in play after the hole cards and
   before the hand's last decision. Chat between hands and after the last
   decision is allowed and never counted.
2. *Reading*: a scikit-learn text model, TF-IDF of character 1-4-grams and a
   logistic regression, fitted on the detector's own grammar of card talk and
   table small talk in seven languages (:mod:`detectors.hand_chat.grammar`,
   :mod:`detectors.hand_chat.text`; never on the lines judged), says whether a
   line speaks of cards or hands; a rule list is kept beside it
   (``text_model="rules"``) and the two are compared in docs/measurements.md.
3. *Who could use it*: a card-talk line in play is usable by each player
   still in the hand other than its speaker, when at least two are (one to be
   helped, one to be harmed); heads-up talk reaches only the opponent.
4. *Testing*: for each ordered pair (chatter, partner), the hands with usable
   card talk among the hands both were present in (dealt in, or watching and
   chatting) against the chatter's own rate in its other hands, under an
   empirical-Bayes beta prior centred on the room's rate (beta-binomial tail,
   conditioned on the pair having a line at all); Benjamini-Hochberg over the
   pairs; flagged iff q <= alpha in at least ``min_hands`` hands.

Benign look-alikes considered: banter (not card talk), talk after the hand
and between hands (not in play), heads-up needling (no partner in the hand),
chatty players (their own rate), a watcher reading strangers' hands (one line
per pair). References: Salton & Buckley, "Term-weighting approaches in
automatic text retrieval", IP&M 1988 (TF-IDF); Benjamini & Hochberg, JRSS B
1995.
"""

from detectors.hand_chat.detector import CHAT_SQL, HandChatDetector
from detectors.hand_chat.lines import CHAT_LINES_SQL, chat_lines, listeners
from detectors.hand_chat.text import card_talk_model, card_talk_rules

__all__ = ["CHAT_LINES_SQL", "CHAT_SQL", "HandChatDetector", "card_talk_model", "card_talk_rules", "chat_lines",
           "listeners"]
