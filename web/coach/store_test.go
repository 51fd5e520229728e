package coach_test

import (
	"testing"

	"go.uber.org/goleak"

	"sirtommy/web/coach"
	"sirtommy/web/coach/coachtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemoryStore(t *testing.T) { coachtest.TestStore(t, coach.NewMemoryStore(nil)) }

func TestMemoryFleet(t *testing.T) { coachtest.TestFleet(t, coach.NewMemoryStore(nil)) }
