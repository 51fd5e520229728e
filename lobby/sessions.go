package lobby

import (
	"context"

	"sirtommy/race"
)

// Session is one connection in the lobby: a player (one player may have
// several sessions, one per tab) and where its events go.
type Session struct {
	l   *Lobby
	sub race.Subscriber
	who Identity // guarded by l.mu
}

// Welcome is the reply to Enter and Rename: the player's identity and a
// fresh token for it.
type Welcome struct {
	Identity
	Token string `json:"token"`
}

// Enter lets a connection into the lobby. With a token, it is that
// player's (refused with CodeInvalidToken or CodeExpiredToken); without,
// a new player is made, named name (checked) or a guest name. A name with
// a token renames the player. The session receives lobby events on sub
// until Leave (Refresh sends it the lobby as it is); the returned Welcome
// carries a renewed token.
func (l *Lobby) Enter(token, name string, sub race.Subscriber) (*Session, Welcome, error) {
	var who Identity
	if token != "" {
		w, err := l.deps.Tokens.Verify(token)
		if err != nil {
			return nil, Welcome{}, err
		}
		who = w
	} else {
		who.ID = NewPlayerID()
		who.Name = "guest-" + who.ID[len(who.ID)-4:]
	}
	if name != "" {
		n, err := CheckName(name)
		if err != nil {
			return nil, Welcome{}, err
		}
		who.Name = n
	}
	tok, who := l.deps.Tokens.Issue(who.ID, who.Name)
	s := &Session{l: l, sub: sub, who: who}
	l.mu.Lock()
	l.sessions[s] = struct{}{}
	l.online[who.ID]++
	l.mu.Unlock()
	l.syncListen(who.ID)
	l.log.Debug().Str("player", who.ID).Msg("entered the lobby")
	return s, Welcome{Identity: who, Token: tok}, nil
}

// VerifyToken checks a player token as Enter does, without entering: the
// web layer asks whose it is before admitting it (an account's player is
// admitted only with its session).
func (l *Lobby) VerifyToken(token string) (Identity, error) { return l.deps.Tokens.Verify(token) }

// IssueToken signs a fresh token for player id named name, for a player
// who proved who they are otherwise (an account's passkey or API token).
func (l *Lobby) IssueToken(id, name string) Welcome {
	tok, who := l.deps.Tokens.Issue(id, name)
	return Welcome{Identity: who, Token: tok}
}

// syncListen makes the courier listen for player exactly while this
// instance has a session of theirs, so that other instances reach them.
func (l *Lobby) syncListen(player string) {
	c := l.deps.Stores.Courier
	if c == nil {
		return
	}
	l.listenMu.Lock()
	defer l.listenMu.Unlock()
	l.mu.Lock()
	want := l.online[player] > 0
	l.mu.Unlock()
	if want == l.listening[player] {
		return
	}
	ctx, cancel := opCtx()
	defer cancel()
	var err error
	if want {
		err = c.Listen(ctx, player)
	} else {
		err = c.Unlisten(ctx, player)
	}
	if err != nil {
		l.log.Warn().Err(err).Str("player", player).Bool("listen", want).Msg("courier")
		return
	}
	if want {
		l.listening[player] = true
	} else {
		delete(l.listening, player)
	}
}

// Snapshot is the lobby as it is now, for a connection that asked for it
// (hello, the lobby message): unlike the updates Publish sends, it is the
// reply to a request, so it is sent even while the connection holds the
// updates back.
func (s *Session) Snapshot() *LobbyEvent { return s.l.snapshot() }

// Player is the session's identity.
func (s *Session) Player() Identity {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	return s.who
}

// Rename changes the player's display name (checked) and returns a new
// token carrying it; nothing changes on a refusal.
func (s *Session) Rename(name string) (Welcome, error) {
	n, err := CheckName(name)
	if err != nil {
		return Welcome{}, err
	}
	s.l.mu.Lock()
	tok, who := s.l.deps.Tokens.Issue(s.who.ID, n)
	s.who = who
	s.l.mu.Unlock()
	return Welcome{Identity: who, Token: tok}, nil
}

// Leave takes the session out: out of its queue and its open challenge at
// once, and, when it was the player's last session on any instance, out
// of the mass race they joined. Its player's invites stay until they
// expire.
func (s *Session) Leave() {
	l := s.l
	l.mu.Lock()
	if _, ok := l.sessions[s]; !ok {
		l.mu.Unlock()
		return
	}
	delete(l.sessions, s)
	delete(l.arenaWatch, s)
	if l.online[s.who.ID]--; l.online[s.who.ID] <= 0 {
		delete(l.online, s.who.ID)
	}
	last := l.online[s.who.ID] == 0
	l.mu.Unlock()
	l.syncListen(s.who.ID)
	if last {
		l.leaveMassIfGone(s.who.ID)
	}
	if l.dropWaiting(s) {
		l.challengesChanged()
	}
}

// dropWaiting takes s out of the queue and withdraws its challenge; it
// reports whether it withdrew one.
func (l *Lobby) dropWaiting(s *Session) (withdrew bool) {
	id := s.Player().ID
	l.mu.Lock()
	q := l.queuedBy[id]
	if q != nil && q.s == s {
		delete(l.queuedBy, id)
	} else {
		q = nil
	}
	open := l.forgetChallengesLocked(s)
	l.mu.Unlock()
	ctx, cancel := opCtx()
	defer cancel()
	if q != nil {
		if _, err := l.deps.Stores.Queue.Leave(ctx, id); err != nil {
			l.log.Warn().Err(err).Str("player", id).Msg("not unqueued")
		}
	}
	for _, cid := range open {
		_, ok, err := l.deps.Stores.Challenges.Take(ctx, cid)
		if err != nil {
			l.log.Warn().Err(err).Str("challenge", cid).Msg("not withdrawn")
		}
		withdrew = withdrew || ok
	}
	return withdrew
}

// waiting refuses a player who is queued, has a challenge open, or is in
// a lobby race not over.
func (l *Lobby) waiting(ctx context.Context, player string) error {
	if err := l.checkRacing(ctx, player); err != nil {
		return err
	}
	v, ok, err := l.deps.Stores.Queue.Queued(ctx, player)
	if err != nil {
		return unavailable(err)
	}
	if ok {
		return race.Errorf(CodeAlreadyQueued, "you are already in the %s queue", v)
	}
	id, ok, err := l.deps.Stores.Challenges.Of(ctx, player)
	if err != nil {
		return unavailable(err)
	}
	if ok {
		return race.Errorf(CodeAlreadyQueued, "you already have challenge %s open", id)
	}
	return nil
}
