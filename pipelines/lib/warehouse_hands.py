"""Loading hands: dedupe on hand_id against the stored hands and earlier copies (new, duplicate,
conflict), the child rows of new hands only, tournaments merged (see :mod:`pipelines.lib.warehouse`)."""
from __future__ import annotations

import re

import polars as pl

from pipelines.lib.handhistory import _BATCH_BYTES as PIECE_BYTES
from pipelines.lib.handhistory import file_path, parse_texts
from pipelines.lib.handhistory.pieces import text_pieces
from pipelines.lib.landing_read import Refused, open_landing
from pipelines.lib.handhistory.lines import HEADER_RE
from pipelines.lib.warehouse_batch import CHILD_TABLES, Batch, LoadResult, _first_per_key
from pipelines.lib.warehouse_stage import _insert, _Stage, table_columns


class _RawText:
    """Cuts hands' raw text out of their source files (for conflicts and re-parsing).

    A file is read as ingest reads it (:func:`open_landing`: a link or another file put in its place since it was
    parsed is not followed; ``handhistory.pieces.text_pieces``: in pieces cut at hand headers, with their line
    numbers), and only the pieces that hold an asked-for hand are split into lines: memory is bounded by a
    piece, never by the file. Line numbers count ``\\n`` as the parser does."""

    def __init__(self, piece_bytes: int = PIECE_BYTES) -> None:
        self.piece_bytes = piece_bytes

    def hands(self, wanted: list[tuple[str, int]]) -> list[str]:
        """The raw text of each (source file, first line) of ``wanted``, in order: from its header line to the
        line before the next header, trailing blank lines dropped; ``""`` where the file cannot be read (again)
        or holds no such line. One pass over each file named."""
        found: dict[tuple[str, int], str] = {}
        by_file: dict[str, set[int]] = {}
        for source_file, line in wanted:
            by_file.setdefault(source_file, set()).add(int(line))
        for source_file, lines in by_file.items():
            found.update(((source_file, n), text) for n, text in self._cut(source_file, lines).items())
        return [found.get((f, int(n)), "") for f, n in wanted]

    def hand(self, source_file: str, line: int) -> str:
        """The raw text of the hand that starts at ``line`` of ``source_file`` (:meth:`hands`)."""
        return self.hands([(source_file, line)])[0]

    def _cut(self, source_file: str, wanted: set[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        try:
            with open_landing(file_path(source_file), None, None) as fh:
                for text, before, _ in text_pieces(fh, self.piece_bytes):
                    count = text.count("\n") + 1
                    here = sorted(n for n in wanted if before < n <= before + count)
                    if not here:
                        continue
                    lines = text.split("\n")
                    for n in here:
                        out[n] = _hand_at(lines, n - before - 1)
                    if len(out) == len(wanted):
                        break
        except (OSError, Refused):
            pass
        return out


def _hand_at(lines: list[str], i: int) -> str:
    """The hand that starts at ``lines[i]``: up to the next header line, trailing blank lines dropped."""
    out = [lines[i]]
    for text in lines[i + 1:]:
        if _is_header(text):
            break
        out.append(text)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


_HEADER = re.compile(HEADER_RE)


def _is_header(line: str) -> bool:
    """A hand header line, by the parser's own grammar."""
    return _HEADER.match(line.lstrip("\ufeff")) is not None


# ---------------------------------------------------------------- hands


def _classify_hands(con, hands: pl.DataFrame, stage: "_Stage | None" = None) -> pl.DataFrame:
    """Add ``_status`` ∈ new / duplicate / conflict and ``_copies`` to the incoming hands."""
    h = hands.with_row_index("_ord").with_columns(
        pl.col("content_hash").first().over("hand_id", order_by="_ord").alias("_first_hash"),
        pl.col("_ord").rank("ordinal").over("hand_id").alias("_occ"),
        pl.len().over("hand_id").alias("_copies"),
    )
    con.register("_railbird_ids", h.select("hand_id").unique())
    try:
        stored = con.sql(
            "SELECT s.hand_id, s.content_hash AS _stored_hash FROM hands s JOIN _railbird_ids USING (hand_id)"
        ).pl()
        staged = stage.stored_hashes(con, "_railbird_ids") if stage is not None else None
        if staged is not None and staged.height:
            stored = pl.concat([stored, staged], how="vertical_relaxed")
    finally:
        con.unregister("_railbird_ids")
    h = h.join(stored, on="hand_id", how="left")
    return h.with_columns(
        pl.when(pl.col("_stored_hash").is_not_null())
        .then(pl.when(pl.col("_stored_hash") == pl.col("content_hash")).then(pl.lit("duplicate")).otherwise(pl.lit("conflict")))
        .when(pl.col("_occ") == 1).then(pl.lit("new"))
        .when(pl.col("content_hash") == pl.col("_first_hash")).then(pl.lit("duplicate"))
        .otherwise(pl.lit("conflict"))
        .alias("_status")
    )


def _reparse_children(texts: list[str], names: list[str]) -> dict[str, pl.DataFrame]:
    """Parse, alone, the first copy of each new hand that a batch held several times.

    All those hand texts go through the parser in one batch; each text holds
    one hand, so the child rows of a hand_id are exactly that copy's.
    """
    if not texts:
        return {}
    parsed = parse_texts(texts, names)
    return {name: df for name, df in parsed.tables.items() if df.height}


class _Reparse:
    """The run's hands whose child rows come from parsing their first copy alone, parsed once before ``COMMIT``.

    Why once per run: the parser is one vectorised pass of ~600 Polars
    operations whatever its input, ~0.35 CPU-s even for the handful of hand
    texts a batch of the real corpus re-parses (~6 per 17,000 hands: a hand
    whose copies in the batch differ).  Re-parsing them batch by batch cost
    ~20 µs per hand of the whole load (load alone, 96,852 replicated hands:
    2.1 of 9.6 CPU-s); one call for the run costs that once.  Each batch cuts
    its hands' texts from the source files while it holds them decoded
    (:class:`_RawText`) and remembers which batch it was.

    The hand-keyed child rows of those hands cannot collide with any other
    rows (their hands are new to the warehouse and to the run), so inserting
    them at the end changes nothing.  ``tournament_finishes`` is keyed by
    (tournament, player) and keeps the first row seen, so its rows are held
    here for the whole run, in the order the batch-by-batch load gave them
    (each batch's own rows, then its re-parsed hands' rows), and inserted in
    that order at the end: the same row wins as before.
    """

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.names: list[str] = []
        self.part_of: list[pl.DataFrame] = []  # hand_id -> the batch number its text came from
        self.finishes: list[tuple[tuple[int, int], pl.DataFrame]] = []  # ((batch, 0 own | 1 re-parsed), rows)
        self.part = -1

    def add(self, new_multi: pl.DataFrame, raw: _RawText) -> None:
        """Cut the text of the first copy of each hand of ``new_multi`` (rows: hand_id, source_file, source_line)."""
        ids = []
        rows = new_multi.select("hand_id", "source_file", "source_line").rows()
        texts = raw.hands([(f, int(line)) for _, f, line in rows])
        for (hand_id, source_file, _), text in zip(rows, texts):
            if text:
                self.texts.append(text + "\n")
                self.names.append(source_file)
                ids.append(hand_id)
        if ids:
            self.part_of.append(pl.DataFrame({"hand_id": ids, "_part": [self.part] * len(ids)},
                                             schema={"hand_id": pl.String, "_part": pl.Int64}))

    def flush(self, con, stage: "_Stage | None", result: "LoadResult") -> None:
        """Parse the held texts in one call and insert their child rows; then the run's tournament finishes."""
        parsed = _reparse_children(self.texts, self.names) if self.texts else {}
        ids = pl.concat(self.part_of) if self.part_of else None
        for name, key in CHILD_TABLES.items():
            rows = parsed.get(name)
            if rows is None or rows.height == 0 or ids is None:
                continue
            rows = rows.join(ids.select("hand_id"), on="hand_id", how="semi")
            if key and key[0] != "hand_id":
                parts = rows.join(ids, on="hand_id", how="inner")
                for part in parts.get_column("_part").unique().sort().to_list():
                    self.finishes.append(((part, 1), parts.filter(pl.col("_part") == part).drop("_part")))
                continue
            if key:
                rows = _first_per_key(rows, list(key))
            n = stage.add(con, name, rows) if stage is not None else _insert(con, name, rows)
            result.rows[name] = result.rows.get(name, 0) + n
        if self.finishes:
            rows = pl.concat([df for _, df in sorted(self.finishes, key=lambda x: x[0])], how="diagonal_relaxed")
            rows = _first_per_key(rows, list(CHILD_TABLES["tournament_finishes"]))
            n = _insert(con, "tournament_finishes", rows, conflict="ON CONFLICT DO NOTHING")
            result.rows["tournament_finishes"] = result.rows.get("tournament_finishes", 0) + n
        self.__init__()


def _one_copy_rows(batch: Batch, same: pl.DataFrame) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """One copy's child rows of the hands a batch holds ``_c`` times with the same content.

    Copies with one ``content_hash`` have the same lines, so the parser gives
    each copy the same rows: every distinct row occurs a multiple of ``_c``
    times, and keeping ``count / _c`` of each gives exactly one copy's rows
    without parsing the hand again.  A hand where some row count is not a
    multiple of ``_c`` (its copies parsed differently, e.g. a line-numbered
    row) is returned in the second frame and re-parsed from its first copy.
    """
    out: dict[str, pl.DataFrame] = {}
    uneven = [same.select("hand_id").clear()]
    for name in CHILD_TABLES:
        df = batch.tables.get(name)
        if df is None or df.height == 0:
            continue
        cols = df.columns
        m = df.join(same, on="hand_id", how="inner").with_columns(
            pl.len().over(cols).alias("_n"), pl.int_range(pl.len()).over(cols).alias("_i"))
        uneven.append(m.filter(pl.col("_n") % pl.col("_c") != 0).select("hand_id"))
        out[name] = m.filter(pl.col("_i") < pl.col("_n") // pl.col("_c")).select(cols)
    return out, pl.concat(uneven).unique()


def _load_hands(con, batch: Batch, result: LoadResult, quarantine: list[pl.DataFrame], raw: _RawText,
                stage: "_Stage | None", later: _Reparse) -> pl.DataFrame:
    """Store new hands and their child rows; returns the hands classification (for per-file counts)."""
    hands = batch.tables.get("hands")
    if hands is None or hands.height == 0:
        for name in ("tournaments",):
            _merge_tournaments(con, batch.tables.get(name), result)
        return pl.DataFrame()
    h = _classify_hands(con, hands, stage)
    new = h.filter(pl.col("_status") == "new")
    conflicts = h.filter(pl.col("_status") == "conflict")
    result.duplicates += h.filter(pl.col("_status") == "duplicate").height

    if conflicts.height:
        raws = raw.hands([(f, int(line)) for f, line in conflicts.select("source_file", "source_line").iter_rows()])
        quarantine.append(
            conflicts.select(
                "source_file", pl.col("source_line").alias("position"), pl.lit("hand").alias("input_kind"), "hand_id",
                pl.lit("conflict").alias("reason"),
                pl.format("hand {} already stored with different content (kept the stored copy)", "hand_id").alias("detail"),
            ).with_columns(pl.Series("raw", raws, dtype=pl.String))
        )

    new_rows = new.drop([c for c in new.columns if c.startswith("_")])
    result.rows["hands"] = stage.add(con, "hands", new_rows) if stage is not None else _insert(con, "hands", new_rows)
    result.hands_stored += result.rows["hands"]

    single_ids = new.filter(pl.col("_copies") == 1).select("hand_id")
    if batch.spilled:
        # the worker wrote the child rows of the batch's single hands (Batch.spill): drop those of the ones not new
        singles = h.filter(pl.col("_copies") == 1)
        drop = singles.filter(pl.col("_status") != "new").select("hand_id")
        if stage is not None:
            stage.add_spilled(con, batch.spilled, drop, singles.height)
        elif drop.height < singles.height:
            for name, path in batch.spilled.items():
                rows = pl.read_parquet(path).join(drop, on="hand_id", how="anti")
                result.rows[name] = result.rows.get(name, 0) + _insert(con, name, rows)
    multi = new.filter(pl.col("_copies") > 1)
    # copies of a new hand that all carry its content: their child rows are the first copy's, c times over
    same = multi.join(h.filter(pl.col("_status") == "conflict"), on="hand_id", how="anti").select(
        "hand_id", pl.col("_copies").alias("_c"))
    one_copy, uneven = _one_copy_rows(batch, same) if same.height else ({}, same.select("hand_id"))
    same_ids = same.select("hand_id").join(uneven, on="hand_id", how="anti")
    multi = multi.join(same_ids, on="hand_id", how="anti")
    later.part += 1
    if multi.height:
        later.add(multi, raw)  # their child rows: parsed alone, once for the run (_Reparse)
    for name, key in CHILD_TABLES.items():
        df = batch.tables.get(name)
        parts = []
        if df is not None and df.height:
            parts.append(df.join(single_ids, on="hand_id", how="semi"))
        if name in one_copy:
            parts.append(one_copy[name].join(same_ids, on="hand_id", how="semi"))
        if not parts:
            result.rows.setdefault(name, 0)
            continue
        rows = pl.concat(parts, how="diagonal_relaxed")
        if key and key[0] != "hand_id":
            # finishes are keyed by tournament and keep the first row seen: inserted in order at the end of the run
            later.finishes.append(((later.part, 0), rows))
            result.rows.setdefault(name, 0)
            continue
        if key:
            # hand-keyed rows of new hands cannot collide with stored rows: dedupe the batch itself and use a
            # plain INSERT (ON CONFLICT costs an index probe per row)
            rows = _first_per_key(rows, list(key))
        if stage is not None:
            result.rows[name] = result.rows.get(name, 0) + stage.add(con, name, rows)
        else:
            result.rows[name] = result.rows.get(name, 0) + _insert(con, name, rows)
    _merge_tournaments(con, batch.tables.get("tournaments"), result)
    result.days = sorted({d.isoformat() for d in new.get_column("day").unique().to_list() if d is not None}) if new.height else []
    return h


def _merge_tournaments(con, df: pl.DataFrame | None, result: LoadResult) -> None:
    if df is None or df.height == 0:
        result.rows.setdefault("tournaments", 0)
        return
    cols = [c for c in table_columns(con, "tournaments") if c in df.columns]
    aggs, sets = [], []
    for c in cols:
        if c == "tournament_id":
            continue
        if c == "first_hand_at":
            aggs.append(f'min("{c}") AS "{c}"')
            sets.append(f'"{c}" = least(tournaments."{c}", excluded."{c}")')
        elif c == "last_hand_at":
            aggs.append(f'max("{c}") AS "{c}"')
            sets.append(f'"{c}" = greatest(tournaments."{c}", excluded."{c}")')
        else:
            aggs.append(f'first("{c}" ORDER BY "{c}" IS NULL) AS "{c}"')
            if c == "bounty_kind":
                sets.append(f"\"{c}\" = CASE WHEN tournaments.\"{c}\" = 'none' THEN excluded.\"{c}\" ELSE tournaments.\"{c}\" END")
            else:
                sets.append(f'"{c}" = coalesce(tournaments."{c}", excluded."{c}")')
    collist = ", ".join(f'"{c}"' for c in cols)
    con.register("_railbird_t", df.select(cols))
    try:
        before = con.execute("SELECT count(*) FROM tournaments").fetchall()[0][0]
        con.execute(
            f"INSERT INTO tournaments ({collist}) SELECT tournament_id, {', '.join(aggs)} FROM _railbird_t "
            f"WHERE tournament_id IS NOT NULL GROUP BY tournament_id "
            f"ON CONFLICT (tournament_id) DO UPDATE SET {', '.join(sets)}"
        ).fetchall()
        result.rows["tournaments"] = result.rows.get("tournaments", 0) + con.execute("SELECT count(*) FROM tournaments").fetchall()[0][0] - before
    finally:
        con.unregister("_railbird_t")
