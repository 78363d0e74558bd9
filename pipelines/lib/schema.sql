-- railbird warehouse schema (DuckDB).
--
-- The contract between the ingest stage, the detectors and the web app.
-- Conventions:
--   * amounts are DECIMAL(18,2): money in the table's currency for cash games,
--     chips for tournaments (hands.currency says which); never floats;
--   * hand_id, tournament_id are the ids of the hand history text, as VARCHAR;
--   * player / account is the name string exactly as the files spell it;
--   * timestamps are TIMESTAMP in UTC;
--   * every table documented with COMMENT ON (see the end of this file).
-- Additive changes only: add columns or tables, never rename or drop.

CREATE TABLE IF NOT EXISTS hands (
    hand_id          VARCHAR NOT NULL,      -- unique: kept by the loader (warehouse.py), not by an index
    site             VARCHAR NOT NULL,      -- 'PokerStars'
    is_zoom          BOOLEAN NOT NULL,
    game             VARCHAR NOT NULL,      -- 'holdem' | 'omaha' | 'omaha5' | 'omaha6' | 'courchevel' ...
    hi_lo            BOOLEAN NOT NULL,      -- split pot hi/lo (Omaha Hi/Lo)
    limit_type       VARCHAR NOT NULL,      -- 'no_limit' | 'pot_limit' | 'fixed_limit'
    currency         VARCHAR NOT NULL,      -- ISO code ('USD','EUR',...), 'PLAY' for play money, 'CHIPS' for tournaments
    is_tournament    BOOLEAN NOT NULL,
    tournament_id    VARCHAR,               -- NULL for cash
    tournament_level VARCHAR,               -- 'I', 'II', ... as written
    small_blind      DECIMAL(18,2),
    big_blind        DECIMAL(18,2),
    ante             DECIMAL(18,2),         -- NULL where the hand has none
    started_at       TIMESTAMP NOT NULL,    -- UTC
    started_at_local VARCHAR,               -- the header's own local time and zone, as written
    day              DATE NOT NULL,         -- UTC day of started_at: the partition key
    table_name       VARCHAR NOT NULL,
    max_seats        INTEGER,
    button_seat      INTEGER,
    n_players        INTEGER NOT NULL,      -- players dealt in
    total_pot        DECIMAL(18,2) NOT NULL,
    rake             DECIMAL(18,2) NOT NULL,
    run_it_twice     BOOLEAN NOT NULL,
    all_cards_known  BOOLEAN NOT NULL,      -- operator view: hole cards of every player dealt in
    hero             VARCHAR,               -- the 'Dealt to' player in the player view
    source_file      VARCHAR NOT NULL,
    source_line      INTEGER NOT NULL,      -- 1-based line of the header in source_file
    content_hash     VARCHAR NOT NULL       -- hash of the normalised hand text (conflict detection)
);

CREATE TABLE IF NOT EXISTS seats (
    hand_id      VARCHAR NOT NULL,
    seat         INTEGER NOT NULL,
    player       VARCHAR NOT NULL,
    stack_start  DECIMAL(18,2) NOT NULL,
    bounty       DECIMAL(18,2),            -- knockout bounty on the seat line, if any
    sitting_out  BOOLEAN NOT NULL,         -- 'is sitting out' / 'out of hand' on the seat line
    dealt_in     BOOLEAN NOT NULL,
    position     VARCHAR,                  -- 'BTN','SB','BB','UTG','UTG1','UTG2','LJ','HJ','CO' (NULL if not dealt in)
    put_in       DECIMAL(18,2) NOT NULL,   -- chips committed to the pot, after uncalled bets returned
    returned     DECIMAL(18,2) NOT NULL,   -- uncalled bet returned
    collected    DECIMAL(18,2) NOT NULL,   -- won from all pots
    net          DECIMAL(18,2) NOT NULL,   -- collected - put_in
    stack_end    DECIMAL(18,2) NOT NULL,   -- stack_start - put_in + collected
    is_hero      BOOLEAN NOT NULL
    -- unique on (hand_id, seat): kept by the loader (warehouse.py), not by an index
);

CREATE TABLE IF NOT EXISTS actions (
    hand_id     VARCHAR NOT NULL,
    seq         INTEGER NOT NULL,          -- 0-based over every action line of the hand, posts included (the index platform 'decision' events use)
    street      VARCHAR NOT NULL,          -- 'preflop' | 'flop' | 'turn' | 'river'
    player      VARCHAR NOT NULL,
    action      VARCHAR NOT NULL,          -- 'post_sb' | 'post_bb' | 'post_ante' | 'post_dead' | 'post_sb_bb' | 'post_straddle' | 'fold' | 'check' | 'call' | 'bet' | 'raise'
    amount      DECIMAL(18,2) NOT NULL,    -- chips this line adds to the pot (raise: the increment, not the 'to')
    raise_to    DECIMAL(18,2),             -- the 'to Y' of a raise
    is_all_in   BOOLEAN NOT NULL,
    pot_before  DECIMAL(18,2) NOT NULL,    -- chips in the pot before this line (all streets so far)
    to_call     DECIMAL(18,2) NOT NULL,    -- what the player had to add to call when acting (0 if none)
    n_active    INTEGER NOT NULL           -- players still in the hand (not folded) before this line
    -- unique on (hand_id, seq): kept by the loader (warehouse.py), not by an index
);

CREATE TABLE IF NOT EXISTS hole_cards (
    hand_id  VARCHAR NOT NULL,
    player   VARCHAR NOT NULL,
    cards    VARCHAR[] NOT NULL,           -- ['Ah','Kd'] (4-6 cards in Omaha)
    source   VARCHAR NOT NULL              -- 'dealt' (Dealt to) | 'shown' (shows / showed / mucked at showdown)
    -- unique on (hand_id, player): kept by the loader (warehouse.py), not by an index
);

CREATE TABLE IF NOT EXISTS boards (
    hand_id  VARCHAR NOT NULL,
    run      INTEGER NOT NULL,             -- 1, or 2 for the second board of run it twice
    cards    VARCHAR[] NOT NULL            -- up to five cards, in dealing order
    -- unique on (hand_id, run): kept by the loader (warehouse.py), not by an index
);

CREATE TABLE IF NOT EXISTS pots (
    hand_id  VARCHAR NOT NULL,
    pot      INTEGER NOT NULL,             -- 0 = main pot, 1.. = side pots
    amount   DECIMAL(18,2) NOT NULL        -- as the summary states it (before rake)
    -- unique on (hand_id, pot): kept by the loader (warehouse.py), not by an index
);

CREATE TABLE IF NOT EXISTS collections (
    hand_id  VARCHAR NOT NULL,
    run      INTEGER NOT NULL,             -- 1, or 2 for the second board of run it twice
    pot      INTEGER NOT NULL,             -- 0 = main pot / whole pot, 1.. = side pot
    player   VARCHAR NOT NULL,
    amount   DECIMAL(18,2) NOT NULL,
    kind     VARCHAR NOT NULL              -- 'pot' | 'cash_out' (cashed out under run-it-once insurance) | 'hi' | 'lo'
);

CREATE TABLE IF NOT EXISTS table_events (
    hand_id  VARCHAR NOT NULL,
    line     INTEGER NOT NULL,             -- 0-based line within the hand text
    player   VARCHAR,
    event    VARCHAR NOT NULL,             -- 'sitting_out' | 'timed_out' | 'timed_out_disconnected' | 'disconnected' | 'connected' | 'returned' | 'joins' | 'leaves' | 'chat' | 'cashed_out' | 'other'
    detail   VARCHAR                       -- chat text, seat number joined, ...
    -- unique on (hand_id, line): kept by the loader (warehouse.py), not by an index
);

CREATE TABLE IF NOT EXISTS unknown_lines (
    hand_id  VARCHAR NOT NULL,
    line     INTEGER NOT NULL,             -- 0-based line within the hand text
    kind     VARCHAR NOT NULL,             -- 'blanked show' | 'unknown'
    text     VARCHAR NOT NULL              -- the line as written (surrounding whitespace removed)
    -- unique on (hand_id, line): kept by the loader (warehouse.py), not by an index
);

CREATE TABLE IF NOT EXISTS tournaments (
    tournament_id  VARCHAR PRIMARY KEY,
    buy_in         DECIMAL(18,2),          -- prize-pool part of the buy-in
    bounty         DECIMAL(18,2),          -- knockout part (0 if none)
    fee            DECIMAL(18,2),
    currency       VARCHAR,                -- 'USD', 'PLAY' (play money), 'FPP', ...
    bounty_kind    VARCHAR NOT NULL,       -- 'none' | 'knockout' | 'progressive'
    game           VARCHAR,
    limit_type     VARCHAR,
    first_hand_at  TIMESTAMP,
    last_hand_at   TIMESTAMP
);

CREATE TABLE IF NOT EXISTS tournament_finishes (
    tournament_id VARCHAR NOT NULL,
    player        VARCHAR NOT NULL,
    place         INTEGER NOT NULL,
    prize         DECIMAL(18,2),           -- NULL when none received
    hand_id       VARCHAR NOT NULL,        -- the hand whose text states the finish
    PRIMARY KEY (tournament_id, player)
);

CREATE TABLE IF NOT EXISTS bounties (
    hand_id        VARCHAR NOT NULL,
    tournament_id  VARCHAR NOT NULL,
    winner         VARCHAR NOT NULL,
    eliminated     VARCHAR NOT NULL,
    amount         DECIMAL(18,2) NOT NULL, -- what the winner received
    increase       DECIMAL(18,2),          -- progressive knockout: the winner's own bounty increase
    new_bounty     DECIMAL(18,2)           -- progressive knockout: the winner's bounty after
);

-- ---------------------------------------------------------------- platform events

CREATE TABLE IF NOT EXISTS sessions (
    account     VARCHAR NOT NULL,
    session     VARCHAR NOT NULL,
    ip          VARCHAR,
    device      VARCHAR,
    login_at    TIMESTAMP NOT NULL,
    logout_at   TIMESTAMP,                 -- NULL while no logout was seen
    PRIMARY KEY (account, session)
);

CREATE TABLE IF NOT EXISTS sit_events (
    account        VARCHAR NOT NULL,
    ts             TIMESTAMP NOT NULL,
    kind           VARCHAR NOT NULL,       -- 'sit_out' | 'sit_in'
    table_name     VARCHAR,
    tournament_id  VARCHAR
);

CREATE TABLE IF NOT EXISTS registrations (
    account        VARCHAR NOT NULL,
    ts             TIMESTAMP NOT NULL,
    kind           VARCHAR NOT NULL,       -- 'register' | 'unregister'
    tournament_id  VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS decisions (
    hand_id     VARCHAR NOT NULL,
    seq         INTEGER NOT NULL,          -- = actions.seq
    account     VARCHAR NOT NULL,
    ms          INTEGER NOT NULL,          -- time taken
    ts          TIMESTAMP NOT NULL
    -- unique on (hand_id, seq): kept by the loader (warehouse.py), not by an index
);

CREATE TABLE IF NOT EXISTS transfers (
    ts        TIMESTAMP NOT NULL,
    account   VARCHAR NOT NULL,            -- sender
    to_account VARCHAR NOT NULL,
    amount    DECIMAL(18,2) NOT NULL,
    currency  VARCHAR
);

CREATE TABLE IF NOT EXISTS other_events (
    ts       TIMESTAMP,
    type     VARCHAR,
    account  VARCHAR,
    payload  JSON                          -- the whole event, kept as it came
);

CREATE TABLE IF NOT EXISTS accounts (
    account     VARCHAR PRIMARY KEY,
    created_at  TIMESTAMP,
    country     VARCHAR,
    payment     VARCHAR,                   -- hash of the payment instrument; NULL if none
    extra       JSON                       -- further columns of accounts.csv
);

-- ---------------------------------------------------------------- bookkeeping

CREATE TABLE IF NOT EXISTS quarantine (
    source_file  VARCHAR NOT NULL,
    position     INTEGER NOT NULL,         -- 1-based line of the hand header / event line / CSV row
    input_kind   VARCHAR NOT NULL,         -- 'hand' | 'text' | 'event' | 'account' | 'file'
    hand_id      VARCHAR,
    reason       VARCHAR NOT NULL,         -- short machine-readable reason, e.g. 'unsupported game', 'unbalanced pot', 'conflict'
    detail       VARCHAR,                  -- human-readable detail
    raw          VARCHAR NOT NULL,         -- the raw text rejected
    run_id       VARCHAR,
    quarantined_at TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS ingest_log (
    run_id        VARCHAR NOT NULL,
    source_file   VARCHAR NOT NULL,
    file_kind     VARCHAR NOT NULL,        -- 'hands' | 'events' | 'accounts' | 'labels' | 'ignored' | 'refused'
    size_bytes    BIGINT,
    mtime         TIMESTAMP,
    sha256        VARCHAR,
    status        VARCHAR NOT NULL,        -- 'done' | 'growing' (read again later) | 'ignored' | 'failed' | 'refused'
    stored        INTEGER,                 -- hands / events / rows stored
    duplicates    INTEGER,
    quarantined   INTEGER,
    started_at    TIMESTAMP NOT NULL,
    finished_at   TIMESTAMP
);

-- ---------------------------------------------------------------- detection output (rebuilt by each run)

CREATE TABLE IF NOT EXISTS signals (
    kind         VARCHAR NOT NULL,         -- one of the six kinds
    detector     VARCHAR NOT NULL,
    accounts     VARCHAR[] NOT NULL,
    tournaments  VARCHAR[] NOT NULL,
    score        DOUBLE NOT NULL,          -- higher = more suspicious; comparable within a kind
    p_value      DOUBLE,
    flagged      BOOLEAN NOT NULL,
    hands        VARCHAR[] NOT NULL,       -- evidence hands, strongest first
    summary      VARCHAR NOT NULL,
    payload      JSON NOT NULL,            -- the whole detectors.base.Signal as JSON
    run_id       VARCHAR,
    created_at   TIMESTAMP NOT NULL,
    q_value      DOUBLE                    -- estimated false-discovery rate; one scale for every kind
);
-- a warehouse built before q_value: the column is added last, as in a new one
ALTER TABLE signals ADD COLUMN IF NOT EXISTS q_value DOUBLE;

-- ---------------------------------------------------------------- platform events, as they came (ingest bookkeeping)

CREATE TABLE IF NOT EXISTS session_events (
    account  VARCHAR NOT NULL,
    session  VARCHAR NOT NULL,
    kind     VARCHAR NOT NULL,             -- 'login' | 'logout'
    ts       TIMESTAMP NOT NULL,
    ip       VARCHAR,
    device   VARCHAR
);

-- ================================================================ documentation
-- Every table and column carries a COMMENT ON (checked by the tests: no column
-- of a table may have a NULL comment). Keep them when adding columns.

COMMENT ON TABLE hands IS 'One row per hand history stored: game, stakes, table, time, pot and where it was read from. Deduplicated on hand_id.';
COMMENT ON COLUMN hands.hand_id IS 'The number after "Hand #" / "Game #" in the header; unique.';
COMMENT ON COLUMN hands.site IS 'Poker site that wrote the history (''PokerStars'').';
COMMENT ON COLUMN hands.is_zoom IS 'True for a Zoom (fast-fold) hand.';
COMMENT ON COLUMN hands.game IS 'Game: holdem, omaha, omaha5, omaha6, courchevel, ...';
COMMENT ON COLUMN hands.hi_lo IS 'True when the pot is split high/low (e.g. Omaha Hi/Lo).';
COMMENT ON COLUMN hands.limit_type IS 'Betting structure: no_limit, pot_limit or fixed_limit.';
COMMENT ON COLUMN hands.currency IS 'ISO currency of a cash game, PLAY for play money, CHIPS for tournament chips.';
COMMENT ON COLUMN hands.is_tournament IS 'True for a tournament hand (amounts are chips).';
COMMENT ON COLUMN hands.tournament_id IS 'The number after "Tournament #"; NULL for cash games.';
COMMENT ON COLUMN hands.tournament_level IS 'Tournament blind level as written (I, II, ...).';
COMMENT ON COLUMN hands.small_blind IS 'Small blind of the stakes.';
COMMENT ON COLUMN hands.big_blind IS 'Big blind of the stakes (the unit of bb/100 statistics).';
COMMENT ON COLUMN hands.ante IS 'Ante per player; NULL where the hand has none.';
COMMENT ON COLUMN hands.started_at IS 'Start time of the hand in UTC.';
COMMENT ON COLUMN hands.started_at_local IS 'The header''s own local time and time zone, exactly as written.';
COMMENT ON COLUMN hands.day IS 'UTC calendar day of started_at: the partition key of the hand tables.';
COMMENT ON COLUMN hands.table_name IS 'Table name as quoted in the second header line.';
COMMENT ON COLUMN hands.max_seats IS 'Table size (e.g. 6 for 6-max); NULL when the header omits it.';
COMMENT ON COLUMN hands.button_seat IS 'Seat number of the dealer button.';
COMMENT ON COLUMN hands.n_players IS 'Number of players dealt in.';
COMMENT ON COLUMN hands.total_pot IS 'Total pot from the summary, before rake.';
COMMENT ON COLUMN hands.rake IS 'Rake taken by the room.';
COMMENT ON COLUMN hands.run_it_twice IS 'True when the board was run twice.';
COMMENT ON COLUMN hands.all_cards_known IS 'Operator view: hole cards of every player dealt in are known.';
COMMENT ON COLUMN hands.hero IS 'The "Dealt to" player of a player-view history; NULL in the operator view.';
COMMENT ON COLUMN hands.source_file IS 'File the hand was read from (absolute path).';
COMMENT ON COLUMN hands.source_line IS '1-based line of the hand header in source_file.';
COMMENT ON COLUMN hands.content_hash IS 'Hash of the normalised hand text: the same hand_id with another hash is a conflict.';

COMMENT ON TABLE seats IS 'One row per seat line of a hand: who sat where, with what stack, what they put in and won.';
COMMENT ON COLUMN seats.hand_id IS 'The hand (hands.hand_id).';
COMMENT ON COLUMN seats.seat IS 'Seat number as written.';
COMMENT ON COLUMN seats.player IS 'Player name = account id.';
COMMENT ON COLUMN seats.stack_start IS 'Stack at the start of the hand.';
COMMENT ON COLUMN seats.bounty IS 'Knockout bounty shown on the seat line, if any.';
COMMENT ON COLUMN seats.sitting_out IS 'Seat line says "is sitting out" or "out of hand".';
COMMENT ON COLUMN seats.dealt_in IS 'The player was dealt cards in this hand.';
COMMENT ON COLUMN seats.position IS 'Position: BTN, SB, BB, UTG, UTG1, UTG2, LJ, HJ, CO; NULL if not dealt in.';
COMMENT ON COLUMN seats.put_in IS 'Chips committed to the pot, after uncalled bets were returned.';
COMMENT ON COLUMN seats.returned IS 'Uncalled bet returned to the player.';
COMMENT ON COLUMN seats.collected IS 'Won from all pots.';
COMMENT ON COLUMN seats.net IS 'collected - put_in.';
COMMENT ON COLUMN seats.stack_end IS 'stack_start - put_in + collected.';
COMMENT ON COLUMN seats.is_hero IS 'The player is the hero of a player-view history.';

COMMENT ON TABLE actions IS 'Every action line of every hand in order, posts included, with the pot and price when it was taken.';
COMMENT ON COLUMN actions.hand_id IS 'The hand (hands.hand_id).';
COMMENT ON COLUMN actions.seq IS '0-based index over the action lines of the hand, posts included (the index of platform decision events).';
COMMENT ON COLUMN actions.street IS 'preflop, flop, turn or river.';
COMMENT ON COLUMN actions.player IS 'Acting player.';
COMMENT ON COLUMN actions.action IS 'post_sb, post_bb, post_ante, post_dead, post_sb_bb, post_straddle, fold, check, call, bet or raise.';
COMMENT ON COLUMN actions.amount IS 'Chips this line adds to the pot (for a raise: the increment, not the raise-to).';
COMMENT ON COLUMN actions.raise_to IS 'The "to Y" of a raise; NULL otherwise.';
COMMENT ON COLUMN actions.is_all_in IS 'The line ends "and is all-in".';
COMMENT ON COLUMN actions.pot_before IS 'Chips in the pot before this line (all streets so far).';
COMMENT ON COLUMN actions.to_call IS 'What the player had to add to call when acting (0 if nothing).';
COMMENT ON COLUMN actions.n_active IS 'Players still in the hand (not folded) before this line.';

COMMENT ON TABLE hole_cards IS 'Known hole cards: dealt (hero or operator view) or shown at showdown.';
COMMENT ON COLUMN hole_cards.hand_id IS 'The hand (hands.hand_id).';
COMMENT ON COLUMN hole_cards.player IS 'Player holding the cards.';
COMMENT ON COLUMN hole_cards.cards IS 'Cards such as [''Ah'',''Kd''] (4 to 6 cards in Omaha variants).';
COMMENT ON COLUMN hole_cards.source IS 'dealt (a "Dealt to" line) or shown (shows / showed / mucked at showdown).';

COMMENT ON TABLE boards IS 'Community cards of each hand; two rows when the board was run twice.';
COMMENT ON COLUMN boards.hand_id IS 'The hand (hands.hand_id).';
COMMENT ON COLUMN boards.run IS '1, or 2 for the second board of run it twice.';
COMMENT ON COLUMN boards.cards IS 'Up to five cards in dealing order.';

COMMENT ON TABLE pots IS 'Main and side pots as the summary states them.';
COMMENT ON COLUMN pots.hand_id IS 'The hand (hands.hand_id).';
COMMENT ON COLUMN pots.pot IS '0 = main pot, 1.. = side pots.';
COMMENT ON COLUMN pots.amount IS 'Pot size before rake.';

COMMENT ON TABLE collections IS 'Who collected what from which pot (one row per "collected" line).';
COMMENT ON COLUMN collections.hand_id IS 'The hand (hands.hand_id).';
COMMENT ON COLUMN collections.run IS '1, or 2 for the second board of run it twice.';
COMMENT ON COLUMN collections.pot IS '0 = main or whole pot, 1.. = side pot.';
COMMENT ON COLUMN collections.player IS 'Player who collected.';
COMMENT ON COLUMN collections.amount IS 'Amount collected.';
COMMENT ON COLUMN collections.kind IS 'pot, cash_out (cashed out under insurance), hi or lo.';

COMMENT ON TABLE table_events IS 'Non-action lines inside a hand: sitting out, time-outs, disconnects, joins, leaves, chat.';
COMMENT ON COLUMN table_events.hand_id IS 'The hand (hands.hand_id).';
COMMENT ON COLUMN table_events.line IS '0-based line within the hand text.';
COMMENT ON COLUMN table_events.player IS 'Player concerned, if any.';
COMMENT ON COLUMN table_events.event IS 'sitting_out, timed_out, timed_out_disconnected, disconnected, connected, returned, joins, leaves, chat, cashed_out or other.';
COMMENT ON COLUMN table_events.detail IS 'Chat text, seat number joined, or other detail (attacker-controlled text: escape it).';

COMMENT ON TABLE unknown_lines IS 'Lines of a stored hand that no pattern reads and that carry no money and no action (a client message, a show line whose cards the export blanked); the hand balanced and was stored. Lines that could change an amount quarantine their hand instead.';
COMMENT ON COLUMN unknown_lines.hand_id IS 'The hand (hands.hand_id).';
COMMENT ON COLUMN unknown_lines.line IS '0-based line within the hand text (as table_events.line).';
COMMENT ON COLUMN unknown_lines.kind IS 'blanked show (a seated name and a colon, nothing after: the cards shown were blanked, so they are unknown) or unknown (no money, no action, not a line railbird knows).';
COMMENT ON COLUMN unknown_lines.text IS 'The line as written, surrounding whitespace removed (attacker-controlled text: escape it).';

COMMENT ON TABLE tournaments IS 'One row per tournament seen in the hands, merged over runs (first/last hand times widen).';
COMMENT ON COLUMN tournaments.tournament_id IS 'The number after "Tournament #".';
COMMENT ON COLUMN tournaments.buy_in IS 'Prize-pool part of the buy-in.';
COMMENT ON COLUMN tournaments.bounty IS 'Knockout part of the buy-in (0 if none).';
COMMENT ON COLUMN tournaments.fee IS 'Fee part of the buy-in.';
COMMENT ON COLUMN tournaments.currency IS 'Buy-in currency: USD, PLAY, FPP, ...';
COMMENT ON COLUMN tournaments.bounty_kind IS 'none, knockout or progressive.';
COMMENT ON COLUMN tournaments.game IS 'Game of the tournament (as hands.game).';
COMMENT ON COLUMN tournaments.limit_type IS 'Betting structure (as hands.limit_type).';
COMMENT ON COLUMN tournaments.first_hand_at IS 'Earliest hand seen (UTC).';
COMMENT ON COLUMN tournaments.last_hand_at IS 'Latest hand seen (UTC).';

COMMENT ON TABLE tournament_finishes IS 'Finishing places stated in the hands (finished the tournament in Nth place / wins the tournament).';
COMMENT ON COLUMN tournament_finishes.tournament_id IS 'The tournament.';
COMMENT ON COLUMN tournament_finishes.player IS 'Player who finished.';
COMMENT ON COLUMN tournament_finishes.place IS 'Finishing place (1 = winner).';
COMMENT ON COLUMN tournament_finishes.prize IS 'Prize received; NULL when none.';
COMMENT ON COLUMN tournament_finishes.hand_id IS 'The hand whose text states the finish.';

COMMENT ON TABLE bounties IS 'Knockout bounties won: who eliminated whom and what they received.';
COMMENT ON COLUMN bounties.hand_id IS 'The hand of the elimination.';
COMMENT ON COLUMN bounties.tournament_id IS 'The tournament.';
COMMENT ON COLUMN bounties.winner IS 'Player who won the bounty.';
COMMENT ON COLUMN bounties.eliminated IS 'Player eliminated.';
COMMENT ON COLUMN bounties.amount IS 'What the winner received.';
COMMENT ON COLUMN bounties.increase IS 'Progressive knockout: increase of the winner''s own bounty.';
COMMENT ON COLUMN bounties.new_bounty IS 'Progressive knockout: the winner''s bounty afterwards.';

COMMENT ON TABLE sessions IS 'Client sessions: a login paired with its logout by (account, session), whatever file or order they came in.';
COMMENT ON COLUMN sessions.account IS 'Account id.';
COMMENT ON COLUMN sessions.session IS 'Session id of the login/logout events.';
COMMENT ON COLUMN sessions.ip IS 'IP address of the login.';
COMMENT ON COLUMN sessions.device IS 'The room''s device fingerprint of the login.';
COMMENT ON COLUMN sessions.login_at IS 'Login time (UTC).';
COMMENT ON COLUMN sessions.logout_at IS 'Logout time (UTC); NULL while no logout was seen.';

COMMENT ON TABLE sit_events IS 'Platform sit_out / sit_in events.';
COMMENT ON COLUMN sit_events.account IS 'Account id.';
COMMENT ON COLUMN sit_events.ts IS 'Event time (UTC).';
COMMENT ON COLUMN sit_events.kind IS 'sit_out or sit_in.';
COMMENT ON COLUMN sit_events.table_name IS 'Table name as in the hand histories.';
COMMENT ON COLUMN sit_events.tournament_id IS 'Tournament id, NULL at a cash table.';

COMMENT ON TABLE registrations IS 'Tournament register / unregister events.';
COMMENT ON COLUMN registrations.account IS 'Account id.';
COMMENT ON COLUMN registrations.ts IS 'Event time (UTC).';
COMMENT ON COLUMN registrations.kind IS 'register or unregister.';
COMMENT ON COLUMN registrations.tournament_id IS 'Tournament id.';

COMMENT ON TABLE decisions IS 'Decision timings: how long a player took for one action line of a hand.';
COMMENT ON COLUMN decisions.hand_id IS 'The hand.';
COMMENT ON COLUMN decisions.seq IS 'The action line (= actions.seq).';
COMMENT ON COLUMN decisions.account IS 'Account id of the player who acted.';
COMMENT ON COLUMN decisions.ms IS 'Milliseconds taken.';
COMMENT ON COLUMN decisions.ts IS 'Event time (UTC).';

COMMENT ON TABLE transfers IS 'Player-to-player money transfers at the cashier.';
COMMENT ON COLUMN transfers.ts IS 'Transfer time (UTC).';
COMMENT ON COLUMN transfers.account IS 'Sender account.';
COMMENT ON COLUMN transfers.to_account IS 'Receiving account.';
COMMENT ON COLUMN transfers.amount IS 'Amount transferred.';
COMMENT ON COLUMN transfers.currency IS 'Currency of the amount.';

COMMENT ON TABLE other_events IS 'Platform events of a type railbird does not use: kept as they came, ignored.';
COMMENT ON COLUMN other_events.ts IS 'Event time (UTC).';
COMMENT ON COLUMN other_events.type IS 'The event type.';
COMMENT ON COLUMN other_events.account IS 'Account id.';
COMMENT ON COLUMN other_events.payload IS 'The whole event as JSON.';

COMMENT ON TABLE accounts IS 'One row per account from accounts.csv (the latest file wins on re-ingest).';
COMMENT ON COLUMN accounts.account IS 'Account id (= player name in the hands).';
COMMENT ON COLUMN accounts.created_at IS 'Account creation time (UTC).';
COMMENT ON COLUMN accounts.country IS 'Country of the account.';
COMMENT ON COLUMN accounts.payment IS 'Hash of the payment instrument; NULL if none.';
COMMENT ON COLUMN accounts.extra IS 'Further columns of accounts.csv as a JSON object.';

COMMENT ON TABLE quarantine IS 'Input that could not be stored, with file, position, raw text and reason. Nothing bad vanishes.';
COMMENT ON COLUMN quarantine.source_file IS 'File the input came from.';
COMMENT ON COLUMN quarantine.position IS '1-based line of the hand header / event line / CSV row (0 for a whole file).';
COMMENT ON COLUMN quarantine.input_kind IS 'hand, text (lines outside any hand), event, account or file.';
COMMENT ON COLUMN quarantine.hand_id IS 'Hand id when one could be read.';
COMMENT ON COLUMN quarantine.reason IS 'Short machine-readable reason, e.g. conflict, unbalanced pot, not a JSON object, bad ts.';
COMMENT ON COLUMN quarantine.detail IS 'Human-readable detail.';
COMMENT ON COLUMN quarantine.raw IS 'The raw text rejected.';
COMMENT ON COLUMN quarantine.run_id IS 'Run that quarantined it.';
COMMENT ON COLUMN quarantine.quarantined_at IS 'When it was quarantined (UTC).';

COMMENT ON TABLE ingest_log IS 'One row per file per run that read or noted it: what it was, its fingerprint, status and counts.';
COMMENT ON COLUMN ingest_log.run_id IS 'The run.';
COMMENT ON COLUMN ingest_log.source_file IS 'File path (absolute).';
COMMENT ON COLUMN ingest_log.file_kind IS 'hands, events, accounts, labels, ignored, or refused (a symbolic link out of the landing folder).';
COMMENT ON COLUMN ingest_log.size_bytes IS 'File size when read.';
COMMENT ON COLUMN ingest_log.mtime IS 'File modification time when read (UTC).';
COMMENT ON COLUMN ingest_log.sha256 IS 'SHA-256 of the file content when read.';
COMMENT ON COLUMN ingest_log.status IS 'done, growing (read again next run), ignored, failed, or refused (a symbolic link out of the landing folder: logged and quarantined, never followed).';
COMMENT ON COLUMN ingest_log.stored IS 'Hands / events / rows read from the file and stored (hands: new ones).';
COMMENT ON COLUMN ingest_log.duplicates IS 'Hands already stored with the same content.';
COMMENT ON COLUMN ingest_log.quarantined IS 'Hands / lines / rows quarantined.';
COMMENT ON COLUMN ingest_log.started_at IS 'Run start (UTC).';
COMMENT ON COLUMN ingest_log.finished_at IS 'When the file''s rows were committed (UTC).';

COMMENT ON TABLE signals IS 'Detector output: one row per suspicious group or account, rebuilt by each run.';
COMMENT ON COLUMN signals.kind IS 'One of the six collusion kinds.';
COMMENT ON COLUMN signals.detector IS 'Detector that produced the signal.';
COMMENT ON COLUMN signals.accounts IS 'Accounts the signal concerns.';
COMMENT ON COLUMN signals.tournaments IS 'Tournaments the signal concerns (may be empty).';
COMMENT ON COLUMN signals.score IS 'Higher = more suspicious; comparable within a kind.';
COMMENT ON COLUMN signals.p_value IS 'p-value of the detector''s test, where it has one.';
COMMENT ON COLUMN signals.q_value IS 'Estimated false-discovery rate: the share of false accusations expected among this signal and every one of its kind with a smaller p-value (Benjamini-Hochberg over the kind''s tested candidates; a group''s smallest). One scale for every kind, lower = stronger; NULL where no test was made.';
COMMENT ON COLUMN signals.flagged IS 'The detector puts it in front of an investigator.';
COMMENT ON COLUMN signals.hands IS 'Evidence hands, strongest first.';
COMMENT ON COLUMN signals.summary IS 'One-sentence summary.';
COMMENT ON COLUMN signals.payload IS 'The whole detectors.base.Signal as JSON.';
COMMENT ON COLUMN signals.run_id IS 'Run that produced it.';
COMMENT ON COLUMN signals.created_at IS 'When it was produced (UTC).';

COMMENT ON TABLE session_events IS 'Login and logout events as they came; sessions is derived from them.';
COMMENT ON COLUMN session_events.account IS 'Account id.';
COMMENT ON COLUMN session_events.session IS 'Session id.';
COMMENT ON COLUMN session_events.kind IS 'login or logout.';
COMMENT ON COLUMN session_events.ts IS 'Event time (UTC).';
COMMENT ON COLUMN session_events.ip IS 'IP address (login).';
COMMENT ON COLUMN session_events.device IS 'Device fingerprint (login).';

CREATE TABLE IF NOT EXISTS detector_runs (
    run_id          VARCHAR NOT NULL,
    kind            VARCHAR NOT NULL,
    status          VARCHAR NOT NULL,
    error           VARCHAR,
    finished_at     TIMESTAMPTZ NOT NULL,
    signals_run_id  VARCHAR,
    PRIMARY KEY (run_id, kind)
);
COMMENT ON TABLE detector_runs IS 'One row per nightly run and detector kind: whether the detector ran, and whose signals the kind now shows.';
COMMENT ON COLUMN detector_runs.run_id IS 'Dagster run id of the nightly run.';
COMMENT ON COLUMN detector_runs.kind IS 'One of the six collusion kinds.';
COMMENT ON COLUMN detector_runs.status IS 'ok (the detector ran and replaced its signals) or failed (it raised; its signals were kept).';
COMMENT ON COLUMN detector_runs.error IS 'The exception on one line (type: message) when failed, else NULL.';
COMMENT ON COLUMN detector_runs.finished_at IS 'When the detector finished or failed.';
COMMENT ON COLUMN detector_runs.signals_run_id IS 'Run whose signals this kind shows after this run: this run when ok, the last run that produced them when failed (NULL: none yet).';
