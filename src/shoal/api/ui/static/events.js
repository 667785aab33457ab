// The event stream: GET /v1/events/stream (server-sent events) read with fetch, because
// EventSource cannot send the Authorization header. Reconnects after `Last-Event-ID`-style
// resumption (`after`), keeps the last events for the Live page, and tells subscribers.
"use strict";
(function (S) {
  const KEEP = 200;
  const listeners = new Set();
  const recent = [];
  let last = 0;
  let controller = null;
  let retryMs = 500;

  function setState(text) {
    const el = document.getElementById("stream-state");
    el.hidden = false;
    el.textContent = text;
    el.dataset.state = text;
  }

  function deliver(ev) {
    last = Math.max(last, ev.id);
    recent.push(ev);
    if (recent.length > KEEP) recent.splice(0, recent.length - KEEP);
    for (const fn of listeners) {
      try { fn(ev); } catch (e) { console.error(e); }
    }
  }

  // Where "now" is: the id of the newest event, plus the last few for the log.
  async function catchUp() {
    for (;;) {
      const { data } = await S.api("GET", `/v1/events?after=${last}&limit=10000`);
      const found = data.events;
      found.slice(-KEEP).forEach((e) => { recent.push(e); });
      if (recent.length > KEEP) recent.splice(0, recent.length - KEEP);
      if (found.length) last = found[found.length - 1].id;
      if (found.length < 10000) return;
    }
  }

  function parseBlock(block) {
    let data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("data:")) data += line.slice(5).trimStart();
    }
    if (data) deliver(JSON.parse(data));
  }

  async function run() {
    controller = new AbortController();
    const mine = controller;
    try {
      const r = await fetch(`/v1/events/stream?after=${last}`, {
        headers: { Authorization: `Bearer ${S.token()}`, Accept: "text/event-stream" },
        signal: mine.signal,
      });
      if (!r.ok) throw new Error(`stream answered ${r.status}`);
      setState("live");
      retryMs = 500;
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          parseBlock(buf.slice(0, i));
          buf = buf.slice(i + 2);
        }
      }
    } catch (e) {
      if (mine.signal.aborted) return;
    }
    if (mine.signal.aborted) return;
    setState("reconnecting");
    setTimeout(() => { if (controller === mine) run(); }, retryMs);
    retryMs = Math.min(retryMs * 2, 10000);
  }

  S.events = {
    recent,
    async start() {
      S.events.stop();
      last = 0;
      recent.length = 0;
      setState("connecting");
      try { await catchUp(); } catch (e) { console.error(e); }
      run();
    },
    stop() {
      if (controller) controller.abort();
      controller = null;
    },
    on(fn) { listeners.add(fn); return () => listeners.delete(fn); },
  };
})(window.Shoal);
