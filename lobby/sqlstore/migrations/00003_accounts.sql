-- Accounts with passkeys (docs/accounts.md, lobby/account): a kept
-- player's username and recovery code, its passkeys, the ceremonies begun
-- and not finished, signed-in sessions and API tokens. Secrets (recovery
-- codes, session cookies, API tokens) are stored only as SHA-256 hashes.
-- Portable SQL, as 00001.

-- +goose Up
-- accounts: player is the guest's player id it kept; username_key is the
-- username in lower case, unique, so that "Ann" and "ann" are one.
CREATE TABLE accounts (
    player        TEXT PRIMARY KEY,
    username      TEXT NOT NULL,
    username_key  TEXT NOT NULL UNIQUE,
    recovery_hash TEXT NOT NULL,
    created_ms    BIGINT NOT NULL
);

-- passkeys: id is the credential id in base64url; data the library's
-- credential record (JSON) but for its sign counter, kept in sign_count
-- and moved by compare-and-set. used_ms is 0 until its first sign-in.
CREATE TABLE passkeys (
    id         TEXT PRIMARY KEY,
    player     TEXT NOT NULL REFERENCES accounts (player),
    data       TEXT NOT NULL,
    sign_count BIGINT NOT NULL,
    added_ms   BIGINT NOT NULL,
    used_ms    BIGINT NOT NULL
);
CREATE INDEX passkeys_player ON passkeys (player, added_ms);

-- passkey_challenges: ceremonies begun, each taken once by its finish
-- (DELETE … RETURNING) or swept after expires_ms.
CREATE TABLE passkey_challenges (
    challenge  TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,
    player     TEXT NOT NULL,
    username   TEXT NOT NULL,
    recovery   TEXT NOT NULL,
    data       TEXT NOT NULL,
    expires_ms BIGINT NOT NULL
);
CREATE INDEX passkey_challenges_expiry ON passkey_challenges (expires_ms);

-- sessions: a signed-in browser by the hash of its cookie.
CREATE TABLE sessions (
    hash       TEXT PRIMARY KEY,
    player     TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL
);
CREATE INDEX sessions_player ON sessions (player);
CREATE INDEX sessions_expiry ON sessions (expires_ms);

-- api_tokens: bearer tokens by their hash; id names one in lists.
CREATE TABLE api_tokens (
    hash       TEXT PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    player     TEXT NOT NULL REFERENCES accounts (player),
    label      TEXT NOT NULL,
    created_ms BIGINT NOT NULL
);
CREATE INDEX api_tokens_player ON api_tokens (player, created_ms);

-- +goose Down
DROP TABLE api_tokens;
DROP TABLE sessions;
DROP TABLE passkey_challenges;
DROP TABLE passkeys;
DROP TABLE accounts;
