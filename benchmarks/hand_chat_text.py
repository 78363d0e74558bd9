"""Card talk or not: the hand_chat detector's text model against its rules, on the world's chat.

Prints, for the TF-IDF model (fitted on the detector's own grammar) and the rule list, the share of the
world's card-talk lines called card talk (recall) and the share of its banter called card talk (false
positives), and the seconds to fit and to read the lines. The world's lines (``datasets.chat.sample_lines``)
are written apart from the detector's grammar: this is the measure of how the model carries over.

    .venv/bin/python benchmarks/hand_chat_text.py --n 2000 --seed 5
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from datasets.chat import sample_lines
from detectors.hand_chat.text import card_talk_model, card_talk_rules


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="lines of each class (default 2000)")
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    texts, labels = sample_lines(args.n, args.seed)
    y = np.array(labels) == 1
    t0 = time.perf_counter()
    model = card_talk_model(0)
    fit_s = time.perf_counter() - t0
    for name, read in (("tfidf+logistic", lambda x: model.predict_proba(x)[:, 1]), ("rules", card_talk_rules)):
        t0 = time.perf_counter()
        p = read(texts) >= 0.5
        s = time.perf_counter() - t0
        print(f"{name:16s} recall {p[y].mean():.3f}  false positives {p[~y].mean():.3f}  read {s:.2f} s"
              + (f"  fit {fit_s:.2f} s" if name != "rules" else ""))


if __name__ == "__main__":
    main()
