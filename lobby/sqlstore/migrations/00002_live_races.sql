-- The single binary's live races with --durable-races (race/sqlrace):
-- every accepted move is written here before it is acknowledged, and each
-- race's record at every change of seats, presence and state, so that a
-- server killed mid-race resumes its races when it starts again. A race's
-- rows go when it leaves memory, long after its end (the archive, table
-- races, keeps it). Without --durable-races these tables stay empty.
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

-- live_log is the races' event log (race.Store): a journal of the
-- writer's commits, one row each, whose entries are the moves and
-- resignations it committed, in the order they were appended (JSON: an
-- array of {"race", "seat", "seq", "move", "atMs", "id"}, id the request
-- that made the move). One row a commit, not a row a move: a move's own
-- row (its insert, and its index entries) cost the server more than all
-- the rest of its durability (docs/performance.md). The server reads the
-- journal whole when it starts and keeps each race's moves in memory;
-- rows are deleted from the front, below the first move of the oldest
-- race it still keeps.
CREATE TABLE live_log (
    pos     BIGINT PRIMARY KEY,
    entries TEXT NOT NULL
);

-- +goose Down
DROP TABLE live_log;
DROP TABLE live_results;
DROP TABLE live_races;
