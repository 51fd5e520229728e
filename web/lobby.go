package web

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/lobby"
	"sirtommy/lobby/account"
	"sirtommy/race"
)

// Lobby replies (PROTOCOL.md, section 7).

// welcomeMsg answers hello and rename: who the player is and their token.
type welcomeMsg struct {
	V    int    `json:"v"`
	Type string `json:"type"` // "welcome"
	ID   string `json:"id,omitempty"`
	lobby.Welcome
}

// queuedMsg answers queue and unqueue.
type queuedMsg struct {
	V       int    `json:"v"`
	Type    string `json:"type"` // "queued" or "unqueued"
	ID      string `json:"id,omitempty"`
	Variant string `json:"variant,omitempty"`
}

// invitedMsg answers invite: the code and the link to give a friend.
type invitedMsg struct {
	V         int               `json:"v"`
	Type      string            `json:"type"` // "invited"
	ID        string            `json:"id,omitempty"`
	Code      string            `json:"code"`
	Link      string            `json:"link"`
	ExpiresAt time.Time         `json:"expiresAt"`
	Options   lobby.RaceOptions `json:"options"`
}

// roomMsg answers room, join-room and leave-room: the room as it is now,
// with the link to give the others. Its members get the same, without id
// or link, at every change (lobby.RoomEvent).
type roomMsg struct {
	V    int        `json:"v"`
	Type string     `json:"type"` // "room"
	ID   string     `json:"id,omitempty"`
	Room lobby.Room `json:"room"`
	Link string     `json:"link"`
	// Left is set in the answer to leave-room: the room is no longer
	// the player's.
	Left bool `json:"left,omitempty"`
}

// massMsg answers join-mass (the mass race joined, as the lobby lists
// it) and leave-mass (left, without it).
type massMsg struct {
	V    int             `json:"v"`
	Type string          `json:"type"` // "mass-joined" or "mass-left"
	ID   string          `json:"id,omitempty"`
	Mass *lobby.MassRace `json:"mass,omitempty"`
}

// arenaMsg answers arena-join, arena-pause and arena-watch: the arena as
// the player sees it.
type arenaMsg struct {
	V     int              `json:"v"`
	Type  string           `json:"type"` // "arena", or "arena-unwatched" (without it)
	ID    string           `json:"id,omitempty"`
	Arena *lobby.ArenaView `json:"arena,omitempty"`
}

// challengedMsg answers challenge and cancel-challenge.
type challengedMsg struct {
	V         int                  `json:"v"`
	Type      string               `json:"type"` // "challenged" or "challenge-cancelled"
	ID        string               `json:"id,omitempty"`
	Challenge *lobby.ChallengeInfo `json:"challenge,omitempty"`
}

// ghostMadeMsg answers ghost: the challenge and its link.
type ghostMadeMsg struct {
	V     int             `json:"v"`
	Type  string          `json:"type"` // "ghost-made"
	ID    string          `json:"id,omitempty"`
	Ghost lobby.GhostInfo `json:"ghost"`
	Link  string          `json:"link"`
}

// handleLobby answers the lobby's messages; it reports false for a type it
// does not know.
func (c *conn) handleLobby(m clientMsg) bool {
	switch m.Type {
	case "hello", "rename", "lobby", "queue", "unqueue", "play-computer",
		"invite", "accept-invite", "challenge", "cancel-challenge", "accept-challenge",
		"ghost", "race-ghost", "play-daily", "race-daily-leader",
		"room", "join-room", "leave-room", "start-room", "join-mass", "leave-mass",
		"arena-join", "arena-pause", "arena-watch", "arena-unwatch":
	default:
		return false
	}
	l := c.srv.deps.Lobby
	if l == nil {
		c.enqueue(newError(m.ID, CodeNoLobby, "this server has no lobby"))
		return true
	}
	if m.Type == "hello" {
		c.hello(l, m)
		return true
	}
	s := c.session
	if s == nil {
		c.enqueue(newError(m.ID, lobby.CodeNotIdentified, "say hello first"))
		return true
	}
	opts := m.RaceOptions
	var err error
	switch m.Type {
	case "rename":
		var w lobby.Welcome
		if err = c.checkRename(c.ctx, m.Name); err != nil {
			break
		}
		if w, err = s.Rename(m.Name); err == nil {
			c.playerToken = w.Token
			c.enqueue(&welcomeMsg{V: ProtocolVersion, Type: "welcome", ID: m.ID, Welcome: w})
		}
	case "lobby":
		c.enqueue(s.Snapshot())
	case "queue":
		var v string
		if v, err = s.QueueGrade(m.Variant, m.Grade); err == nil {
			// "matched" may already be on its way: queued goes first only
			// if nobody was waiting.
			c.enqueue(&queuedMsg{V: ProtocolVersion, Type: "queued", ID: m.ID, Variant: v})
		}
	case "unqueue":
		if err = s.Unqueue(); err == nil {
			c.enqueue(&queuedMsg{V: ProtocolVersion, Type: "unqueued", ID: m.ID})
		}
	case "play-computer":
		err = s.PlayComputer()
	case "invite":
		var inv lobby.Invite
		if inv, err = s.Invite(opts); err == nil {
			link := fmt.Sprintf("%s/?invite=%s", c.site, inv.Code)
			c.enqueue(&invitedMsg{V: ProtocolVersion, Type: "invited", ID: m.ID, Code: inv.Code, Link: link, ExpiresAt: inv.Expires, Options: inv.Options})
		}
	case "accept-invite":
		err = s.AcceptInvite(m.Code)
	case "challenge":
		var ch lobby.ChallengeInfo
		if ch, err = s.Challenge(opts); err == nil {
			c.enqueue(&challengedMsg{V: ProtocolVersion, Type: "challenged", ID: m.ID, Challenge: &ch})
		}
	case "cancel-challenge":
		if err = s.CancelChallenge(); err == nil {
			c.enqueue(&challengedMsg{V: ProtocolVersion, Type: "challenge-cancelled", ID: m.ID})
		}
	case "accept-challenge":
		err = s.AcceptChallenge(m.Challenge)
	case "ghost":
		seat := -1
		if m.Seat != nil {
			seat = *m.Seat
		}
		var g lobby.GhostInfo
		if g, err = s.MakeGhost(m.Race, seat, m.Best); err == nil {
			link := fmt.Sprintf("%s/?ghost=%s", c.site, g.ID)
			c.enqueue(&ghostMadeMsg{V: ProtocolVersion, Type: "ghost-made", ID: m.ID, Ghost: g, Link: link})
		}
	case "race-ghost":
		err = s.RaceGhost(m.Ghost)
	case "play-daily":
		err = s.PlayDaily(m.Variant)
	case "race-daily-leader":
		err = s.RaceDailyLeader(m.Variant)
	case "room", "join-room", "leave-room":
		var r lobby.Room
		switch m.Type {
		case "room":
			r, err = s.MakeRoom(opts)
		case "join-room":
			r, err = s.JoinRoom(m.Code)
		default:
			r, err = s.LeaveRoom(m.Code)
		}
		if err == nil {
			link := fmt.Sprintf("%s/?room=%s", c.site, r.Code)
			c.enqueue(&roomMsg{V: ProtocolVersion, Type: "room", ID: m.ID, Room: r, Link: link, Left: m.Type == "leave-room"})
		}
	case "start-room":
		err = s.StartRoom(m.Code)
	case "join-mass":
		var mr lobby.MassRace
		if mr, err = s.JoinMass(m.Variant); err == nil {
			c.enqueue(&massMsg{V: ProtocolVersion, Type: "mass-joined", ID: m.ID, Mass: &mr})
		}
	case "leave-mass":
		if err = s.LeaveMass(); err == nil {
			c.enqueue(&massMsg{V: ProtocolVersion, Type: "mass-left", ID: m.ID})
		}
	case "arena-join", "arena-pause", "arena-watch":
		var ev lobby.ArenaEvent
		switch m.Type {
		case "arena-join":
			ev, err = s.JoinArena(m.Arena)
		case "arena-pause":
			ev, err = s.PauseArena(m.Arena)
		default:
			ev, err = s.WatchArena(m.Arena)
		}
		if err == nil {
			c.enqueue(&arenaMsg{V: ProtocolVersion, Type: "arena", ID: m.ID, Arena: &ev.Arena})
		}
	case "arena-unwatch":
		s.UnwatchArena()
		c.enqueue(&arenaMsg{V: ProtocolVersion, Type: "arena-unwatched", ID: m.ID})
	}
	if err != nil {
		c.enqueue(raceError(m.ID, err))
	}
	return true
}

// hello identifies the connection's player: by their token, or as a new
// player. A second hello replaces the first.
func (c *conn) hello(l *lobby.Lobby, m clientMsg) {
	if err := c.admit(c.ctx, l, &m); err != nil {
		c.enqueue(raceError(m.ID, err))
		return
	}
	s, w, err := l.Enter(m.Token, m.Name, c)
	if err != nil {
		c.enqueue(raceError(m.ID, err))
		return
	}
	if c.session != nil {
		c.session.Leave()
	}
	c.session, c.playerToken = s, w.Token
	c.log = c.log.With().Str("player", w.ID).Logger()
	c.enqueue(&welcomeMsg{V: ProtocolVersion, Type: "welcome", ID: m.ID, Welcome: w})
	c.enqueue(s.Snapshot())
}

// maxListed bounds the n of leaderboards and histories over HTTP.
const maxListed = 100

func listLen(r *http.Request, def int) int {
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil || n <= 0 {
		return def
	}
	return min(n, maxListed)
}

func handleLobby(l *lobby.Lobby) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if l == nil {
			writeError(w, http.StatusNotFound, CodeNoLobby, "this server has no lobby")
			return
		}
		writeJSON(w, http.StatusOK, l.Snapshot())
	}
}

// leaderEntry is a leaderboard's standing with whether its player is an
// account (kept with a passkey) or a guest.
type leaderEntry struct {
	lobby.Standing
	Account bool `json:"account"`
}

func handleLeaderboard(log zerolog.Logger, l *lobby.Lobby, accounts *account.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if l == nil {
			writeError(w, http.StatusNotFound, CodeNoLobby, "this server has no lobby")
			return
		}
		board, err := l.Leaderboard(r.Context(), r.PathValue("variant"), listLen(r, 20))
		if err != nil {
			if race.ErrorCode(err) == race.CodeInternal {
				log.Error().Err(err).Msg("leaderboard")
			}
			writeRaceError(w, err)
			return
		}
		entries := make([]leaderEntry, len(board))
		players := make([]string, len(board))
		for i, st := range board {
			entries[i].Standing, players[i] = st, st.Player
		}
		if accounts != nil {
			kept, err := accounts.KeptAmong(r.Context(), players)
			if err != nil {
				log.Warn().Err(err).Msg("leaderboard: accounts not marked")
			}
			for i := range entries {
				entries[i].Account = kept[entries[i].Player]
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"variant": r.PathValue("variant"), "standings": entries})
	}
}

func handlePlayer(log zerolog.Logger, l *lobby.Lobby) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if l == nil {
			writeError(w, http.StatusNotFound, CodeNoLobby, "this server has no lobby")
			return
		}
		p, err := l.Profile(r.Context(), r.PathValue("id"), listLen(r, 20))
		if err != nil {
			if race.ErrorCode(err) == race.CodeInternal {
				log.Error().Err(err).Msg("player profile")
			}
			writeRaceError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, p)
	}
}

// handleGhost is a ghost challenge as its link shows it (counts only).
func handleGhost(log zerolog.Logger, l *lobby.Lobby) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if l == nil {
			writeError(w, http.StatusNotFound, CodeNoLobby, "this server has no lobby")
			return
		}
		g, err := l.Ghost(r.Context(), r.PathValue("id"))
		if err != nil {
			if race.ErrorCode(err) == race.CodeInternal {
				log.Error().Err(err).Msg("ghost")
			}
			writeRaceError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, g)
	}
}

// handleDaily is today's deal (GET /api/daily) or a day's (GET
// /api/daily/{variant}/{day}): the commitment, the board, the asking
// player's entry (?player=ID), and, once the day is over, the deal.
func handleDaily(log zerolog.Logger, l *lobby.Lobby, reveal bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if l == nil {
			writeError(w, http.StatusNotFound, CodeNoLobby, "this server has no lobby")
			return
		}
		variant, day := r.PathValue("variant"), r.PathValue("day")
		if variant == "" {
			variant = r.URL.Query().Get("variant")
		}
		var in lobby.DailyInfo
		var err error
		if reveal {
			in, err = l.DailyReveal(r.Context(), variant, day)
		} else {
			in, err = l.Daily(r.Context(), variant, day, r.URL.Query().Get("player"), listLen(r, 20))
		}
		if err != nil {
			if race.ErrorCode(err) == race.CodeInternal {
				log.Error().Err(err).Msg("daily")
			}
			writeRaceError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, in)
	}
}

// handleArenaResults answers GET /api/arenas/{id}/results[?player=ID]:
// the arena's counted races, each with its players' scores, in the
// order they were counted; with player, only theirs.
func handleArenaResults(log zerolog.Logger, l *lobby.Lobby) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if l == nil {
			writeError(w, http.StatusNotFound, CodeNoLobby, "this server has no lobby")
			return
		}
		id, player := r.PathValue("id"), r.URL.Query().Get("player")
		results, err := l.ArenaResults(r.Context(), id, player)
		if err != nil {
			if race.ErrorCode(err) == race.CodeInternal {
				log.Error().Err(err).Str("arena", id).Msg("arena results")
			}
			writeRaceError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"arena": id, "player": player, "results": results})
	}
}
