// The Live page: actions with their progress (finished / total steps, the batch of a rolling
// update) and the event stream as it arrives. `refresher` lets any page redraw on events.
"use strict";
(function (S) {
  const { html } = S;
  const TERMINAL = new Set(["SUCCEEDED", "FAILED", "CANCELLED"]);
  const SHOWN = 25;

  // Call `fn` when an event `want`s it: debounced, and never more often than twice its own
  // duration, so a big topology redrawing during a burst of events cannot swamp the server.
  // The returned function unsubscribes.
  function refresher(fn, want) {
    let timer = null;
    let running = false;
    let again = false;
    let cost = 0;
    const fire = async () => {
      timer = null;
      if (running) { again = true; return; }
      running = true;
      const t0 = performance.now();
      try { await fn(); } catch (e) { console.error(e); }
      cost = performance.now() - t0;
      running = false;
      if (again) { again = false; schedule(); }
    };
    const schedule = () => {
      if (timer === null) timer = setTimeout(fire, Math.max(300, 2 * cost));
    };
    const off = S.events.on((ev) => { if (!want || want(ev)) schedule(); });
    return () => { off(); clearTimeout(timer); };
  }

  function progress(detail) {
    const counts = detail.children || {};
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const done = ["SUCCEEDED", "FAILED", "CANCELLED"].reduce((a, k) => a + (counts[k] || 0), 0);
    const failed = counts.FAILED || 0;
    const rolling = detail.action.outputs && detail.action.outputs.rolling;
    const batch = rolling && rolling.stages
      ? html` · batch ${rolling.next} of ${rolling.stages.length} (${rolling.phase || "plan"})` : "";
    if (!total) return html`<span class="muted">no steps yet</span>${batch}`;
    return html`<progress max="${total}" value="${done}" aria-label="${done} of ${total} steps done"></progress>
      <span class="num">${done}/${total} steps${failed ? `, ${failed} failed` : ""}</span>${batch}`;
  }

  function eventLine(e) {
    return html`<li data-event="${e.id}" class="ev lvl-${e.level}"><span class="muted">${S.shortTime(e.timestamp)}</span>
      ${e.status ? S.badge(e.status) : ""} <strong>${e.obj_type}</strong> ${e.obj_name || ""} — ${e.message || ""}</li>`;
  }

  S.pages.live = {
    title: "Live",
    async show(view) {
      view.innerHTML = html`<h1 tabindex="-1">Live</h1>
        <section aria-labelledby="h-actions"><h2 id="h-actions">Actions</h2><div id="actions-box"></div></section>
        <section aria-labelledby="h-events"><h2 id="h-events">Events <span class="muted">(newest first, as they happen)</span></h2>
          <ol id="events" class="events" tabindex="0" aria-label="Events" aria-live="polite" aria-relevant="additions"></ol></section>`.s;
      const box = view.querySelector("#actions-box");
      const list = view.querySelector("#events");
      list.innerHTML = S.events.recent.slice().reverse().map((e) => eventLine(e).s).join("");
      const names = {};
      const load = async () => {
        const [{ data }, clusters] = await Promise.all([
          S.api("GET", "/v1/actions"), S.api("GET", "/v1/clusters"),
        ]);
        for (const c of clusters.data.clusters) names[c.id] = c.name;
        const acts = data.actions.slice().sort((a, b) => (b.created_at || "").localeCompare(a.created_at || "")).slice(0, SHOWN);
        const details = await Promise.all(acts.map((a) => S.api("GET", `/v1/actions/${a.id}`).then((r) => r.data).catch(() => ({ action: a, children: {} }))));
        if (!details.length) { box.innerHTML = html`<p>No actions yet.</p>`.s; return; }
        box.innerHTML = html`<table class="list" id="actions-table"><caption>The ${details.length} latest actions</caption>
          <thead><tr><th scope="col">Action</th><th scope="col">Cluster</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Started</th><th scope="col"><span class="sr-only">Cancel</span></th></tr></thead>
          <tbody>${details.map((d) => html`<tr data-action="${d.action.id}" data-status="${d.action.status}">
            <th scope="row">${d.action.action}</th><td>${d.action.cluster_id ? html`<a href="#/cluster/${d.action.cluster_id}">${names[d.action.cluster_id] || d.action.cluster_id.slice(0, 8)}</a>` : ""}</td>
            <td>${S.badge(d.action.status)} ${d.action.status_reason || ""}</td><td>${progress(d)}</td><td>${S.shortTime(d.action.start_time || d.action.created_at)}</td>
            <td>${TERMINAL.has(d.action.status) ? "" : html`<button type="button" data-cancel="${d.action.id}">Cancel</button>`}</td></tr>`)}</tbody></table>`.s;
        box.querySelectorAll("button[data-cancel]").forEach((b) => b.addEventListener("click", async () => {
          try { await S.api("POST", `/v1/actions/${b.dataset.cancel}/cancel`); S.announce("Cancel requested."); }
          catch (e) { box.insertAdjacentHTML("afterbegin", S.errorBox(e).s); }
        }));
      };
      await load();
      const offLog = S.events.on((e) => {
        list.insertAdjacentHTML("afterbegin", eventLine(e).s);
        while (list.children.length > 200) list.lastElementChild.remove();
      });
      const offActions = refresher(load, (e) => e.obj_type === "ACTION" || e.obj_type === "NODE");
      return () => { offLog(); offActions(); };
    },
  };

  S.live = { refresher };
})(window.Shoal);
