// Drawing zones -> hosts -> nodes. Every node shows its status as a shape and a word; every
// node group gets its own border pattern; groupings are listed with what the placement did for
// them (spread over N hosts, sharing one host) and can highlight their members. A host with
// too many nodes to draw shows counts per status, with its nodes behind a disclosure. Above the
// server's maximum of drawn nodes (`summarised`, issue 23) every host shows only its counts,
// made in SQL: no node is sent; and above its maximum of listed hosts (`hosts_summarised`) each
// zone is one line of totals (hosts, failed ones, capacity and use summed, nodes per status).
"use strict";
(function (S) {
  const { html, raw } = S;
  const PER_HOST_DRAWN = 12;     // more nodes than this on one host: aggregate
  const COMPACT_ABOVE = 300;     // more nodes than this in all: shorter chips

  function gb(mb) { return Math.round(mb / 1024); }

  function capacity(h) {
    if (!h.capacity) return h.failed ? html`<p class="cap">no capacity while failed</p>` : "";
    const c = h.capacity, u = h.used || { vcpus: 0, ram_mb: 0, disk_gb: 0, volume_gb: 0 };
    const row = (label, used, total, unit) => html`<span class="capitem">${label}
      <meter min="0" max="${total}" value="${Math.min(used, total)}" high="${total * 0.85}" optimum="0"
        aria-label="${label} used ${used} of ${total}${unit}"></meter>
      <span class="num">${used}/${total}${unit} (${Math.max(total - used, 0)} free)</span></span>`;
    return html`<p class="cap">${row("vCPU", u.vcpus, c.vcpus, "")}${row("RAM", gb(u.ram_mb), gb(c.ram_mb), " GB")}${
      c.volume_gb ? row("Vol", u.volume_gb, c.volume_gb, " GB") : ""}</p>`;
  }

  function groupIndex(topo) {
    const names = [];
    for (const z of topo.zones) for (const h of z.hosts) for (const n of h.nodes) {
      const key = `${n.cluster}/${n.group}`;
      if (!names.includes(key)) names.push(key);
    }
    names.sort();
    return new Map(names.map((k, i) => [k, i % 6]));
  }

  function chip(n, groups, compact, showCluster) {
    const g = groups.get(`${n.cluster}/${n.group}`) ?? 0;
    const label = showCluster ? `${n.cluster}/${n.name}` : n.name;
    const title = `${n.cluster}/${n.name} · group ${n.group} · ${n.kind} · ${n.status}${n.address ? " · " + n.address : ""}`;
    return html`<li class="node s-${S.statusClass(n.status)} g${g}${n.planned ? " planned" : ""}" data-node="${n.name}"
      data-cluster="${n.cluster}" data-group="${n.group}" data-status="${n.status}" data-kind="${n.kind}" title="${title}">
      <span aria-hidden="true" class="shape">${S.shape(n.status)}</span>${n.kind === "volume" ? html`<span class="kind" aria-hidden="true">▭</span>` : ""}
      <span class="name">${label}</span>${compact ? html`<span class="sr-only"> ${n.status}</span>` : html` <span class="st">${n.status}</span>`}</li>`;
  }

  function counts(nodes) {
    const c = {};
    for (const n of nodes) c[n.status] = (c[n.status] || 0) + 1;
    return countsOf(c);
  }

  function countsOf(c) {
    return Object.entries(c).sort().map(([s, k]) => html`<span class="count s-${S.statusClass(s)}">${k} <span aria-hidden="true">${S.shape(s)}</span> ${s}</span>`);
  }

  function hostCard(h, ctx) {
    const nodes = h.nodes;
    const count = ctx.summarised ? (h.node_count || 0) : nodes.length;
    let body;
    if (ctx.summarised && count) {
      body = html`<p class="agg" data-host="${h.name}">${count} nodes: ${countsOf(h.status_counts || {})}</p>`;
    } else if (!nodes.length) {
      body = html`<p class="empty">${h.failed ? "empty: its nodes are gone" : "no nodes"}</p>`;
    } else if (nodes.length > PER_HOST_DRAWN) {
      body = html`<details class="agg" data-host="${h.name}"><summary>${nodes.length} nodes: ${counts(nodes)}</summary>
        <ul class="nodes" data-lazy="1"></ul></details>`;
    } else {
      body = html`<ul class="nodes">${S.byName(nodes).map((n) => chip(n, ctx.groups, ctx.compact, ctx.showCluster))}</ul>`;
    }
    const drill = ctx.admin && ctx.drills && !ctx.plannedOnly
      ? (h.failed
        ? html`<button type="button" class="drill" data-recover="${h.name}">Recover ${h.name}</button>`
        : html`<button type="button" class="drill danger" data-fail="${h.name}">Fail ${h.name}</button>`)
      : "";
    return html`<li class="host${h.failed ? " failed" : ""}" data-host="${h.name}" data-failed="${h.failed ? "true" : "false"}"
        data-count="${count}" aria-label="host ${h.name}${h.failed ? ", failed" : ""}, ${count} nodes">
      <h4><span class="hname">${h.name}</span>${h.failed ? html` <span class="badge s-bad"><span aria-hidden="true">✖</span> FAILED</span>` : ""}</h4>
      ${capacity(h)}${body}${drill}</li>`;
  }

  // What each grouping's members look like on the hosts, in words.
  function groupingFacts(g, topo) {
    const members = new Set(g.members || []);
    const nodes = [];
    for (const z of topo.zones) for (const h of z.hosts) for (const n of h.nodes) {
      if (members.has(n.group) && n.kind === "server" && (!g.cluster || n.cluster === g.cluster)) nodes.push({ ...n, host: h.name, zone: z.name });
    }
    const scope = g.scope || "host";
    const key = (n) => (scope === "zone" ? n.zone : n.host);
    const per = {};
    for (const n of nodes) per[key(n)] = (per[key(n)] || 0) + 1;
    const domains = Object.keys(per).length;
    const rule = g.rule || "";
    let ok, text;
    if (rule.endsWith("anti-affinity")) {
      ok = domains === nodes.length;
      text = `${nodes.length} node(s) on ${domains} ${scope}(s): ${ok ? "all apart" : "some share a " + scope}`;
    } else if (rule.endsWith("affinity")) {
      ok = domains <= 1;
      text = ok ? `${nodes.length} node(s) share ${scope} ${Object.keys(per)[0] || "-"}` : `${nodes.length} node(s) split over ${domains} ${scope}s`;
    } else {
      const vals = Object.values(per);
      const skew = vals.length ? Math.max(...vals) - Math.min(...vals) : 0;
      ok = skew <= (g.max_skew ?? 1);
      text = `${Object.entries(per).sort().map(([d, k]) => `${d}: ${k}`).join(", ") || "no nodes"} (skew ${skew})`;
    }
    return { ok, text, nodes };
  }

  function groupingsPanel(groupings, topo) {
    if (!groupings || !groupings.length) return "";
    const rows = groupings.map((g, i) => {
      const f = groupingFacts(g, topo);
      return html`<tr data-grouping="${g.name}" data-ok="${f.ok}">
        <th scope="row">${g.name}</th><td>${g.rule} (${g.scope || "host"})</td><td>${(g.members || []).join(", ")}</td>
        <td>${f.ok ? html`<span class="badge s-ok"><span aria-hidden="true">✓</span> held</span>` : html`<span class="badge s-warn"><span aria-hidden="true">▲</span> not held</span>`} ${f.text}</td>
        <td><button type="button" class="hl-btn" aria-pressed="false" data-hl="${i}">Highlight</button></td></tr>`;
    });
    return html`<table class="groupings"><caption>Groupings: how the rules look on the hosts</caption>
      <thead><tr><th scope="col">Grouping</th><th scope="col">Rule</th><th scope="col">Members</th><th scope="col">On the hosts</th><th scope="col"><span class="sr-only">Show</span></th></tr></thead>
      <tbody>${rows}</tbody></table>`;
  }

  // Draw `topo` into `el`. opts: groupings (with .cluster), planned nodes [{node, group, kind,
  // host, zone, cluster}], drills (admin fail/recover buttons), onDrill(host, fail).
  function render(el, topo, opts = {}) {
    const t0 = performance.now();
    const data = structuredClone(topo);
    if (opts.planned && opts.planned.length) {
      const hostsByName = new Map();
      for (const z of data.zones) for (const h of z.hosts) hostsByName.set(h.name, h);
      for (const p of opts.planned) {
        let h = hostsByName.get(p.host);
        if (!h) {
          let z = data.zones.find((x) => x.name === p.zone);
          if (!z) { z = { name: p.zone, hosts: [] }; data.zones.push(z); }
          h = { name: p.host, zone: p.zone, failed: false, capacity: null, used: null, nodes: [] };
          z.hosts.push(h); hostsByName.set(p.host, h);
        }
        h.nodes.push({ id: "", name: p.node, cluster: p.cluster, cluster_id: "", group: p.group, kind: p.kind || "server", status: "PLANNED", address: null, planned: true });
      }
    }
    let total = 0, hosts = 0;
    const clusters = new Set();
    const summarised = !!data.summarised;
    const onHost = (h) => (summarised ? (h.node_count || 0) : h.nodes.length);
    const inZone = (z) => (z.summary ? z.summary.node_count : z.hosts.reduce((a, h) => a + onHost(h), 0));
    const hostsIn = (z) => (z.summary ? z.summary.host_count : z.hosts.length);
    for (const z of data.zones) {
      hosts += hostsIn(z); total += inZone(z);
      for (const h of z.hosts) h.nodes.forEach((n) => clusters.add(n.cluster));
    }
    const ctx = {
      groups: groupIndex(data), compact: total > COMPACT_ABOVE, showCluster: clusters.size > 1,
      admin: data.admin, drills: opts.drills, summarised,
    };
    const zoneTotals = (s) => html`${s.failed_hosts ? html`<p><span class="badge s-bad"><span aria-hidden="true">✖</span> ${s.failed_hosts} FAILED</span></p>` : ""}${
      capacity(s)}<p class="agg" data-zone-total="${s.node_count}">${s.node_count} nodes${s.node_count ? html`: ${countsOf(s.status_counts || {})}` : ""}</p>`;
    const zones = data.zones.map((z) => html`<section class="zone" data-zone="${z.name}" aria-label="zone ${z.name}">
      <h3>Zone ${z.name} <span class="muted">${hostsIn(z)} host(s), ${inZone(z)} node(s)</span></h3>
      ${z.summary ? zoneTotals(z.summary) : html`<ul class="hosts">${z.hosts.map((h) => hostCard(h, ctx))}</ul>`}</section>`);
    const unplacedCount = Object.values(data.unplaced_counts || {}).reduce((a, k) => a + k, 0);
    const unplaced = summarised && unplacedCount
      ? html`<section class="zone" aria-label="nodes without a host"><h3>Without a host</h3><p class="agg">${unplacedCount} nodes: ${countsOf(data.unplaced_counts)}</p></section>`
      : data.unplaced && data.unplaced.length
      ? html`<section class="zone" aria-label="nodes without a host"><h3>Without a host</h3><ul class="nodes">${data.unplaced.map((n) => chip(n, ctx.groups, ctx.compact, ctx.showCluster))}</ul></section>` : "";
    // A redraw (on events) keeps the hosts the user opened open.
    const opened = new Set([...el.querySelectorAll("details.agg[open]")].map((d) => d.dataset.host));
    el.innerHTML = html`<p class="summary" data-total="${total}">${total} node(s) on ${hosts} host(s) in ${data.zones.length} zone(s)${
      data.admin ? "" : " (only the hosts your nodes are on)"}.${
      data.hosts_summarised ? html` Counted per zone, hosts not listed: more than ${data.drawn_max} nodes on more than ${data.hosts_max} hosts.`
        : summarised ? html` Counted per host, not drawn: more than ${data.drawn_max} nodes.` : ""}</p>
      <p class="legend" aria-label="Legend"><span aria-hidden="true">●</span> active · <span aria-hidden="true">◐</span> in progress · <span aria-hidden="true">◌</span> waiting/deleting · <span aria-hidden="true">▲</span> warning · <span aria-hidden="true">✖</span> error/failed · <span aria-hidden="true">◇</span> planned · <span aria-hidden="true">▭</span> volume · border pattern = node group</p>
      ${groupingsPanel(opts.groupings, data)}
      <div class="zones">${zones}${unplaced}</div>`.s;
    // Aggregated hosts draw their nodes only when opened.
    el.querySelectorAll("details.agg").forEach((d) => {
      d.addEventListener("toggle", () => {
        const ul = d.querySelector("ul[data-lazy]");
        if (!d.open || !ul || ul.dataset.lazy !== "1") return;
        const h = data.zones.flatMap((z) => z.hosts).find((x) => x.name === d.dataset.host);
        ul.innerHTML = S.byName(h.nodes).map((n) => chip(n, ctx.groups, false, ctx.showCluster).s).join("");
        ul.dataset.lazy = "0";
      });
      if (opened.has(d.dataset.host)) d.open = true;
    });
    el.querySelectorAll("button.hl-btn").forEach((b) => {
      b.addEventListener("click", () => {
        const on = b.getAttribute("aria-pressed") !== "true";
        el.querySelectorAll("button.hl-btn").forEach((x) => x.setAttribute("aria-pressed", "false"));
        el.querySelectorAll(".node").forEach((n) => n.classList.remove("hl", "dim"));
        if (on) {
          b.setAttribute("aria-pressed", "true");
          const g = opts.groupings[Number(b.dataset.hl)];
          const members = new Set(g.members || []);
          el.querySelectorAll(".node").forEach((n) => {
            const mine = members.has(n.dataset.group) && (!g.cluster || n.dataset.cluster === g.cluster);
            n.classList.add(mine ? "hl" : "dim");
          });
        }
      });
    });
    el.querySelectorAll("button[data-fail], button[data-recover]").forEach((b) => {
      b.addEventListener("click", () => opts.onDrill && opts.onDrill(b.dataset.fail || b.dataset.recover, !!b.dataset.fail));
    });
    return performance.now() - t0;
  }

  async function drill(host, fail) {
    const verb = fail ? "fail" : "recover";
    await S.api("POST", `/v1/hosts/${encodeURIComponent(host)}/${verb}`);
    S.announce(`Host ${host} ${fail ? "failed" : "recovered"}.`);
  }

  function groupingsOf(cluster) {
    return ((cluster.document && cluster.document.groupings) || []).map((g) => ({ ...g, cluster: cluster.name }));
  }

  // The Topology page: every cluster the caller may see, or one, with admin drills.
  S.pages.topology = {
    title: "Topology",
    async show(view, params) {
      const t0 = performance.now();
      const selected = params.get("cluster") || "";
      view.innerHTML = html`<h1 tabindex="-1">Topology</h1>
        <form class="controls" id="topo-form"><label for="topo-cluster">Cluster</label>
          <select id="topo-cluster"><option value="">All clusters</option></select>
          <button type="button" id="topo-refresh">Refresh</button>
          <span class="muted" id="topo-updated" role="status"></span></form>
        <div id="topo"></div>`.s;
      const sel = view.querySelector("#topo-cluster");
      const box = view.querySelector("#topo");
      const { data: list } = await S.api("GET", "/v1/clusters");
      for (const c of list.clusters) {
        const o = document.createElement("option");
        o.value = c.id; o.textContent = `${c.name} (${c.status})`;
        if (c.id === selected || c.name === selected) o.selected = true;
        sel.appendChild(o);
      }
      sel.addEventListener("change", () => { location.hash = sel.value ? `#/topology?cluster=${encodeURIComponent(sel.value)}` : "#/topology"; });
      let first = true;
      const load = async () => {
        const f0 = performance.now();
        const q = sel.value ? `?cluster=${encodeURIComponent(sel.value)}` : "";
        const [{ data: topo }, groupings] = await Promise.all([
          S.api("GET", `/ui/api/topology${q}`),
          sel.value ? S.api("GET", `/v1/clusters/${encodeURIComponent(sel.value)}`).then((r) => groupingsOf(r.data.cluster)) : Promise.resolve([]),
        ]);
        const fetchMs = performance.now() - f0;
        const renderMs = render(box, topo, {
          groupings, drills: true,
          onDrill: async (host, fail) => {
            try { await drill(host, fail); } catch (e) { box.insertAdjacentHTML("afterbegin", S.errorBox(e).s); return; }
            await load();
          },
        });
        // A refresh may land after the user left this page: its stamp is gone, not an error.
        const stamp = view.querySelector("#topo-updated");
        if (stamp) stamp.textContent = `updated ${new Date().toLocaleTimeString()}`;
        if (first) {
          first = false;
          window.shoalTiming = { fetchMs, renderMs, firstRenderMs: performance.now() - t0, sinceNavigationMs: performance.now() };
          document.body.dataset.topologyRendered = String(Date.now());
        }
      };
      view.querySelector("#topo-refresh").addEventListener("click", load);
      await load();
      return S.live.refresher(load);
    },
  };

  S.topology = { render, groupingsOf, drill };
})(window.Shoal);
