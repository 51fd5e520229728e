-- The durable data of sirtommy (docs/storage.md): what must outlive every
-- process. Portable SQL, run as written on SQLite and PostgreSQL: times are
-- Unix milliseconds (BIGINT), records that are read whole are JSON text.

-- +goose Up
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE players (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    seen_ms    BIGINT NOT NULL
);

CREATE TABLE standings (
    player      TEXT NOT NULL,
    variant     TEXT NOT NULL,
    name        TEXT NOT NULL,
    rating      DOUBLE PRECISION NOT NULL,
    deviation   DOUBLE PRECISION NOT NULL,
    volatility  DOUBLE PRECISION NOT NULL,
    games       INTEGER NOT NULL,
    wins        INTEGER NOT NULL,
    losses      INTEGER NOT NULL,
    draws       INTEGER NOT NULL,
    streak      INTEGER NOT NULL,
    best_streak INTEGER NOT NULL,
    PRIMARY KEY (player, variant)
);
CREATE INDEX standings_leaderboard ON standings (variant, rating DESC, player);

-- games are the lobby's finished races (lobby.GameRecord), one row each.
CREATE TABLE games (
    race    TEXT PRIMARY KEY,
    variant TEXT NOT NULL,
    at_ms   BIGINT NOT NULL,
    rated   BOOLEAN NOT NULL,
    record  TEXT NOT NULL
);

-- game_players indexes games by player, for histories.
CREATE TABLE game_players (
    player TEXT NOT NULL,
    race   TEXT NOT NULL REFERENCES games (race),
    seat   INTEGER NOT NULL,
    at_ms  BIGINT NOT NULL,
    PRIMARY KEY (player, race)
);
CREATE INDEX game_players_history ON game_players (player, at_ms DESC, race DESC);

-- rating_changes is every rated race's change of each human's rating.
CREATE TABLE rating_changes (
    player            TEXT NOT NULL,
    race              TEXT NOT NULL REFERENCES games (race),
    variant           TEXT NOT NULL,
    at_ms             BIGINT NOT NULL,
    before_rating     DOUBLE PRECISION NOT NULL,
    before_deviation  DOUBLE PRECISION NOT NULL,
    before_volatility DOUBLE PRECISION NOT NULL,
    after_rating      DOUBLE PRECISION NOT NULL,
    after_deviation   DOUBLE PRECISION NOT NULL,
    after_volatility  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (player, race)
);
CREATE INDEX rating_changes_chart ON rating_changes (player, variant, at_ms);

-- races is the archive: every finished race (race.Finished), kept forever.
-- followed is false until the lobby has done what follows its end
-- (ratings, the day's board, ghost runs): a restart in between finds it.
CREATE TABLE races (
    id          TEXT PRIMARY KEY,
    variant     TEXT NOT NULL,
    finished_ms BIGINT NOT NULL,
    followed    BOOLEAN NOT NULL,
    finished    TEXT NOT NULL
);
CREATE INDEX races_unfollowed ON races (followed, finished_ms);

CREATE TABLE ghosts (
    id      TEXT PRIMARY KEY,
    author  TEXT NOT NULL,
    made_ms BIGINT NOT NULL,
    keep_ms BIGINT NOT NULL,
    record  TEXT NOT NULL
);
CREATE INDEX ghosts_author ON ghosts (author, made_ms DESC);

CREATE TABLE ghost_runs (
    race    TEXT PRIMARY KEY,
    ghost   TEXT NOT NULL,
    author  TEXT NOT NULL,
    player  TEXT NOT NULL,
    at_ms   BIGINT NOT NULL,
    outcome TEXT NOT NULL,
    run     TEXT NOT NULL
);
CREATE INDEX ghost_runs_author ON ghost_runs (author, at_ms DESC);
CREATE INDEX ghost_runs_player ON ghost_runs (player, at_ms DESC);

CREATE TABLE seen_deals (
    player  TEXT NOT NULL,
    variant TEXT NOT NULL,
    deal    TEXT NOT NULL,
    PRIMARY KEY (player, variant, deal)
);

CREATE TABLE best_games (
    player  TEXT NOT NULL,
    variant TEXT NOT NULL,
    deal    TEXT NOT NULL,
    score   INTEGER NOT NULL,
    best    TEXT NOT NULL,
    PRIMARY KEY (player, variant, deal)
);

-- daily_entries is one row per attempt at a day's deal; entry is set
-- (lobby.DailyEntry) once the game is over.
CREATE TABLE daily_entries (
    day      TEXT NOT NULL,
    variant  TEXT NOT NULL,
    player   TEXT NOT NULL,
    finished BOOLEAN NOT NULL,
    rank_key DOUBLE PRECISION NOT NULL,
    entry    TEXT,
    PRIMARY KEY (day, variant, player)
);
CREATE INDEX daily_board ON daily_entries (day, variant, finished, rank_key);
CREATE INDEX daily_history ON daily_entries (player, day DESC);

-- analyses are the coach's finished analyses (web/coach), by key.
CREATE TABLE analyses (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    at_ms BIGINT NOT NULL
);

-- +goose Down
DROP TABLE analyses;
DROP TABLE daily_entries;
DROP TABLE best_games;
DROP TABLE seen_deals;
DROP TABLE ghost_runs;
DROP TABLE ghosts;
DROP TABLE races;
DROP TABLE rating_changes;
DROP TABLE game_players;
DROP TABLE games;
DROP TABLE standings;
DROP TABLE players;
DROP TABLE settings;
