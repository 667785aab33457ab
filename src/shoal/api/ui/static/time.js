// The Time page (issue 27): what happened, drawn over time from the same data as the rest of
// /ui (/v1/actions and /v1/events, no outside request): actions as bars from start to end (their
// durations, coloured and labelled by result), nodes by status over time (replayed from the
// nodes' events), and repairs as marks on the same axis.
"use strict";
(function (S) {
  const { html, raw, esc } = S;
  const W = 880, LEFT = 170, ROW = 16;
  const STATUS_COLOR = {
    ACTIVE: "#2e7d32", CREATING: "#1565c0", RECOVERING: "#6a1b9a", WARNING: "#ef6c00",
    ERROR: "#c62828", DELETING: "#616161", SUCCEEDED: "#2e7d32", FAILED: "#c62828",
    CANCELLED: "#616161", RUNNING: "#1565c0",
  };
  const color = (s) => STATUS_COLOR[s] || "#455a64";
  const ms = (iso) => (iso ? Date.parse(iso) : null);

  function axis(t0, t1) {
    const span = Math.max(t1 - t0, 1000);
    const x = (t) => LEFT + ((t - t0) / span) * (W - LEFT - 10);
    const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => t0 + f * span);
    const anchor = (i) => (i === 0 ? "start" : i === ticks.length - 1 ? "end" : "middle");
    const labels = ticks.map((t, i) => `<text x="${x(t)}" y="12" text-anchor="${anchor(i)}" class="tick">${esc(new Date(t).toISOString().slice(11, span < 10000 ? 23 : 19))}</text>`).join("");
    return { x, labels };
  }

  function actionBars(actions, ax, now) {
    const rows = actions.filter((a) => a.start_time).slice(-40);
    const h = 20 + rows.length * ROW;
    const bars = rows.map((a, i) => {
      const s = ms(a.start_time), e = ms(a.end_time) || now;
      const y = 18 + i * ROW, w = Math.max(ax.x(e) - ax.x(s), 2);
      const secs = ((e - s) / 1000).toFixed(1);
      return `<g class="bar" data-action="${esc(a.id)}" data-status="${esc(a.status)}">
        <text x="${LEFT - 6}" y="${y + 11}" text-anchor="end">${esc(a.action)}</text>
        <rect x="${ax.x(s)}" y="${y}" width="${w}" height="${ROW - 4}" fill="${color(a.status)}"><title>${esc(a.action)} ${esc(a.status)}: ${secs} s</title></rect>
        <text x="${ax.x(s) + w + 4}" y="${y + 11}" class="dur">${secs} s ${esc(a.status)}</text></g>`;
    }).join("");
    return `<svg id="time-actions" role="img" aria-label="Actions over time with their durations" viewBox="0 0 ${W} ${h}" width="100%">${ax.labels}${bars}</svg>`;
  }

  // Replays the node events: each node's status at each event time, counted per status.
  function nodeSeries(events) {
    const now = {};
    const points = [];
    for (const e of events) {
      if (e.obj_type !== "NODE" || !e.node_id) continue;
      if (e.status === "DELETED") delete now[e.node_id];
      else if (STATUS_COLOR[e.status]) now[e.node_id] = e.status;
      else continue;
      const counts = {};
      for (const s of Object.values(now)) counts[s] = (counts[s] || 0) + 1;
      points.push({ t: ms(e.timestamp), counts });
    }
    return points;
  }

  function nodeChart(points, ax, repairs) {
    const H = 160, top = 18;
    const max = Math.max(1, ...points.map((p) => Object.values(p.counts).reduce((a, b) => a + b, 0)));
    const y = (n) => top + H - (n / max) * H;
    const statuses = [...new Set(points.flatMap((p) => Object.keys(p.counts)))];
    const lines = statuses.map((s) => {
      let d = "";
      points.forEach((p, i) => {
        const v = p.counts[s] || 0;
        d += i === 0 ? `M${ax.x(p.t)},${y(v)}` : `H${ax.x(p.t)}V${y(v)}`;
      });
      const last = points[points.length - 1].counts[s] || 0;
      return `<path class="series" data-status="${esc(s)}" d="${d}H${W - 10}" fill="none" stroke="${color(s)}" stroke-width="2"><title>${esc(s)}: ${last} now</title></path>`;
    }).join("");
    const marks = repairs.map((r) => `<g class="repair"><line x1="${ax.x(ms(r.timestamp))}" x2="${ax.x(ms(r.timestamp))}" y1="${top}" y2="${top + H}" stroke="#6a1b9a" stroke-dasharray="3,3"></line><title>${esc(r.obj_name)}: ${esc(r.message)}</title></g>`).join("");
    const legend = statuses.map((s, i) => `<text x="10" y="${top + 14 + i * 14}" fill="${color(s)}" class="legend">${esc(s)}</text>`).join("");
    return `<svg id="time-nodes" role="img" aria-label="Nodes by status over time; dashed lines are repairs" viewBox="0 0 ${W} ${H + top + 6}" width="100%">${ax.labels}<text x="${LEFT - 6}" y="${top + 8}" text-anchor="end">${max}</text><text x="${LEFT - 6}" y="${top + H}" text-anchor="end">0</text>${legend}${lines}${marks}</svg>`;
  }

  async function draw(body) {
    const [acts, evs] = await Promise.all([
      S.api("GET", "/v1/actions"), S.api("GET", "/v1/events?limit=10000"),
    ]);
    const actions = acts.data.actions;
    const events = evs.data.events;
    const now = Date.now();
    const times = actions.flatMap((a) => [ms(a.start_time), ms(a.end_time)])
      .concat(events.map((e) => ms(e.timestamp))).filter((t) => t !== null);
    if (!times.length) { body.innerHTML = html`<p>Nothing has happened yet.</p>`.s; return; }
    const ax = axis(Math.min(...times), Math.max(...times, ...actions.filter((a) => !a.end_time && a.start_time).map(() => now)));
    const repairs = events.filter((e) => e.obj_type === "CLUSTER" && e.status === "RECOVERING");
    const points = nodeSeries(events);
    body.innerHTML = html`
      <section aria-labelledby="t-actions"><h2 id="t-actions">Actions and their durations</h2>${raw(actionBars(actions, ax, now))}</section>
      <section aria-labelledby="t-nodes"><h2 id="t-nodes">Nodes by status</h2>${raw(points.length ? nodeChart(points, ax, repairs) : "<p>No node has changed yet.</p>")}</section>
      <section aria-labelledby="t-repairs"><h2 id="t-repairs">Repairs</h2>
        <ul id="time-repairs">${repairs.length ? repairs.map((r) => html`<li data-repair>${S.shortTime ? S.shortTime(r.timestamp) : r.timestamp} ${r.obj_name}: ${r.message}</li>`) : html`<li>None.</li>`}</ul></section>`.s;
  }

  S.pages.time = {
    async show(view) {
      view.innerHTML = html`<h1 tabindex="-1">Over time</h1><div id="time-body"><p>Loading…</p></div>`.s;
      const body = view.querySelector("#time-body");
      try { await draw(body); } catch (err) { body.innerHTML = S.errorBox(err, "Cannot draw").s; return null; }
      let timer = null;
      const off = S.events.on(() => {
        clearTimeout(timer);
        timer = setTimeout(() => draw(body).catch(() => {}), 1000);
      });
      return () => { clearTimeout(timer); off(); };
    },
  };
})(window.Shoal);
