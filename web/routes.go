package web

import "net/http"

// addRoutes lists every route of the service.
func addRoutes(mux *http.ServeMux, s *Server) {
	mux.HandleFunc("GET /healthz", handleHealthz())
	mux.HandleFunc("GET /readyz", handleReadyz(&s.ready, s.deps.Check))
	mux.Handle("POST /api/races", limitPerClient(s.deps.Limits.RacesPerMinute, handleCreateRace(s.log, s.deps)))
	mux.HandleFunc("GET /api/races/{id}", handleGetRace(s.log, s.deps.Races))
	mux.HandleFunc("GET /api/races/{id}/solution", handleSolution(s.log, s.deps.Races, s.solutions))
	mux.HandleFunc("GET /api/races/{id}/analysis", handleAnalysis(s.log, s.deps.Races, s.coach))
	mux.HandleFunc("GET /api/variants", handleVariants())
	mux.HandleFunc("GET /api/lobby", handleLobby(s.deps.Lobby))
	mux.HandleFunc("GET /api/leaderboard/{variant}", handleLeaderboard(s.log, s.deps.Lobby))
	mux.HandleFunc("GET /api/players/{id}", handlePlayer(s.log, s.deps.Lobby))
	mux.HandleFunc("GET /api/players/{id}/games", handleGames(s.log, s.deps.Lobby))
	mux.HandleFunc("GET /api/players/{id}/games.txt", handleGamesText(s.log, s.deps.Lobby, s.deps.Races))
	mux.HandleFunc("GET /api/players/{id}/ratings/{variant}", handleRatingChart(s.log, s.deps.Lobby))
	mux.HandleFunc("GET /api/ghosts/{id}", handleGhost(s.log, s.deps.Lobby))
	mux.HandleFunc("GET /api/daily", handleDaily(s.log, s.deps.Lobby, false))
	mux.HandleFunc("GET /api/daily/{variant}/{day}", handleDaily(s.log, s.deps.Lobby, false))
	mux.HandleFunc("GET /api/daily/{variant}/{day}/reveal", handleDaily(s.log, s.deps.Lobby, true))
	mux.HandleFunc("GET /ws", s.handleWebsocket)
	mux.Handle("GET /", handleStatic())
}
