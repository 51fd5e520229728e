package web

import (
	"net/http"

	"github.com/klauspost/compress/gzhttp"
)

// compressed gzips an API answer when the client takes it and the answer is
// big enough to gain (the library's threshold); the client's own files are
// compressed ahead of time instead (static.go).
func compressed(h http.HandlerFunc) http.Handler { return gzhttp.GzipHandler(h) }

// addRoutes lists every route of the service.
func addRoutes(mux *http.ServeMux, s *Server) {
	mux.HandleFunc("GET /healthz", handleHealthz())
	mux.HandleFunc("GET /readyz", handleReadyz(&s.ready, s.deps.Check))
	mux.Handle("POST /api/races", limitPerClient(s.deps.Limits.RacesPerMinute, handleCreateRace(s.log, s.deps)))
	mux.Handle("GET /api/races/{id}", compressed(handleGetRace(s.log, s.deps.Races)))
	mux.Handle("GET /api/races/{id}/solution", compressed(handleSolution(s.log, s.deps.Races, s.solutions)))
	mux.Handle("GET /api/races/{id}/analysis", compressed(handleAnalysis(s.log, s.deps.Races, s.coach)))
	mistakes := newMistakeRoutes(s)
	mux.Handle("POST /api/races/{id}/practice", everyRequestLimiter(s.deps.Limits.PracticePerMinute,
		"too many tries from your address; try again in a minute")(handlePractice(s.log, s.deps.Races, s.practice, mistakes)))
	mux.Handle("GET /api/variants", compressed(handleVariants()))
	mux.Handle("GET /api/lobby", compressed(handleLobby(s.deps.Lobby)))
	mux.Handle("GET /api/leaderboard/{variant}", compressed(handleLeaderboard(s.log, s.deps.Lobby, s.deps.Accounts)))
	mux.Handle("GET /api/players/{id}", compressed(handlePlayer(s.log, s.deps.Lobby)))
	mux.Handle("GET /api/players/{id}/games", compressed(handleGames(s.log, s.deps.Lobby)))
	mux.Handle("GET /api/players/{id}/games.txt", compressed(handleGamesText(s.log, s.deps.Lobby, s.deps.Races)))
	mux.Handle("GET /api/players/{id}/ratings/{variant}", compressed(handleRatingChart(s.log, s.deps.Lobby)))
	mux.Handle("GET /api/arenas/{id}/results", compressed(handleArenaResults(s.log, s.deps.Lobby)))
	mux.Handle("GET /api/ghosts/{id}", compressed(handleGhost(s.log, s.deps.Lobby)))
	mux.Handle("GET /api/daily", compressed(handleDaily(s.log, s.deps.Lobby, false)))
	mux.Handle("GET /api/daily/{variant}/{day}", compressed(handleDaily(s.log, s.deps.Lobby, false)))
	mux.Handle("GET /api/daily/{variant}/{day}/reveal", compressed(handleDaily(s.log, s.deps.Lobby, true)))
	addAccountRoutes(mux, s)
	addMistakeRoutes(mux, mistakes)
	mux.HandleFunc("GET /ws", s.handleWebsocket)
	mux.Handle("GET /", handleStatic())
}
