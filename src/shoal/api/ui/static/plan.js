// Plan before apply: paste or upload a document (native YAML/JSON or vcluster JSON), see where
// every node would go — drawn on the hosts — or why it cannot be placed; then apply it.
"use strict";
(function (S) {
  const { html } = S;

  S.pages.plan = {
    title: "Plan",
    async show(view) {
      view.innerHTML = html`<h1 tabindex="-1">Plan before apply</h1>
        <form id="plan-form" class="plan">
          <p><label for="plan-doc">Cluster document (native YAML or JSON, or vcluster JSON)</label></p>
          <textarea id="plan-doc" name="doc" rows="16" spellcheck="false" required></textarea>
          <p><label for="plan-file">Or load a file</label> <input id="plan-file" type="file" accept=".yaml,.yml,.json,.txt"></p>
          <p><button type="submit" id="plan-preview">Preview placement</button>
             <button type="button" id="plan-apply" disabled>Apply</button></p>
        </form>
        <div id="plan-result" aria-live="polite"></div>
        <div id="plan-topo"></div>`.s;
      const form = view.querySelector("#plan-form");
      const doc = view.querySelector("#plan-doc");
      const result = view.querySelector("#plan-result");
      const topoBox = view.querySelector("#plan-topo");
      const apply = view.querySelector("#plan-apply");
      let planned = null;
      doc.addEventListener("input", () => { apply.disabled = true; planned = null; });
      view.querySelector("#plan-file").addEventListener("change", async (e) => {
        const f = e.target.files[0];
        if (f) { doc.value = await f.text(); apply.disabled = true; planned = null; }
      });
      form.addEventListener("submit", async (e) => {
        e.preventDefault();
        apply.disabled = true;
        planned = null;
        topoBox.innerHTML = "";
        result.innerHTML = html`<p>Placing…</p>`.s;
        let plan;
        try {
          plan = (await S.api("POST", "/ui/api/plan", doc.value)).data.plan;
        } catch (err) {
          const heading = err.code === "unplaceable" ? "It cannot be placed"
            : err.code === "invalid_document" ? "The document has problems" : null;
          result.innerHTML = html`<div id="plan-error">${S.errorBox(err, heading)}</div>`.s;
          result.querySelector("[role=alert]")?.focus?.();
          return;
        }
        planned = plan;
        apply.disabled = false;
        let nodes;
        if (plan.mode === "create") {
          nodes = plan.placement.map((p) => ({ ...p, cluster: plan.cluster }));
          const checks = plan.checks.map((c) => html`<li>${c.satisfied ? "✓" : "✗"} ${c.grouping}: ${c.rule} by ${c.scope}, ${c.members} member(s) on ${c.domains_used} ${c.scope}(s)</li>`);
          result.innerHTML = html`<div class="ok-box" id="plan-ok" data-mode="create" role="status"><h2>New cluster ${plan.cluster} can be placed</h2>
            <p>${plan.placement.length} node(s), drawn below as <span aria-hidden="true">◇</span> PLANNED. Nothing has been created yet.</p>
            ${checks.length ? html`<ul>${checks}</ul>` : ""}
            ${plan.soft_violations.length ? html`<p>Soft rules not held: ${plan.soft_violations.map((v) => v.message).join("; ")}</p>` : ""}
            <table class="list"><thead><tr><th scope="col">Node</th><th scope="col">Group</th><th scope="col">Host</th><th scope="col">Zone</th></tr></thead>
            <tbody>${plan.placement.map((p) => html`<tr data-node="${p.node}"><th scope="row">${p.node}</th><td>${p.group}</td><td>${p.host}</td><td>${p.zone}</td></tr>`)}</tbody></table></div>`.s;
        } else {
          const c = plan.changes;
          nodes = c.create.map((p) => ({ node: p.node, host: p.host, zone: p.zone, group: "", kind: "server", cluster: plan.cluster }));
          result.innerHTML = html`<div class="ok-box" id="plan-ok" data-mode="update" role="status"><h2>Change to cluster ${plan.cluster}</h2>
            <ul>${c.create.map((x) => html`<li>create <strong>${x.node}</strong> on ${x.host} (${x.zone})</li>`)}
            ${c.delete.map((x) => html`<li>delete <strong>${x}</strong></li>`)}
            ${c.update_batches.map((b) => html`<li>update ${b.group}: ${b.nodes.join(", ")}</li>`)}
            ${!c.create.length && !c.delete.length && !c.update_batches.length ? html`<li>no change</li>` : ""}</ul></div>`.s;
        }
        const { data: topo } = await S.api("GET", plan.cluster_id ? `/ui/api/topology?cluster=${plan.cluster_id}` : "/ui/api/topology");
        S.topology.render(topoBox, topo, { planned: nodes });
      });
      apply.addEventListener("click", async () => {
        if (!planned) return;
        try {
          const r = planned.mode === "create"
            ? await S.api("POST", "/v1/clusters", doc.value)
            : await S.api("PUT", `/v1/clusters/${planned.cluster_id}`, doc.value);
          result.innerHTML = html`<p class="ok-box" role="status" id="plan-applied">Accepted: cluster ${r.data.cluster.name},
            action ${r.data.action.action} (<a href="#/live">follow it live</a>, <a href="#/cluster/${r.data.cluster.id}">open the cluster</a>).</p>`.s;
          apply.disabled = true;
          planned = null;
        } catch (err) {
          result.innerHTML = S.errorBox(err, "Not applied").s;
        }
      });
    },
  };
})(window.Shoal);
