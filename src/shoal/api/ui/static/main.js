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

  function showLogin(view) {
    const message = sessionStorage.getItem("shoal.message") || "";
    sessionStorage.removeItem("shoal.message");
    document.getElementById("nav").hidden = true;
    document.getElementById("logout").hidden = true;
    document.getElementById("who").hidden = true;
    document.getElementById("stream-state").hidden = true;
    view.innerHTML = html`<h1 tabindex="-1">Sign in to Shoal</h1>
      <form id="login" class="login">
        <p><label for="token">Token</label>
        <input id="token" name="token" type="password" autocomplete="off" required aria-describedby="token-help"></p>
        <p id="token-help" class="muted">A Shoal project token (the admin's is in <code>$SHOAL_HOME/admin-token</code>),
          or a Keystone token when the server runs in Keystone mode.</p>
        <p><button type="submit">Sign in</button></p>
        <div id="login-error">${message ? html`<p class="error" role="alert">${message}</p>` : ""}</div>
      </form>`.s;
    view.querySelector("#token").focus();
    view.querySelector("#login").addEventListener("submit", async (e) => {
      e.preventDefault();
      const t = view.querySelector("#token").value.trim();
      S.setToken(t);
      try {
        await S.api("GET", "/v1/clusters");
        await whoAmI();
      } catch (err) {
        S.setToken(null);
        view.querySelector("#login-error").innerHTML = S.errorBox(err, "Not signed in").s;
        return;
      }
      S.events.start();  // in the background: the first page need not wait for the history
      location.hash = "#/topology";
    });
  }

  async function route() {
    if (cleanup) { try { cleanup(); } catch (_) { /* the page is gone anyway */ } cleanup = null; }
    const view = S.view();
    const hash = location.hash.replace(/^#\/?/, "") || "topology";
    const [path, query] = hash.split("?");
    const [page, arg] = path.split("/").map(decodeURIComponent);
    if (!S.token() || page === "login") {
      if (S.token() && page === "login") { location.hash = "#/topology"; return; }
      showLogin(view);
      return;
    }
    document.getElementById("nav").hidden = false;
    document.getElementById("logout").hidden = false;
    const handler = S.pages[page] || S.pages.topology;
    document.querySelectorAll("#nav a").forEach((a) => {
      const current = a.dataset.page === page || (page === "cluster" && a.dataset.page === "clusters");
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
