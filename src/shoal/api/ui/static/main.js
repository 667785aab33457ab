// Sign-in and the router: `#/page/arg?query`. A page's show() may return a cleanup function,
// called when the user leaves it (to stop listening to the event stream).
"use strict";
(function (S) {
  const { html } = S;
  let cleanup = null;

  function signOut(message) {
    S.events.stop();
    S.setToken(null);
    S.me.admin = false;
    sessionStorage.setItem("shoal.message", message || "");
    location.hash = "#/login";
    route();
  }
  S.signOut = signOut;

  async function whoAmI() {
    // Only an admin may list hosts: the answer tells the UI which pages to offer.
    try { await S.api("GET", "/v1/hosts"); S.me.admin = true; }
    catch (e) { if (e.status === 401) throw e; S.me.admin = false; }
    const who = document.getElementById("who");
    who.hidden = false;
    who.textContent = S.me.admin ? "admin" : "tenant";
    who.dataset.role = who.textContent;
  }

  async function enter(view, token, errorBox) {
    S.setToken(token);
    try {
      await S.api("GET", "/v1/clusters");
      await whoAmI();
    } catch (err) {
      S.setToken(null);
      view.querySelector(errorBox).innerHTML = S.errorBox(err, "Not signed in").s;
      return;
    }
    S.events.start();  // in the background: the first page need not wait for the history
    location.hash = "#/topology";
  }

  async function showLogin(view) {
    const message = sessionStorage.getItem("shoal.message") || "";
    sessionStorage.removeItem("shoal.message");
    document.getElementById("nav").hidden = true;
    document.getElementById("logout").hidden = true;
    document.getElementById("who").hidden = true;
    document.getElementById("stream-state").hidden = true;
    let mode = "shoal";
    try { mode = (await (await fetch("/ui/api/auth")).json()).mode; } catch (_) { /* token only */ }
    const keystone = mode === "keystone" ? html`
      <form id="ks-login" class="login" aria-labelledby="ks-h">
        <h2 id="ks-h">Keystone user</h2>
        <p><label for="ks-user">User name</label> <input id="ks-user" name="username" autocomplete="username" required></p>
        <p><label for="ks-password">Password</label> <input id="ks-password" name="password" type="password" autocomplete="current-password" required></p>
        <p><label for="ks-project">Project</label> <input id="ks-project" name="project" required></p>
        <p><label for="ks-domain">Domain</label> <input id="ks-domain" name="domain" value="Default" required></p>
        <p><button type="submit">Sign in with Keystone</button></p>
        <div id="ks-error"></div>
      </form><h2>Or a token</h2>` : "";
    view.innerHTML = html`<h1 tabindex="-1">Sign in to Shoal</h1>
      ${message ? html`<p class="error" role="alert">${message}</p>` : ""}${keystone}
      <form id="login" class="login">
        <p><label for="token">Token</label>
        <input id="token" name="token" type="password" autocomplete="off" required aria-describedby="token-help"></p>
        <p id="token-help" class="muted">${mode === "keystone"
          ? "A Keystone token (openstack token issue)."
          : html`A Shoal project token (the admin's is in <code>$SHOAL_HOME/admin-token</code>).`}</p>
        <p><button type="submit">Sign in</button></p>
        <div id="login-error"></div>
      </form>`.s;
    view.querySelector(mode === "keystone" ? "#ks-user" : "#token").focus();
    view.querySelector("#login").addEventListener("submit", async (e) => {
      e.preventDefault();
      await enter(view, view.querySelector("#token").value.trim(), "#login-error");
    });
    const ks = view.querySelector("#ks-login");
    if (ks) {
      ks.addEventListener("submit", async (e) => {
        e.preventDefault();
        const body = Object.fromEntries(new FormData(ks).entries());
        const r = await fetch("/ui/api/login", {
          method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
        });
        const data = await r.json().catch(() => null);
        ks.querySelector("#ks-password").value = "";
        if (!r.ok) {
          view.querySelector("#ks-error").innerHTML = S.errorBox(new S.ApiError(r.status, data), "Not signed in").s;
          return;
        }
        await enter(view, data.token, "#ks-error");
      });
    }
  }

  async function route() {
    if (cleanup) { try { cleanup(); } catch (_) { /* the page is gone anyway */ } cleanup = null; }
    const view = S.view();
    const hash = location.hash.replace(/^#\/?/, "") || "topology";
    const [path, query] = hash.split("?");
    const [page, arg] = path.split("/").map(decodeURIComponent);
    if (!S.token() || page === "login") {
      if (S.token() && page === "login") { location.hash = "#/topology"; return; }
      await showLogin(view);
      return;
    }
    document.getElementById("nav").hidden = false;
    document.getElementById("logout").hidden = false;
    const handler = S.pages[page] || S.pages.topology;
    document.querySelectorAll("#nav a").forEach((a) => {
      const current = a.dataset.page === page || (["cluster", "node"].includes(page) && a.dataset.page === "clusters");
      if (current) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
    });
    document.title = `${handler.title} · Shoal`;
    document.body.dataset.page = page;
    try {
      const c = await handler.show(view, new URLSearchParams(query || ""), arg);
      cleanup = typeof c === "function" ? c : null;
    } catch (err) {
      view.insertAdjacentHTML("beforeend", S.errorBox(err).s);
    }
    const h1 = view.querySelector("h1");
    if (h1) h1.focus();
  }

  async function boot() {
    document.getElementById("logout").addEventListener("click", () => signOut("Signed out."));
    window.addEventListener("hashchange", route);
    if (S.token()) {
      try { await whoAmI(); S.events.start(); } catch (_) { S.setToken(null); }
    }
    await route();
  }
  boot();
})(window.Shoal);
