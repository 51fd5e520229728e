package account_test

import (
	"testing"

	"sirtommy/lobby/account"
	"sirtommy/lobby/account/accounttest"
)

func TestMemoryStore(t *testing.T) {
	accounttest.Run(t, func(*testing.T) account.Store { return account.NewMemory() })
}
