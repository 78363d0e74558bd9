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
    hand_id          VARCHAR PRIMARY KEY,
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
    is_hero      BOOLEAN NOT NULL,
    PRIMARY KEY (hand_id, seat)
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
    n_active    INTEGER NOT NULL,          -- players still in the hand (not folded) before this line
    PRIMARY KEY (hand_id, seq)
);

CREATE TABLE IF NOT EXISTS hole_cards (
    hand_id  VARCHAR NOT NULL,
    player   VARCHAR NOT NULL,
    cards    VARCHAR[] NOT NULL,           -- ['Ah','Kd'] (4-6 cards in Omaha)
    source   VARCHAR NOT NULL,             -- 'dealt' (Dealt to) | 'shown' (shows / showed / mucked at showdown)
    PRIMARY KEY (hand_id, player)
);

CREATE TABLE IF NOT EXISTS boards (
    hand_id  VARCHAR NOT NULL,
    run      INTEGER NOT NULL,             -- 1, or 2 for the second board of run it twice
    cards    VARCHAR[] NOT NULL,           -- up to five cards, in dealing order
    PRIMARY KEY (hand_id, run)
);

CREATE TABLE IF NOT EXISTS pots (
    hand_id  VARCHAR NOT NULL,
    pot      INTEGER NOT NULL,             -- 0 = main pot, 1.. = side pots
    amount   DECIMAL(18,2) NOT NULL,       -- as the summary states it (before rake)
    PRIMARY KEY (hand_id, pot)
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
    detail   VARCHAR,                      -- chat text, seat number joined, ...
    PRIMARY KEY (hand_id, line)
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
    ts          TIMESTAMP NOT NULL,
    PRIMARY KEY (hand_id, seq)
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
    input_kind   VARCHAR NOT NULL,         -- 'hand' | 'event' | 'account' | 'file'
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
    file_kind     VARCHAR NOT NULL,        -- 'hands' | 'events' | 'accounts' | 'labels' | 'ignored'
    size_bytes    BIGINT,
    mtime         TIMESTAMP,
    sha256        VARCHAR,
    status        VARCHAR NOT NULL,        -- 'done' | 'growing' (read again later) | 'ignored' | 'failed'
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
    created_at   TIMESTAMP NOT NULL
);
