// The clusters list, and one cluster's page: node groups (with scaling and its preview),
// nodes, groupings drawn on the hosts, policies, receivers and the cluster's actions.
"use strict";
(function (S) {
  const { html } = S;
  const POLICY_KEYS = ["health", "update", "deletion", "scaling"];
  const NODE_PAGE = 100; // issue 23: the node table shows a page, never every node

  S.pages.clusters = {
    title: "Clusters",
    async show(view) {
      view.innerHTML = html`<h1 tabindex="-1">Clusters</h1><div id="clusters-box"></div>`.s;
      const box = view.querySelector("#clusters-box");
      const load = async () => {
        const { data } = await S.api("GET", "/v1/clusters");
        if (!data.clusters.length) {
          box.innerHTML = html`<p>No clusters yet. <a href="#/plan">Plan one</a>.</p>`.s;
          return;
        }
        const rows = data.clusters.map((c) => html`<tr data-cluster="${c.name}">
          <th scope="row"><a href="#/cluster/${c.id}">${c.name}</a></th><td>${S.badge(c.status)}</td>
          <td>${c.desired_capacity}</td>${S.me.admin ? html`<td>${c.project}</td>` : ""}
          <td>${c.action ? html`<a href="#/live">busy</a>` : "idle"}</td><td>${S.shortTime(c.updated_at || c.created_at)}</td></tr>`);
        box.innerHTML = html`<table class="list"><caption>${data.clusters.length} cluster(s)</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Desired nodes</th>
          ${S.me.admin ? html`<th scope="col">Project</th>` : ""}<th scope="col">Action</th><th scope="col">Updated</th></tr></thead>
          <tbody>${rows}</tbody></table>`.s;
      };
      await load();
      return S.live.refresher(load, (ev) => ev.obj_type !== "NODE");
    },
  };

  function policies(group) {
    const found = POLICY_KEYS.filter((k) => group[k] !== undefined);
    if (!found.length) return html`<span class="muted">defaults</span>`;
    return html`<dl class="policies">${found.map((k) => html`<dt>${k}</dt><dd><code>${JSON.stringify(group[k])}</code></dd>`)}</dl>`;
  }

  function previewBox(plan) {
    const creates = plan.create.map((c) => html`<li>create <strong>${c.node}</strong> on ${c.host} (${c.zone})</li>`);
    const deletes = plan.delete.map((d) => html`<li>delete <strong>${d}</strong></li>`);
    const none = !creates.length && !deletes.length ? html`<li>no change</li>` : "";
    return html`<div class="preview" role="status"><h4>Preview</h4><ul>${creates}${deletes}${none}</ul>
      ${plan.soft_violations.length ? html`<p>Soft rules not held: ${plan.soft_violations.map((v) => v.message).join("; ")}</p>` : ""}</div>`;
  }

  const WORKLOAD_ROWS = 500;

  // Workloads (issue 22): each replica's node, readiness, restarts and revision, and a line
  // per rollout (phase, batch in flight, surge replicas); the first WORKLOAD_ROWS replicas.
  function workloadsSection(page) {
    const replicas = page.replicas || [];
    const rollouts = page.rollouts || [];
    if (!replicas.length && !rollouts.length) return "";
    const rows = S.byName(replicas, "replica").map((r) => html`<tr data-replica="${r.replica}">
      <th scope="row">${r.replica}</th><td>${r.workload}</td><td>${r.node}</td>
      <td>${r.ready ? "✔ ready" : "✖ not ready"}</td><td>${r.restarts}</td><td>${S.shortTime(r.started_at)}</td><td><code>${(r.revision || "").slice(0, 8)}</code></td></tr>`);
    const rolls = rollouts.map((ro) => html`<li data-rollout="${ro.workload}"><strong>${ro.workload}</strong>: ${S.badge(ro.phase)} ${ro.summary || ""}</li>`);
    const more = page.next ? html`<p class="muted">First ${replicas.length} replicas; <code>shoal workloads</code> lists them all.</p>` : "";
    return html`<section aria-labelledby="h-work"><h2 id="h-work">Workloads</h2>
      <ul class="rollouts">${rolls}</ul>
      <table class="list" id="replicas-table"><thead><tr><th scope="col">Replica</th><th scope="col">Workload</th><th scope="col">Node</th>
      <th scope="col">Ready</th><th scope="col">Restarts</th><th scope="col">Started</th><th scope="col">Revision</th></tr></thead><tbody>${rows}</tbody></table>${more}</section>`;
  }

  const DEPLOYMENT_ROWS = 500;

  // Software deployments (issue 36): each deployment's last run on each node, counts of all
  // of them by status, and where each rolling update of a config change stands.
  function deploymentsSection(page) {
    const rows = page.deployments || [];
    const rollouts = page.rollouts || [];
    if (!rows.length && !rollouts.length) return "";
    const counts = Object.entries(page.counts || {}).sort().map(([s, k]) => html`<span class="count">${k} ${S.badge(s)}</span> `);
    const rolls = rollouts.map((ro) => html`<li data-deployment-rollout="${ro.deployment}"><strong>${ro.deployment}</strong> (${ro.group}): ${S.badge(ro.phase)} ${ro.summary || ""}</li>`);
    const more = page.next_marker ? html`<p class="muted">First ${rows.length} rows; <code>shoal deployments</code> lists them all.</p>` : "";
    return html`<section aria-labelledby="h-deps"><h2 id="h-deps">Software deployments</h2>
      <p>${counts}</p>${rolls.length ? html`<ul class="rollouts">${rolls}</ul>` : ""}
      ${S.deploymentTable(rows, true)}${more}</section>`;
  }

  S.pages.cluster = {
    title: "Cluster",
    async show(view, params, ref) {
      view.innerHTML = html`<h1 tabindex="-1">Cluster</h1><div id="cluster-box"><p>Loading…</p></div>`.s;
      const box = view.querySelector("#cluster-box");
      let cluster = null;
      // Issue 23: the node table is a page at a time (paged in SQL by the API), with the
      // markers of the pages before it to go back.
      const nodePage = { marker: null, before: [], next: null };
      const nodesPath = () => `/v1/nodes?cluster=${encodeURIComponent(ref)}&limit=${NODE_PAGE}`
        + (nodePage.marker ? `&marker=${encodeURIComponent(nodePage.marker)}` : "");
      // Issue 36: a page's nodes in natural name order (web-2 before web-10), not the API's.
      const nodeRowsOf = (data) => S.byName(data.nodes).map((n) => html`<tr data-node="${n.name}">
          <th scope="row"><a href="#/node/${n.id}">${n.name}</a></th><td>${n.group}</td><td>${n.kind}</td><td>${S.badge(n.status)}</td>
          <td>${n.address || "—"}</td><td>${n.host || "—"}</td><td>${n.zone || "—"}</td><td>${n.status_reason || ""}</td></tr>`);
      const nodePager = () => html`<nav class="pager" aria-label="Node pages">
          <button type="button" name="nodes-prev" ${nodePage.before.length ? "" : "disabled"}>Previous nodes</button>
          <span>page ${nodePage.before.length + 1}</span>
          <button type="button" name="nodes-next" ${nodePage.next ? "" : "disabled"}>Next nodes</button></nav>`;
      const showNodes = async () => {
        const { data } = await S.api("GET", nodesPath());
        nodePage.next = data.next_marker || null;
        box.querySelector("#nodes-table tbody").innerHTML = html`${nodeRowsOf(data)}`.s;
        box.querySelector("nav.pager").outerHTML = nodePager().s;
        wirePager();
      };
      const wirePager = () => {
        box.querySelector("button[name=nodes-next]").addEventListener("click", () => {
          nodePage.before.push(nodePage.marker);
          nodePage.marker = nodePage.next;
          showNodes();
        });
        box.querySelector("button[name=nodes-prev]").addEventListener("click", () => {
          nodePage.marker = nodePage.before.pop() ?? null;
          showNodes();
        });
      };
      const load = async () => {
        const [c, nodes, receivers, actions, topo, nets, work, deps] = await Promise.all([
          S.api("GET", `/v1/clusters/${encodeURIComponent(ref)}`),
          S.api("GET", nodesPath()),
          S.api("GET", "/v1/receivers"),
          S.api("GET", `/v1/actions?cluster=${encodeURIComponent(ref)}`),
          S.api("GET", `/ui/api/topology?cluster=${encodeURIComponent(ref)}`),
          S.api("GET", `/v1/clusters/${encodeURIComponent(ref)}/networks`),
          S.api("GET", `/v1/clusters/${encodeURIComponent(ref)}/workloads?limit=${WORKLOAD_ROWS}`),
          S.api("GET", `/v1/clusters/${encodeURIComponent(ref)}/deployments?limit=${DEPLOYMENT_ROWS}`),
        ]);
        cluster = c.data.cluster;
        view.querySelector("h1").textContent = `Cluster ${cluster.name}`;
        const doc = cluster.document || {};
        const groupDocs = Object.fromEntries((doc.node_groups || []).map((g) => [g.name, g]));
        const groups = cluster.node_groups.map((g) => html`<tr data-group="${g.name}">
          <th scope="row">${g.name}</th><td>${g.nodes} / ${g.count}</td><td>${g.min}–${g.max ?? "∞"}</td>
          <td>${(g.zones || []).join(", ") || "any"}</td><td>${g.role || ""}</td><td>${policies(groupDocs[g.name] || {})}</td>
          <td><form class="scale" data-group="${g.name}">
            <label for="scale-${g.name}">Replicas of ${g.name}</label>
            <input id="scale-${g.name}" name="count" type="number" min="${g.min}" ${g.max != null ? html`max="${g.max}"` : ""} value="${g.count}" required>
            <button type="submit" name="preview">Preview</button>
            <button type="button" name="apply" disabled>Apply</button>
            <div class="scale-out"></div></form></td></tr>`);
        nodePage.next = nodes.data.next_marker || null;
        const nodeRows = nodeRowsOf(nodes.data);
        const recs = receivers.data.receivers.filter((r) => r.cluster_id === cluster.id).map((r) => html`<tr>
          <th scope="row">${r.name}</th><td>${r.action}</td><td>${r.nodegroup || (r.workload ? `workload ${r.workload}` : "—")}</td><td><code>${JSON.stringify(r.params || {})}</code></td><td>${S.shortTime(r.triggered_at) || "never"}</td></tr>`);
        const acts = actions.data.actions.slice().sort((a, b) => (b.created_at || "").localeCompare(a.created_at || "")).slice(0, 10)
          .map((a) => html`<li>${S.badge(a.status)} ${a.action} <span class="muted">${S.shortTime(a.created_at)}</span> ${a.status_reason || ""}</li>`);
        box.innerHTML = html`<p>${S.badge(cluster.status)} ${cluster.status_reason || ""} · ${cluster.desired_capacity} desired node(s) ·
            <a href="#/topology?cluster=${cluster.id}">open in Topology</a></p>
          <section aria-labelledby="h-groups"><h2 id="h-groups">Node groups</h2>
            <table class="list"><thead><tr><th scope="col">Group</th><th scope="col">Nodes / desired</th><th scope="col">Min–max</th>
            <th scope="col">Zones</th><th scope="col">Role</th><th scope="col">Policies</th><th scope="col">Scale</th></tr></thead><tbody>${groups}</tbody></table></section>
          <section aria-labelledby="h-topo"><h2 id="h-topo">Placement</h2><div id="cluster-topo"></div></section>
          <section aria-labelledby="h-nodes"><h2 id="h-nodes">Nodes</h2>
            <table class="list" id="nodes-table"><thead><tr><th scope="col">Node</th><th scope="col">Group</th><th scope="col">Kind</th><th scope="col">Status</th>
            <th scope="col">Address</th><th scope="col">Host</th><th scope="col">Zone</th><th scope="col">Health / reason</th></tr></thead><tbody>${nodeRows}</tbody></table>${nodePager()}</section>
          ${deploymentsSection(deps.data)}
          ${workloadsSection(work.data)}
          <section aria-labelledby="h-nets"><h2 id="h-nets">Networks</h2>${S.networks.render(nets.data.networking)}</section>
          <section aria-labelledby="h-recv"><h2 id="h-recv">Receivers</h2>${recs.length ? html`<table class="list"><thead><tr><th scope="col">Name</th>
            <th scope="col">Action</th><th scope="col">Node group</th><th scope="col">Params</th><th scope="col">Last triggered</th></tr></thead><tbody>${recs}</tbody></table>` : html`<p>No receivers.</p>`}</section>
          <section aria-labelledby="h-acts"><h2 id="h-acts">Recent actions</h2><ul class="actions">${acts}</ul></section>`.s;
        S.topology.render(box.querySelector("#cluster-topo"), topo.data, { groupings: S.topology.groupingsOf(cluster) });
        box.querySelectorAll("form.scale").forEach(wireScale);
        wirePager();
      };

      function wireScale(form) {
        const group = form.dataset.group;
        const out = form.querySelector(".scale-out");
        const apply = form.querySelector("button[name=apply]");
        form.addEventListener("submit", async (e) => {
          e.preventDefault();
          const count = Number(form.count.value);
          const doc = structuredClone(cluster.document);
          doc.node_groups.find((g) => g.name === group).count = count;
          try {
            const { data } = await S.api("POST", `/v1/clusters/${cluster.id}/plan`, doc);
            out.innerHTML = previewBox(data.plan).s;
            apply.disabled = false;
            apply.dataset.count = String(count);
          } catch (err) {
            out.innerHTML = S.errorBox(err, "This change cannot be made").s;
            apply.disabled = true;
          }
        });
        apply.addEventListener("click", async () => {
          try {
            const r = await S.api("POST", `/v1/clusters/${cluster.id}/actions`, {
              resize: { adjustment_type: "EXACT_CAPACITY", number: Number(apply.dataset.count), nodegroup: group },
            });
            out.innerHTML = html`<p role="status">Accepted: <a href="#/live">action ${r.data.action.id.slice(0, 8)}</a> is running.</p>`.s;
            apply.disabled = true;
          } catch (err) {
            out.innerHTML = S.errorBox(err).s;
          }
        });
      }

      await load();
      // Redraw on this cluster's events, unless the user is in the middle of a scale preview.
      return S.live.refresher(async () => {
        if (view.querySelector(".scale-out .preview, .scale-out .error")) return;
        await load();
      }, (ev) => cluster && ev.cluster_id === cluster.id);
    },
  };
})(window.Shoal);
