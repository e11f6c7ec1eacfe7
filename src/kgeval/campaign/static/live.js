// The curator's live page: polls /api/<token>/live every 400 ms and redraws the tables with textContent only.
"use strict";
(function () {
  const token = document.body.dataset.token;
  const $ = (id) => document.getElementById(id);
  const fmt = (x) => (x === null || x === undefined) ? "–" : (Math.abs(x) < 1e-4 && x !== 0 ? x.toExponential(2)
                                                                                                : x.toFixed(4));

  function cell(tr, text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
  }

  function draw(d) {
    $("final").textContent = d.final;
    $("total").textContent = d.total;
    $("judgments").textContent = d.judgments;
    $("kappa").textContent = d.kappa === null ? "–" : d.kappa.toFixed(3);
    $("updated").textContent = new Date().toLocaleTimeString();
    const body = $("comparisons").querySelector("tbody");
    body.replaceChildren();
    d.comparisons.forEach((c) => {
      const tr = document.createElement("tr");
      tr.dataset.pair = c.a + "|" + c.b + "|" + c.metric;
      cell(tr, c.a, "a"); cell(tr, c.b, "b"); cell(tr, c.metric, "metric");
      cell(tr, fmt(c.delta), "delta"); cell(tr, fmt(c.low), "low"); cell(tr, fmt(c.high), "high");
      const aBetter = c.rule === "exact" ? c.bound_low > 0 : c.low > 0;
      cell(tr, c.decided ? (aBetter ? "A better" : "B better") + (c.rule === "exact" ? " (exact)" : "") : "not yet",
           "decided");
      cell(tr, fmt(c.bound_low), "bound_low"); cell(tr, fmt(c.bound_high), "bound_high");
      cell(tr, String(c.judgments), "judgments"); cell(tr, String(c.expected), "expected");
      if (c.decided) tr.classList.add("is-decided");
      body.appendChild(tr);
    });
    const rates = $("rates").querySelector("tbody");
    rates.replaceChildren();
    Object.entries(d.rates).forEach(([name, rate]) => {
      const tr = document.createElement("tr");
      tr.dataset.person = name;
      cell(tr, name, "person"); cell(tr, rate === null ? "–" : rate.toFixed(1), "rate");
      rates.appendChild(tr);
    });
  }

  async function poll() {
    try {
      const r = await fetch("/api/" + token + "/live");
      const d = await r.json();
      if (!r.ok) throw new Error(d.error || ("HTTP " + r.status));
      draw(d);
      $("message").textContent = "";
    } catch (e) { $("message").textContent = e.message; }
    setTimeout(poll, 400);
  }
  poll();
})();
