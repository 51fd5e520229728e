-- The single binary's live races (race/sqlrace): every accepted move is
-- written here before it is acknowledged, and each race's record at every
-- change of seats, presence and state, so that a server killed mid-race
-- resumes its races when it starts again. A race's rows go when it leaves
-- memory, long after its end (the archive, table races, keeps it).
-- Portable SQL, as 00001.

-- +goose Up
-- live_races is each race's record (race.Record, JSON): enough, with its
-- moves, to rebuild it (race.Restore). state is the record's, for listing.
CREATE TABLE live_races (
    id         TEXT PRIMARY KEY,
    state      TEXT NOT NULL,
    record     TEXT NOT NULL,
    updated_ms BIGINT NOT NULL
);

-- live_results is each race's result, decided once (race.Records.Decide):
-- JSON of the result and the final state.
CREATE TABLE live_results (
    race       TEXT PRIMARY KEY,
    decided    TEXT NOT NULL,
    decided_ms BIGINT NOT NULL
);

-- live_moves is each race's event log (race.Store): one row per accepted
-- move or resignation. pos is the order in which they were appended
-- (across seats); request is the id of the request that made it.
CREATE TABLE live_moves (
    race    TEXT NOT NULL,
    seat    INTEGER NOT NULL,
    seq     INTEGER NOT NULL,
    pos     BIGINT NOT NULL,
    move    TEXT NOT NULL,
    at_ms   BIGINT NOT NULL,
    request TEXT NOT NULL,
    PRIMARY KEY (race, seat, seq)
);

-- +goose Down
DROP TABLE live_moves;
DROP TABLE live_results;
DROP TABLE live_races;
