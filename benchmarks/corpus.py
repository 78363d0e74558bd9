"""A large benchmark corpus from the real hand histories: the shared corpus repeated under new hand ids.

Each copy prefixes every header's ``#<id>`` with its copy number, so copies
are new hands to the loader, not duplicates. Used by ``parse_bench.py`` and
``ingest_bench.py``.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("RAILBIRD_CORPORA") or ROOT.parent / "shared" / "corpora") / "pokerstars"
# a header at a line start, or glued to the end of a line (a hand cut short) and followed by its table line
HEADER = re.compile(r"(?:^|(?<=[^\n])(?=PokerStars (?:Hand|Game) #\d+: [^\n]* - \d{4}/[^\n]*\n[ \t]*Table '))"
                    r"(PokerStars (?:[A-Za-z]+ )*?(?:Hand|Game) #)(\d+)", re.M)


def replicate(folder: Path, want: int) -> tuple[list[Path], int]:
    """Write copies of the corpus's hand files with fresh hand ids until ``want`` headers exist.

    Files are dated an hour back, so the loader takes them as finished, not growing.
    Returns the files written and the number of hand headers in them.
    """
    from pipelines.lib.handhistory import decode_bytes

    sources = []
    for p in sorted(CORPUS.rglob("*.txt")):
        text = decode_bytes(p.read_bytes())
        n = len(HEADER.findall(text))
        if n:
            sources.append((text, n))
    per_copy = sum(n for _, n in sources)
    copies = -(-want // per_copy)
    files, total = [], 0
    old = time.time() - 3600
    for k in range(copies):
        d = folder / f"copy{k:03d}"
        d.mkdir(parents=True)
        for i, (text, n) in enumerate(sources):
            out = d / f"{i:04d}.txt"
            out.write_text(HEADER.sub(lambda m: f"{m.group(1)}{k + 1}{m.group(2)}", text), encoding="utf-8")
            os.utime(out, (old, old))
            files.append(out)
            total += n
    return files, total
