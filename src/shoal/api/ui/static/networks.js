// A cluster's networking on its page (issue 26): its networks, each security group with the
// servers it protects and, rule by rule, what it lets in and from which servers now, and each
// load balancer with its members' health as the balancer itself sees it.
"use strict";
(function (S) {
  const { html } = S;
  // Health in the balancer's own words, with the shape and colour of the matching status.
  const HEALTH = { UP: ["ok", "●"], DOWN: ["bad", "✖"], UNKNOWN: ["busy", "?"] };
  function health(h) {
    const [cls, mark] = HEALTH[h] || HEALTH.UNKNOWN;
    return html`<span class="badge s-${cls}"><span aria-hidden="true">${mark}</span> <span class="health">${h}</span></span>`;
  }

  function empty(n) {
    return !n.networks.length && !n.security_groups.length && !n.load_balancers.length && !n.ports.length;
  }

  function networks(n) {
    if (!n.networks.length) return "";
    const rows = n.networks.map((net) => html`<tr data-network="${net.name}"><th scope="row">${net.name}</th>
      <td>${net.subnets.map((s) => `${s.cidr}${s.dns.length ? " (DNS " + s.dns.join(", ") + ")" : ""}`).join("; ")}</td>
      <td>${net.router ? `${net.router.name} → ${net.router.external_network}` : "none"}</td></tr>`);
    return html`<table class="list"><caption>Networks</caption><thead><tr><th scope="col">Network</th>
      <th scope="col">Subnets</th><th scope="col">Router out</th></tr></thead><tbody>${rows}</tbody></table>`;
  }

  function groups(n) {
    return n.security_groups.map((g) => html`<section class="sg" data-sg="${g.name}"><h3>Security group ${g.name}</h3>
      <p>Protects: ${g.servers.length ? g.servers.join(", ") : html`<span class="muted">no server yet</span>`}</p>
      <ul>${g.rules.length ? g.rules.map((r) => html`<li>allows ${r.allows}${r.from_servers ? html` — now ${r.from_servers.length ? r.from_servers.join(", ") : "nobody"}` : ""}</li>`) : html`<li>allows nothing in (replies only)</li>`}</ul></section>`);
  }

  function balancers(n) {
    return n.load_balancers.map((lb) => html`<section class="lb" data-lb="${lb.name}"><h3>Load balancer ${lb.name}</h3>
      <p>On ${lb.network}${lb.vip_address ? ` at ${lb.vip_address}` : ""}${lb.serving_at ? ` · serving at ${lb.serving_at}` : ""} ·
      listens on ${lb.listeners.map((x) => `${x.protocol} ${x.port} → ${x.pool}`).join(", ")}</p>
      ${lb.pools.map((p) => html`<table class="list"><caption>Pool ${p.name}: members of ${p.members_of}, ${p.protocol} port ${p.port}${p.monitor ? `, ${p.monitor} health check` : ""}</caption>
        <thead><tr><th scope="col">Member</th><th scope="col">Address</th><th scope="col">Health</th></tr></thead>
        <tbody>${p.members.map((m) => html`<tr data-member="${m.server}"><th scope="row">${m.server}</th><td>${m.address}:${p.port}</td>
        <td>${health(m.health)}</td></tr>`)}</tbody></table>`)}</section>`);
  }

  S.networks = {
    render(n) {
      if (empty(n)) return html`<p>No networks of its own: servers use the provider's networks.</p>`;
      return html`${networks(n)}${groups(n)}${balancers(n)}`;
    },
  };
})(window.Shoal);
