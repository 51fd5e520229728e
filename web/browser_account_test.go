package web_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
)

// addAuthenticator gives the page's browser context a virtual platform
// authenticator (DevTools' WebAuthn domain): resident keys, user
// verification that succeeds, presence simulated.
func (p *page) addAuthenticator() webauthn.AuthenticatorID {
	p.t.Helper()
	var id webauthn.AuthenticatorID
	p.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
			return err
		}
		r, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
			Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21,
			Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true, HasUserVerification: true,
			IsUserVerified: true, AutomaticPresenceSimulation: true,
			// The protocol library sends every credential a CMTG field, which
			// Chromium refuses from an authenticator without the extension.
			HasCmtgKey: true,
		}})
		id = r.AuthenticatorID
		return err
	}))
	return id
}

// credentials are the passkeys of the page's virtual authenticator.
func (p *page) credentials(id webauthn.AuthenticatorID) []*webauthn.Credential {
	p.t.Helper()
	var out []*webauthn.Credential
	p.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		r, err := chromedp.Call(ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: id})
		out = r.Credentials
		return err
	}))
	return out
}

// addCredential copies a passkey into the page's authenticator, as a
// passkey synced to another device.
func (p *page) addCredential(id webauthn.AuthenticatorID, c *webauthn.Credential) {
	p.t.Helper()
	// The key and its identity only: what syncing a passkey carries.
	c = &webauthn.Credential{CredentialID: c.CredentialID, IsResidentCredential: c.IsResidentCredential, RpID: c.RpID,
		PrivateKey: c.PrivateKey, UserHandle: c.UserHandle, SignCount: c.SignCount, UserName: c.UserName, UserDisplayName: c.UserDisplayName}
	p.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, webauthn.AddCredential, webauthn.AddCredentialParams{AuthenticatorID: id, Credential: c})
		return err
	}))
}

// accountName waits for the account panel to say who is signed in.
func (p *page) waitSignedIn(username string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`(document.querySelector("[data-testid=account-username]")||{}).textContent === %q`, username))
}

// TestBrowserAccountPasskeys follows issue 31's test: ann, a guest, plays
// a rated race and keeps her player with a passkey from the result; carol's
// browser (another context, the passkey synced into its authenticator)
// signs in and is the same player with the same rating and history; a
// removed passkey is refused; the recovery code works once.
func TestBrowserAccountPasskeys(t *testing.T) {
	srv := startLiveServerWith(t, liveOptions{accounts: true})
	b := newBrowser(t)
	ann, bob := b.newPage("ann", 1280, 900), b.newPage("bob", 1280, 900)
	annAuth := ann.addAuthenticator()
	for _, p := range []*page{ann, bob} {
		p.do(chromedp.Navigate(srv.site + "/"))
		p.waitLobby()
	}
	annID := eval[string](ann, `document.querySelector("[data-testid=my-id]").textContent`)
	bobName := eval[string](bob, `document.querySelector("[data-testid=my-name]").textContent`)
	// A rated race: quick play; both resign, and the cards up decide it.
	ann.click(`[data-action=queue]`)
	ann.waitJS(`/^Waiting for an opponent/.test(document.querySelector("[data-testid=queue-status]").textContent)`)
	bob.click(`[data-action=queue]`)
	ann.waitRaceState("running")
	bob.waitRaceState("running")
	bob.resign()
	ann.resign()
	ann.waitRaceState("finished")
	ann.waitJS(`(document.querySelector("[data-reason]")||{}).textContent === "A rated race."`)

	// Keep this player, from the result.
	ann.waitJS(`!document.querySelector("[data-testid=keep-result]").hidden`)
	ann.do(chromedp.SetValue(chromedp.CSS("#result-username"), "Ann_1"))
	ann.click(`[data-testid=keep-result] [data-action=keep]`)
	ann.waitJS(`!!document.querySelector("[data-testid=keep-result] [data-code]")`)
	code := eval[string](ann, `document.querySelector("[data-testid=keep-result] [data-code]").dataset.code`)
	ann.screenshot("kept")

	// Back in the lobby she is the account, the same player.
	ann.do(chromedp.Navigate(srv.site + "/"))
	ann.waitLobby()
	ann.waitSignedIn("Ann_1")
	ann.expectAccessible("the lobby of an account")
	if id := eval[string](ann, `document.querySelector("[data-testid=my-id]").textContent`); id != annID {
		t.Fatalf("ann is player %s after keeping, was %s", id, annID)
	}
	var prof struct {
		Standings []struct {
			Rating struct{ Rating float64 }
		}
	}
	res, err := http.Get(srv.url + "/api/players/" + annID)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(res.Body).Decode(&prof)
	res.Body.Close()
	if len(prof.Standings) != 1 {
		t.Fatalf("ann's standings: %+v", prof)
	}
	rating := fmt.Sprint(int(prof.Standings[0].Rating.Rating + 0.5))

	// carol's browser, with the passkey synced, signs in: the same player,
	// rating and history.
	carol := b.newPage("carol", 1280, 900)
	carolAuth := carol.addAuthenticator()
	creds := ann.credentials(annAuth)
	if len(creds) != 1 {
		t.Fatalf("ann's authenticator holds %d passkeys, want 1", len(creds))
	}
	carol.addCredential(carolAuth, creds[0])
	carol.do(chromedp.Navigate(srv.site + "/"))
	carol.waitLobby()
	carol.click(`[data-action=sign-in]`)
	carol.waitSignedIn("Ann_1")
	carol.waitJS(fmt.Sprintf(`document.querySelector("[data-testid=my-id]").textContent === %q && document.querySelector(".lobby-page").dataset.lobby === "ready"`, annID))
	carol.waitJS(fmt.Sprintf(`document.querySelector("[data-testid=profile]").textContent.includes(%q) && document.querySelector("[data-testid=profile]").textContent.includes(%q)`, rating, bobName))
	carol.screenshot("signed-in")

	// ann adds a second passkey (her authenticator is emptied first, as a
	// new device would be: it would not make a second passkey for the
	// account beside one it holds) and removes the first, carol's; carol
	// signs out, plays as a new guest, and her sign-in with the removed
	// passkey is refused.
	ann.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, webauthn.ClearCredentials, webauthn.ClearCredentialsParams{AuthenticatorID: annAuth})
		return err
	}))
	ann.click(`[data-action=add-passkey]`)
	ann.waitJS(`document.querySelectorAll("[data-testid=passkeys] li").length === 2`)
	ann.click(fmt.Sprintf(`[data-passkey=%q] [data-action=remove-passkey]`, base64.RawURLEncoding.EncodeToString(creds[0].CredentialID)))
	ann.waitJS(`document.querySelectorAll("[data-testid=passkeys] li").length === 1`)
	carol.click(`[data-action=sign-out]`)
	carol.waitJS(`!!document.querySelector("[data-action=sign-in]") && document.querySelector(".lobby-page").dataset.lobby === "ready"`)
	carol.waitJS(fmt.Sprintf(`document.querySelector("[data-testid=my-id]").textContent !== %q`, annID))
	carol.click(`[data-action=sign-in]`)
	carol.waitJS(`document.querySelector("[data-testid=account-error]").textContent !== ""`)
	if msg := carol.text(`[data-testid=account-error]`); !strings.Contains(msg, "no account has that passkey") {
		t.Fatalf("carol's sign-in with the removed passkey: %q", msg)
	}
	if id := eval[string](carol, `document.querySelector("[data-testid=my-id]").textContent`); id == annID {
		t.Fatal("carol plays as ann after signing out")
	}

	carol.expectAccessible("the lobby of a guest, its account panel")
	// The recovery code registers a new passkey once; then it is refused.
	dave := b.newPage("dave", 1280, 900)
	dave.addAuthenticator()
	eve := b.newPage("eve", 1280, 900)
	eve.addAuthenticator()
	for i, p := range []*page{dave, eve} {
		p.do(chromedp.Navigate(srv.site + "/"))
		p.waitLobby()
		p.click(`[data-panel=account] summary`)
		p.do(chromedp.SetValue(chromedp.CSS("#recover-username"), "ann_1"), chromedp.SetValue(chromedp.CSS("#recover-code"), strings.ToLower(code)))
		p.click(`[data-action=recover]`)
		if i == 0 {
			p.waitSignedIn("Ann_1")
			p.waitJS(`!!document.querySelector("[data-testid=recovery-code] [data-code]")`)
			if fresh := eval[string](p, `document.querySelector("[data-testid=recovery-code] [data-code]").dataset.code`); fresh == code {
				t.Fatal("recovering gave the spent code again")
			}
		} else {
			p.waitJS(`document.querySelector("[data-testid=account-error]").textContent.includes("used already")`)
		}
	}
	// carol's and eve's pages logged their refused requests (400).
	for _, p := range []*page{ann, dave} {
		p.expectCleanConsole()
	}
}
