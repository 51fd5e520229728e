-- "My mistakes" (lobby.Mistakes): the positions each player opened to
-- find the better move, where the move they played lost their game.
-- Portable SQL, as 00001.

-- +goose Up
-- mistakes: one row per player, race and seat (their own seat). position
-- is the last winnable position of the game, move the move played there;
-- raced_ms is when the race was made, added_ms when the player first
-- opened its practice, solved_ms when they first found a move that keeps
-- the game winnable (NULL until then). Times are Unix milliseconds.
CREATE TABLE mistakes (
    player    TEXT NOT NULL,
    race      TEXT NOT NULL,
    seat      INTEGER NOT NULL,
    position  INTEGER NOT NULL,
    variant   TEXT NOT NULL,
    move      TEXT NOT NULL,
    raced_ms  BIGINT NOT NULL,
    added_ms  BIGINT NOT NULL,
    solved_ms BIGINT,
    PRIMARY KEY (player, race, seat)
);
CREATE INDEX mistakes_latest ON mistakes (player, added_ms);

-- +goose Down
DROP TABLE mistakes;
