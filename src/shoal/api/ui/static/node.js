// One node's page (issue 36): what it is and where it runs, and its software deployments —
// each one's last run with its status, exit code and output on demand.
"use strict";
(function (S) {
  const { html } = S;

  function facts(n) {
    const rows = [
      ["Cluster", n.cluster_id ? html`<a href="#/cluster/${n.cluster_id}">${n.cluster_id.slice(0, 8)}</a>` : "standalone"],
      ["Group", n.group || "—"], ["Kind", n.kind], ["Status", S.badge(n.status)],
      ["Reason", n.status_reason || "—"], ["Host", n.host || "—"], ["Zone", n.zone || "—"],
      ["Address", n.address || "—"], ["Provider id", n.physical_id || "—"],
      ["Created", S.shortTime(n.created_at)], ["Updated", S.shortTime(n.updated_at)],
    ];
    return html`<table class="list facts"><tbody>${rows.map(([k, v]) => html`<tr><th scope="row">${k}</th><td>${v}</td></tr>`)}</tbody></table>`;
  }

  S.pages.node = {
    title: "Node",
    async show(view, params, ref) {
      view.innerHTML = html`<h1 tabindex="-1">Node</h1><div id="node-box"><p>Loading…</p></div>`.s;
      const box = view.querySelector("#node-box");
      let node = null;
      const load = async () => {
        const [n, deps] = await Promise.all([
          S.api("GET", `/v1/nodes/${encodeURIComponent(ref)}`),
          S.api("GET", `/v1/nodes/${encodeURIComponent(ref)}/deployments`),
        ]);
        node = n.data.node;
        view.querySelector("h1").textContent = `Node ${node.name}`;
        const runs = deps.data.deployments;
        const logs = runs.map((d) => html`<button type="button" data-log="${d.deployment}">Output of ${d.deployment}</button> `);
        box.innerHTML = html`${facts(node)}
          <section aria-labelledby="h-node-deps"><h2 id="h-node-deps">Software deployments</h2>
          ${runs.length ? html`${S.deploymentTable(runs, false)}<p>${logs}</p><pre id="deployment-log" class="log" tabindex="-1" hidden></pre>`
            : html`<p>No deployment has run on this node.</p>`}</section>`.s;
        box.querySelectorAll("button[data-log]").forEach((b) => b.addEventListener("click", () => showLog(b.dataset.log)));
      };
      async function showLog(name) {
        const out = box.querySelector("#deployment-log");
        try {
          const { data } = await S.api("GET", `/v1/nodes/${encodeURIComponent(node.id)}/deployments/${encodeURIComponent(name)}`);
          const d = data.deployment;
          out.textContent = `${d.deployment}: ${d.status}, exit ${d.status_code ?? "—"}\n--- stdout\n${d.stdout}\n--- stderr\n${d.stderr}`;
        } catch (err) {
          out.textContent = String(err.message || err);
        }
        out.hidden = false;
        out.focus();
      }
      await load();
      return S.live.refresher(async () => {
        if (!box.querySelector("#deployment-log:not([hidden])")) await load();
      }, (ev) => node && ev.node_id === node.id);
    },
  };
})(window.Shoal);
