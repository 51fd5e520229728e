package sqlstore_test

import (
	"testing"

	"sirtommy/lobby/account"
	"sirtommy/lobby/account/accounttest"
	"sirtommy/lobby/sqlstore"
	"sirtommy/lobby/sqlstore/sqltest"
)

// TestAccountsConform runs account.Store's conformance suite on a real
// SQLite file and a real PostgreSQL database.
func TestAccountsConform(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		accounttest.Run(t, func(t *testing.T) account.Store { return sqlstore.NewAccounts(sqltest.SQLite(t)) })
	})
	t.Run("postgres", func(t *testing.T) {
		accounttest.Run(t, func(t *testing.T) account.Store { return sqlstore.NewAccounts(sqltest.Postgres(t)) })
	})
}
