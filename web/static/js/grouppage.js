// GroupPage is what the pages of a group of the lobby (a room, an arena)
// share: one websocket that says hello, enters the group and reconnects,
// backing off, when it drops; a first-time visitor first gives the name
// the others will see. A page extends it with its own drawing and says
// how to enter the group and what to call things (the hooks below).

import { h, fill } from "./ui.js";
import { Socket, identity, playerName } from "./proto.js";

const RECONNECT_MAX_MS = 5000;

export class GroupPage {
  constructor(root) {
    this.root = root;
    this.me = null; // welcome
    this.sock = null;
    this.attempt = 0;
    this.leaving = false;
    window.addEventListener("pagehide", () => { this.leaving = true; if (this.sock) this.sock.close(); });
    window.addEventListener("pageshow", (ev) => { if (ev.persisted) location.reload(); });
  }

  // Hooks, for a page to define:
  //   statusEl, errorEl, bodyEl   where the connection's state, a refusal and the name form go
  //   listen(sock)                subscribes to the group's messages
  //   enter(sock)                 joins or watches the group (a promise)
  //   noLobbyText                 what to say on a server without a lobby
  //   errorText(err)              a refusal in words
  //   nameForm                    {id, testid, prompt, action, button} of the name form

  start() {
    if (identity.get()) this.connect();
    else this.askName();
  }

  askName() {
    const f = this.nameForm;
    this.statusEl.textContent = "";
    const input = h("input", { id: f.id, autocomplete: "nickname", maxlength: 24, required: true, value: playerName.get() });
    const submit = (ev) => {
      ev.preventDefault();
      this.errorEl.textContent = "";
      this.connect(input.value.trim());
    };
    fill(this.bodyEl,
      h("p", {}, f.prompt),
      h("form", { class: "row-form", "data-testid": f.testid, onsubmit: submit },
        h("label", { for: f.id }, "Your name"), input,
        h("button", { type: "submit", class: "primary", "data-action": f.action }, f.button)));
    input.focus();
  }

  async connect(name) {
    const sock = new Socket();
    this.sock = sock;
    this.listen(sock);
    sock.on("close", (ev) => {
      if (this.leaving || ev.byUs) return;
      if (ev.wasOpen) this.statusEl.textContent = "Connection lost: reconnecting…";
      setTimeout(() => this.connect(), Math.min(RECONNECT_MAX_MS, 250 * 2 ** this.attempt++));
    });
    try {
      await sock.open();
      this.me = await sock.hello(name);
      if (!this.me) {
        this.statusEl.textContent = this.noLobbyText;
        return;
      }
      await this.enter(sock);
      this.attempt = 0;
      this.statusEl.textContent = "";
    } catch (err) {
      if (err && err.code === "closed") return; // the close handler reconnects
      if (err && err.code === "bad-name") {
        // A name the server refuses: ask again, on a new connection.
        sock.close();
        this.askName();
      }
      this.errorEl.textContent = this.errorText(err);
      this.statusEl.textContent = "";
    }
  }
}
