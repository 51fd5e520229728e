package lobby

import "sirtommy/race"

// Error codes the lobby adds to race's; the lobby refuses with *race.Error
// so that the web layer maps every refusal the same way (PROTOCOL.md).
const (
	CodeInvalidToken    race.Code = "invalid-token"     // a player token that is malformed or not signed by this server
	CodeExpiredToken              = "expired-token"     // a player token past its expiry: get a new one
	CodeBadName                   = "bad-name"          // a display name empty, too long, or with control characters or markup
	CodeNotIdentified             = "not-identified"    // a lobby request before hello
	CodeAlreadyQueued             = "already-queued"    // in a queue or with an open challenge already
	CodeNotQueued                 = "not-queued"        // leaving a queue, or asking for the computer, while not in one
	CodeNoSuchInvite              = "no-such-invite"    // no invite has that code
	CodeInviteExpired             = "invite-expired"    // the invite is too old, or already used
	CodeOwnInvite                 = "own-invite"        // accepting the invite you made
	CodeInviterAway               = "inviter-away"      // the invite's author has no connection now: try again later
	CodeNoSuchChallenge           = "no-such-challenge" // no open challenge has that id (taken or withdrawn)
	CodeOwnChallenge              = "own-challenge"     // accepting your own challenge
	CodeNotYourSeat               = "not-your-seat"     // a race whose seats are reserved for other players
	CodeNoSuchPlayer              = "no-such-player"    // no player has that id
	CodeNoComputer                = "no-computer"       // this server has no computer players
	CodeInRace                    = "in-race"           // queuing or starting a race while in a lobby race not over
)
