-- The counted races of arenas (lobby.ArenaResult), kept apart from the
-- arena's row, so that the row grows with the arena's players and not
-- with its races. Portable SQL, as 00001.

-- +goose Up
-- arena_results: one row a counted race, added in the transaction of the
-- arena's change that counted it; the primary key counts a race once.
-- seq orders an arena's results as they were counted (the arena's
-- version at that change, then the race's place in it). player_a and
-- player_b are the body's players, to list one player's races.
CREATE TABLE arena_results (
    arena_id TEXT NOT NULL,
    race_id  TEXT NOT NULL,
    seq      BIGINT NOT NULL,
    player_a TEXT NOT NULL,
    player_b TEXT NOT NULL,
    body     TEXT NOT NULL,
    PRIMARY KEY (arena_id, race_id)
);
CREATE INDEX arena_results_seq ON arena_results (arena_id, seq);

-- +goose Down
DROP TABLE arena_results;
