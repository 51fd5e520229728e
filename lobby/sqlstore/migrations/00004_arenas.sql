-- Arenas (lobby.Arena): for a fixed time, everyone who joined races back
-- to back and every race's points pile up on the arena's leaderboard.
-- Portable SQL, as 00001.

-- +goose Up
-- arenas: body is the arena whole (JSON: its rules, every player's entry
-- and score sheet, its races under way), as it is read and written whole
-- by its pairings and its races' ends. start_ms and end_ms are the
-- body's StartAt and EndAt, for listing the arenas not over. version
-- moves on at every change, which is written only over the version it
-- read (optimistic concurrency between instances).
CREATE TABLE arenas (
    id       TEXT PRIMARY KEY,
    start_ms BIGINT NOT NULL,
    end_ms   BIGINT NOT NULL,
    version  BIGINT NOT NULL,
    body     TEXT NOT NULL
);
CREATE INDEX arenas_end ON arenas (end_ms);

-- +goose Down
DROP TABLE arenas;
