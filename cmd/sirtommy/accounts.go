package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/lobby/account"
)

// sweepEvery is how often expired passkey challenges and sessions are
// deleted: they are refused once expired anyway; the sweep only keeps the
// tables small.
const sweepEvery = 10 * time.Minute

// siteOrigin is --origin, or http://localhost:PORT of the listener.
func siteOrigin(flag string, addr net.Addr) string {
	if flag != "" {
		return flag
	}
	port := 80
	if a, ok := addr.(*net.TCPAddr); ok {
		port = a.Port
	}
	return fmt.Sprintf("http://localhost:%d", port)
}

// sweepAccounts sweeps the accounts' expired rows until ctx is done.
func sweepAccounts(ctx context.Context, accounts *account.Service, log zerolog.Logger) {
	every(ctx, sweepEvery, func() {
		if n, err := accounts.Sweep(ctx); err != nil {
			log.Warn().Err(err).Msg("accounts: sweep")
		} else if n > 0 {
			log.Debug().Int("deleted", n).Msg("accounts: swept expired challenges and sessions")
		}
	})
}
