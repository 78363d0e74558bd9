"""Does a chat line speak of cards or hands? A text model and the rules it is compared with.

:func:`card_talk_model` fits scikit-learn's character n-gram TF-IDF (within
word boundaries, 1-4 characters, lower-cased: ranks written "AK", "ak",
"A-K", words in any script) and a logistic regression on the detector's own
grammar (:mod:`detectors.hand_chat.grammar`), never on the lines judged.
:func:`card_talk_rules` is the rule list it was measured against (a
two-rank token, a rank word or hand name, a verb of play, outs, a read on
the opponent); docs/measurements.md has both on the worlds' chat.
"""

from __future__ import annotations

import functools

import numpy as np
import polars as pl
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from detectors.hand_chat.grammar import training_set


@functools.lru_cache(maxsize=4)
def card_talk_model(random_state: int = 0, n: int = 3000) -> Pipeline:
    """A fitted pipeline (TF-IDF of character 1-4-grams, logistic regression, C=4) whose
    ``predict_proba(texts)[:, 1]`` is the probability that each text is card talk. Fitted once per
    process and arguments (cached): callers only read it."""
    texts, labels = training_set(n, random_state)
    model = Pipeline([
        ("tfidf", TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), lowercase=True, sublinear_tf=True,
                                  min_df=2)),
        ("lr", LogisticRegression(C=4.0, max_iter=2000, random_state=random_state)),
    ])
    return model.fit(texts, labels)


_RULES = (
    r"(?i)(?:^|[^\w])(?:[AKQJT2-9]{2}[so]?|10|pocket|pair|set|trips|flush|straight|draw|outs?|nuts?|fold|call|"
    r"shove|all.?in|has|have|had|ace|king|queen|jack|"
    r"hat|hatte|ass|könig|dame|bube|tiene|tenia|as|rey|jota|tem|tinha|rei|valete|"
    r"у него|у меня|туз|король|дама|валет|пара|фолд|колл|аут\w*|флеш)(?:$|[^\w])"
)


def card_talk_rules(texts: list[str]) -> np.ndarray:
    """1.0 where a text matches one of the card-talk rules (see the module docstring), else 0.0."""
    return pl.Series(texts, dtype=pl.String).fill_null("").str.contains(_RULES).cast(pl.Float64).to_numpy()


__all__ = ["card_talk_model", "card_talk_rules"]
