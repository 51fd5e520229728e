package metrics_test

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/web"
	"sirtommy/web/metrics"
)

func TestScrapeHasEveryFamily(t *testing.T) {
	races := race.NewService(race.Deps{Clock: race.SystemClock{}, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	if _, err := races.Create(race.Options{}); err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	srv := web.NewServer(web.Deps{Log: zerolog.Nop(), Races: races, Observer: m})
	m.Watch(&srv.Stats, races)
	m.MoveHandled(30*time.Microsecond, nil)
	m.MoveHandled(time.Millisecond, &race.Error{Code: "illegal-move"})
	m.MoveHandled(time.Millisecond, errors.New("boom"))

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, want := range []string{
		`sirtommy_websocket_connections 0`,
		`sirtommy_races{state="waiting"} 1`,
		`sirtommy_races{state="running"} 0`,
		`sirtommy_moves_total{result="accepted"} 1`,
		`sirtommy_moves_total{result="illegal-move"} 1`,
		`sirtommy_moves_total{result="internal"} 1`,
		`sirtommy_move_handling_seconds_count 3`,
		`sirtommy_send_queue_drops_total 0`,
		`sirtommy_rate_limited_total 0`,
		`sirtommy_flood_closes_total 0`,
		`go_goroutines `,
		`go_memstats_heap_inuse_bytes `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
}
