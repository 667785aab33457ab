// Shared helpers: the API client (bearer token from the login), HTML escaping, statuses as
// colour *and* shape *and* text, and the page registry the router in main.js uses.
"use strict";
window.Shoal = (function () {
  const TOKEN_KEY = "shoal.token";
  const pages = {};

  function esc(value) {
    return String(value ?? "").replace(/[&<>"']/g, (c) => ({
      "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;",
    })[c]);
  }

  // A tagged template: interpolated values are escaped unless wrapped with raw().
  class Raw { constructor(s) { this.s = s; } }
  function raw(s) { return new Raw(s); }
  function html(strings, ...values) {
    let out = strings[0];
    values.forEach((v, i) => {
      if (v instanceof Raw) out += v.s;
      else if (Array.isArray(v)) out += v.map((x) => (x instanceof Raw ? x.s : esc(x))).join("");
      else out += esc(v);
      out += strings[i + 1];
    });
    return raw(out);
  }

  function token() { return sessionStorage.getItem(TOKEN_KEY); }
  function setToken(t) {
    if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY);
  }

  class ApiError extends Error {
    constructor(status, body) {
      const e = (body && body.error) || {};
      super(e.message || `HTTP ${status}`);
      this.status = status;
      this.code = e.code || "error";
      this.title = e.title || "Error";
      this.details = e.details || [];
    }
  }

  // One call to the JSON API with the signed-in token. `body` is an object (sent as JSON) or a
  // string (sent as is: a document).
  async function api(method, path, body) {
    const headers = { Authorization: `Bearer ${token()}`, Accept: "application/json" };
    let payload;
    if (typeof body === "string") { payload = body; headers["Content-Type"] = "text/plain"; }
    else if (body !== undefined) { payload = JSON.stringify(body); headers["Content-Type"] = "application/json"; }
    const r = await fetch(path, { method, headers, body: payload });
    const text = await r.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (_) { data = null; }
    if (r.status === 401 && path !== "/v1/clusters") { Shoal.signOut("Your token is no longer valid."); }
    if (!r.ok) throw new ApiError(r.status, data);
    return { data, headers: r.headers, status: r.status };
  }

  // Status -> [class, shape]. The shape and the word carry the meaning; colour only helps.
  // Every value of every status the API answers has an entry (tests/ui/test_badges.py reads
  // this table against the model's enums and the events' statuses): lifecycles of clusters,
  // nodes and actions, health, deployments (per node, and their rolling updates' phases),
  // workloads' rollouts, and the events the engine records.
  const STATUS = {
    ACTIVE: ["ok", "●"], SUCCEEDED: ["ok", "●"], HEALTHY: ["ok", "●"], COMPLETE: ["ok", "●"],
    DEPLOY_COMPLETE: ["ok", "●"], DONE: ["ok", "●"],
    INIT: ["busy", "◌"], READY: ["busy", "◌"], PENDING: ["busy", "◌"], DEPLOY: ["busy", "◌"],
    PAUSE: ["busy", "◌"], UNKNOWN: ["busy", "◌"],
    CREATING: ["busy", "◐"], UPDATING: ["busy", "◐"], RESIZING: ["busy", "◐"],
    RECOVERING: ["busy", "◐"], RUNNING: ["busy", "◐"], IN_PROGRESS: ["busy", "◐"],
    DEPLOYING: ["busy", "◐"], SIGNALLED: ["busy", "◐"], ROLLING: ["busy", "◐"], RUN: ["busy", "◐"],
    GATE: ["busy", "◐"],
    DELETING: ["gone", "◌"], DELETED: ["gone", "○"], CANCELLED: ["gone", "○"],
    RETIRED: ["gone", "○"],
    WARNING: ["warn", "▲"], UNHEALTHY: ["warn", "▲"], ROLLING_BACK: ["warn", "▲"],
    ROLLBACK: ["warn", "▲"], ROLLED_BACK: ["warn", "▲"], STOPPED: ["warn", "▲"],
    STRAY: ["warn", "▲"], DUPLICATE: ["warn", "▲"], CONTAINER_RESTARTED: ["warn", "▲"],
    DEGRADED: ["warn", "▲"], CONTAINER_LOOP: ["warn", "▲"],
    ERROR: ["bad", "✖"], FAILED: ["bad", "✖"], DEPLOY_FAILED: ["bad", "✖"],
    PLANNED: ["plan", "◇"],
    WORKLOAD: ["info", "◆"], ROLLOUT: ["info", "◆"],
  };
  // Software rollouts' phases are lower case (`rolled_back`); the table is upper case.
  function entry(s) { return STATUS[String(s ?? "").toUpperCase()] || ["busy", "?"]; }
  function statusClass(s) { return entry(s)[0]; }
  function shape(s) { return entry(s)[1]; }
  function badge(s) {
    return html`<span class="badge s-${statusClass(s)}"><span aria-hidden="true">${shape(s)}</span> ${s}</span>`;
  }

  function announce(msg) {
    const el = document.getElementById("announce");
    el.textContent = "";
    setTimeout(() => { el.textContent = msg; }, 30);
  }

  function errorBox(err, heading) {
    if (!(err instanceof ApiError)) {
      return html`<div class="error" role="alert"><h3>${heading || "Something went wrong"}</h3><p>${String(err && err.message || err)}</p></div>`;
    }
    const items = err.details.map((d) => html`<li>${d.path ? html`<code>${d.path}</code> ` : ""}${d.message}</li>`);
    return html`<div class="error" role="alert" data-code="${err.code}">
      <h3>${heading || err.title}</h3><p>${err.message}</p>
      ${items.length ? html`<ul class="reasons">${items}</ul>` : ""}</div>`;
  }

  // Natural order of names (web-2 before web-10), as the CLI's tables sort them.
  const NATURAL = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
  function byName(items, key = "name") {
    return items.slice().sort((a, b) => NATURAL.compare(String(a[key] ?? ""), String(b[key] ?? "")));
  }

  // A table of deployment runs (the cluster's page, with their nodes; a node's page, without).
  function deploymentTable(rows, withNode) {
    const body = byName(rows, withNode ? "node" : "deployment").map((d) => html`<tr data-deployment="${d.deployment}" data-node="${d.node}">
      <th scope="row">${d.deployment}</th>${withNode ? html`<td><a href="#/node/${d.node_id}">${d.node}</a></td>` : ""}
      <td>${d.config}</td><td>${d.group}</td><td>${d.action}</td><td>${badge(d.status)}</td>
      <td>${d.status_code ?? "—"}</td><td>${d.attempts}</td><td>${shortTime(d.ended_at || d.started_at)}</td></tr>`);
    return html`<table class="list deployments"><thead><tr><th scope="col">Deployment</th>${withNode ? html`<th scope="col">Node</th>` : ""}
      <th scope="col">Config</th><th scope="col">Hook</th><th scope="col">Action</th><th scope="col">Status</th>
      <th scope="col">Exit</th><th scope="col">Attempts</th><th scope="col">When</th></tr></thead><tbody>${body}</tbody></table>`;
  }

  function shortTime(iso) { return iso ? iso.replace("T", " ").replace(/\.\d+Z$|Z$/, "") : ""; }

  return {
    pages, esc, html, raw, api, token, setToken, ApiError, badge, shape, statusClass,
    announce, errorBox, shortTime, byName, deploymentTable, me: { admin: false },
    view: () => document.getElementById("view"),
  };
})();
