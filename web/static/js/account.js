// Accounts with passkeys (PROTOCOL.md, section 8): keep the guest's
// player under a username with a passkey, sign in with it on any device,
// list, add and remove passkeys, recover with the recovery code, sign out
// (here or everywhere) and mint API tokens for bots. The session is an
// HttpOnly cookie the page never reads; after signing in or out the lobby
// opens a new websocket, which carries the new cookie.

import { h, fill } from "./ui.js";
import { ApiError, identity } from "./proto.js";

async function call(method, path, body) {
  const res = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: body !== undefined ? { "Content-Type": "application/json" } : {},
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  if (res.status === 204) return null;
  let data = null;
  try { data = await res.json(); } catch { /* not JSON */ }
  if (!res.ok) {
    const e = (data && data.error) || {};
    throw new ApiError(res.status, e.code || "http-" + res.status, e.message || res.statusText);
  }
  return data;
}

// base64url <-> ArrayBuffer, for the options and answers of WebAuthn.
const fromB64 = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)).buffer;
const toB64 = (b) => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

function creationOptions(o) {
  const p = o.publicKey;
  return {
    ...p,
    challenge: fromB64(p.challenge),
    user: { ...p.user, id: fromB64(p.user.id) },
    excludeCredentials: (p.excludeCredentials || []).map((c) => ({ ...c, id: fromB64(c.id) })),
  };
}

function requestOptions(o) {
  const p = o.publicKey;
  return { ...p, challenge: fromB64(p.challenge), allowCredentials: (p.allowCredentials || []).map((c) => ({ ...c, id: fromB64(c.id) })) };
}

function credentialJSON(c) {
  const r = c.response;
  const response = { clientDataJSON: toB64(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = toB64(r.attestationObject);
    if (r.getTransports) response.transports = r.getTransports();
  } else {
    response.authenticatorData = toB64(r.authenticatorData);
    response.signature = toB64(r.signature);
    if (r.userHandle) response.userHandle = toB64(r.userHandle);
  }
  return { id: c.id, rawId: toB64(c.rawId), type: c.type, response, clientExtensionResults: c.getClientExtensionResults() };
}

/** passkeysSupported says whether this browser can make passkeys. */
export const passkeysSupported = () => !!(window.PublicKeyCredential && navigator.credentials);

async function create(begin, finishPath) {
  const opts = await begin;
  const cred = await navigator.credentials.create({ publicKey: creationOptions(opts) });
  return call("POST", finishPath, credentialJSON(cred));
}

/**
 * me is {enabled, account, passkeys}: account null for a guest, enabled
 * false on a server without accounts.
 */
export async function me() {
  try {
    return await call("GET", "/api/account/me");
  } catch (ex) {
    if (ex.code === "sign-in-required") return { enabled: true, account: null }; // a session that ended
    throw ex;
  }
}

/** keep keeps the guest's player under username with a new passkey. */
export async function keep(username) {
  const id = identity.get();
  const k = await create(call("POST", "/api/account/keep/begin", { token: id ? id.token : "", username }), "/api/account/keep/finish");
  identity.set(k.welcome);
  return k;
}

/** signIn signs in with any passkey of this site. */
export async function signIn() {
  const opts = await call("POST", "/api/account/sign-in/begin");
  const cred = await navigator.credentials.get({ publicKey: requestOptions(opts) });
  const k = await call("POST", "/api/account/sign-in/finish", credentialJSON(cred));
  signedInAs(k.welcome);
  return k;
}

/** recover registers a new passkey with the recovery code, and signs in. */
export async function recover(username, code) {
  const k = await create(call("POST", "/api/account/recover/begin", { username, code }), "/api/account/recover/finish");
  signedInAs(k.welcome);
  return k;
}

/**
 * signedInAs keeps the account's player as this browser's: it may have
 * raced on another device, so its profile is read.
 */
function signedInAs(w) {
  identity.set(w);
  identity.update({ raced: true });
}

const addPasskey = () => create(call("POST", "/api/account/passkeys/begin"), "/api/account/passkeys/finish");
const removePasskey = (id) => call("DELETE", `/api/account/passkeys/${encodeURIComponent(id)}`);
const listTokens = () => call("GET", "/api/account/tokens");
const mintToken = (label) => call("POST", "/api/account/tokens", { label });
const revokeToken = (id) => call("DELETE", `/api/account/tokens/${encodeURIComponent(id)}`);

/** signOut ends this browser's session; the player starts as a new guest. */
export async function signOut(everywhere = false) {
  await call("POST", everywhere ? "/api/account/sign-out-everywhere" : "/api/account/sign-out");
  identity.forget();
}

const when = (t) => (t ? new Date(t).toLocaleString() : "never");

/** recoveryNote shows a recovery code once, with what it is for. */
function recoveryNote(code) {
  return h("div", { class: "recovery", role: "alert", "data-testid": "recovery-code" },
    h("p", {}, "Your recovery code, shown this once: keep it somewhere safe. It registers a new passkey if you lose yours, and works one time."),
    h("p", {}, h("code", { class: "code", "data-code": code }, code)));
}

/**
 * keepForm is the "Keep this player" form: a username and a button that
 * registers a passkey; onKept gets the server's reply.
 */
export function keepForm(idPrefix, onKept) {
  const input = h("input", { id: `${idPrefix}-username`, autocomplete: "username webauthn", maxlength: 20, minlength: 3, pattern: "[A-Za-z0-9_\\-]{3,20}", required: true, "aria-describedby": `${idPrefix}-username-hint` });
  const err = h("p", { class: "error", role: "alert", "data-testid": `${idPrefix}-keep-error` });
  const out = h("div", {});
  const form = h("form", {
    class: "row-form",
    "data-form": "keep",
    onsubmit: async (ev) => {
      ev.preventDefault();
      err.textContent = "";
      input.removeAttribute("aria-invalid");
      try {
        const k = await keep(input.value.trim());
        fill(out, recoveryNote(k.recoveryCode));
        form.hidden = true;
        onKept(k);
      } catch (ex) {
        input.setAttribute("aria-invalid", "true");
        err.textContent = ex.message || String(ex);
        input.focus();
      }
    },
  }, h("label", { for: input.id }, "Username"), input, h("button", { type: "submit", "data-action": "keep" }, "Keep this player"));
  return h("div", { class: "keep" },
    h("p", { class: "muted", id: `${idPrefix}-username-hint` }, "3 to 20 letters, digits, - and _. A passkey on this device keeps your rating and races; sign in with it anywhere."),
    form, err, out);
}

/**
 * accountPanel is the lobby's account panel. onChange is called after
 * signing in or out, for the lobby to say hello again as that player.
 */
export class AccountPanel {
  constructor(onChange) {
    this.onChange = onChange;
    this.el = h("section", { class: "panel", "data-panel": "account", "aria-labelledby": "account-title" });
    this.status = h("p", { role: "status", "data-testid": "account-status" });
    this.err = h("p", { class: "error", role: "alert", "data-testid": "account-error" });
    this.shown = null; // a recovery code or token to keep showing once
  }

  async load() {
    try {
      const m = await me();
      this.enabled = m.enabled;
      this.me = m.account ? m : null;
    } catch (ex) {
      this.me = null;
      this.err.textContent = ex.message;
    }
    this.render();
  }

  /** run does an action, showing its refusal; on success it reloads. */
  async run(fn, changed = false) {
    this.err.textContent = "";
    try {
      await fn();
      if (changed) this.onChange();
      await this.load();
    } catch (ex) {
      this.err.textContent = ex.message || String(ex);
    }
  }

  render() {
    const title = h("h2", { id: "account-title" }, "Account");
    if (this.enabled === false) {
      this.el.hidden = true;
      return;
    }
    if (!passkeysSupported()) {
      fill(this.el, title, h("p", { class: "muted" }, "This browser cannot make passkeys: you play as a guest."));
      return;
    }
    fill(this.el, title, this.me ? this.signedIn() : this.guest(), this.shown, this.status, this.err);
    this.el.dataset.account = this.me ? this.me.account.username : "";
  }

  guest() {
    const user = h("input", { id: "recover-username", autocomplete: "username" });
    const code = h("input", { id: "recover-code", autocomplete: "one-time-code", spellcheck: "false" });
    return [
      h("p", {}, "You play as a guest: your rating and races live in this browser only."),
      keepForm("account", (k) => { this.shown = recoveryNote(k.recoveryCode); this.onChange(); this.load(); }),
      h("p", {}, h("button", { type: "button", "data-action": "sign-in", onclick: () => this.run(signIn, true) }, "Sign in with a passkey")),
      h("details", {}, h("summary", {}, "Lost your passkey? Use your recovery code"),
        h("form", {
          class: "row-form",
          "data-form": "recover",
          onsubmit: (ev) => {
            ev.preventDefault();
            this.run(async () => {
              const k = await recover(user.value.trim(), code.value);
              this.shown = recoveryNote(k.recoveryCode);
            }, true);
          },
        }, h("label", { for: "recover-username" }, "Username"), user, h("label", { for: "recover-code" }, "Recovery code"), code,
        h("button", { type: "submit", "data-action": "recover" }, "Recover"))),
    ];
  }

  signedIn() {
    const a = this.me.account;
    const label = h("input", { id: "token-label", maxlength: 40, placeholder: "what it is for" });
    const tokens = h("ul", { class: "list", "data-testid": "api-tokens" });
    listTokens().then((r) => fill(tokens, r.tokens.length ? r.tokens.map((t) => h("li", { "data-token": t.id },
      h("strong", {}, t.label), ` · made ${when(t.created)} `,
      h("button", { type: "button", "data-action": "revoke-token", "aria-label": `Revoke the token ${t.label}`, onclick: () => this.run(() => revokeToken(t.id)) }, "Revoke")))
      : h("li", { class: "muted" }, "No API tokens."))).catch((ex) => { this.err.textContent = ex.message; });
    return [
      h("p", {}, "Signed in as ", h("strong", { "data-testid": "account-username" }, a.username), "."),
      h("h3", {}, "Passkeys"),
      h("ul", { class: "list", "data-testid": "passkeys" }, this.me.passkeys.map((p, i) => h("li", { "data-passkey": p.id },
        `Passkey ${i + 1} · added ${when(p.added)} · last used ${when(p.lastUsed)} `,
        h("button", { type: "button", "data-action": "remove-passkey", "aria-label": `Remove passkey ${i + 1}`, onclick: () => this.run(() => removePasskey(p.id)) }, "Remove")))),
      h("p", {}, h("button", { type: "button", "data-action": "add-passkey", onclick: () => this.run(addPasskey) }, "Add a passkey")),
      h("h3", {}, "API tokens"),
      h("p", { class: "muted" }, "For bots and scripts: send one as hello's token, or as Authorization: Bearer."),
      tokens,
      h("form", {
        class: "row-form",
        "data-form": "mint-token",
        onsubmit: (ev) => {
          ev.preventDefault();
          this.run(async () => {
            const t = await mintToken(label.value);
            this.shown = h("div", { role: "alert", "data-testid": "minted-token" }, h("p", {}, "Your new token, shown this once:"), h("p", {}, h("code", { class: "code" }, t.token)));
          });
        },
      }, h("label", { for: "token-label" }, "Label"), label, h("button", { type: "submit", "data-action": "mint-token" }, "Make a token")),
      h("p", { class: "actions" },
        h("button", { type: "button", "data-action": "sign-out", onclick: () => this.run(() => signOut(false), true) }, "Sign out"), " ",
        h("button", { type: "button", "data-action": "sign-out-everywhere", onclick: () => this.run(() => signOut(true), true) }, "Sign out everywhere")),
    ];
  }
}
