// The curator's live page: polls /api/<token>/live every 400 ms and redraws the tables with textContent only;
// the rows filtered and sorted as the curator chose (the choice kept across polls; at first by closeness to a
// decision). Each column's name is a button: sorting is reached with Tab and done with Enter or Space.
"use strict";
(function () {
  const token = document.body.dataset.token;
  const $ = (id) => document.getElementById(id);
  const fmt = (x) => (x === null || x === undefined) ? "–" : (Math.abs(x) < 1e-4 && x !== 0 ? x.toExponential(2)
                                                                                                : x.toFixed(4));
  let last = null, sortKey = "needed", sortDir = 1;

  function cell(tr, text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
  }

  function verdict(c) {
    if (!c.decided) return "not yet";
    const aBetter = c.rule === "exact" ? c.bound_low > 0 : c.low > 0;
    return (aBetter ? "A better" : "B better") + (c.rule === "exact" ? " (exact)" : "");
  }

  // closeness to a decision, smallest first: undecided pairs by the judgments that would decide them at the
  // estimate in hand (more_needed, as sample-estimate computes it), then by how far the nearer end of the
  // interval is from 0 when the items left here can still decide them, then those no budget or no item left
  // here decides; the decided last
  function closeness(c) {
    if (c.decided) return [3, 0];
    if (c.more_needed !== null && c.more_needed !== undefined) return [0, c.more_needed];
    const gap = Math.min(-c.low, c.high);
    const stuck = c.no_budget || (c.reach_low !== null && c.reach_low <= 0 && c.reach_high >= 0);
    return [stuck ? 2 : 1, gap];
  }

  function rows(d) {
    const words = $("filter").value.trim().toLowerCase();
    let out = d.comparisons.filter((c) => (!words || (c.a + " " + c.b + " " + c.metric_name).toLowerCase()
      .includes(words)) && !($("undecided-only").checked && c.decided));
    if (sortKey !== null) {
      const v = (c) => sortKey === "decided" ? verdict(c) : sortKey === "needed" ? closeness(c) : c[sortKey];
      const cmp = (a, b) => Array.isArray(a) ? (a[0] - b[0]) || (a[1] - b[1]) : a < b ? -1 : a > b ? 1 : 0;
      out = out.slice().sort((x, y) => {
        const a = v(x), b = v(y);
        if (a === b) return 0;
        if (a === null || a === undefined) return 1;  // no value last, whichever the direction
        if (b === null || b === undefined) return -1;
        return cmp(a, b) * sortDir;
      });
    }
    document.querySelectorAll("#comparisons th[data-key]").forEach((th) => th.setAttribute("aria-sort",
      th.dataset.key !== sortKey ? "none" : sortDir > 0 ? "ascending" : "descending"));
    return out;
  }

  function draw(d) {
    last = d;
    $("final").textContent = d.final;
    $("total").textContent = d.total;
    $("judgments").textContent = d.judgments;
    const pr = d.projection;  // kgeval.campaign.projection: 2 × the plan's budget, and the running projection
    $("expected-judgments").textContent = pr.expected === null ? "no budget known" : Math.round(pr.expected);
    $("projected").textContent = Math.round(pr.projected) + (pr.overrun !== null && pr.overrun > 0 ?
      " (" + Math.round(100 * pr.overrun) + " % over the plan's expectation)" : "");
    $("kappa").textContent = d.kappa === null ? "–" : d.kappa.toFixed(3);
    $("kappa-reading").textContent = d.kappa_detail ? "(" + d.kappa_detail.reading + ")" : "";
    $("rule").textContent = d.rule_text;
    $("updated").textContent = new Date().toLocaleTimeString();
    const body = $("comparisons").querySelector("tbody");
    body.replaceChildren();
    rows(d).forEach((c) => {
      const tr = document.createElement("tr");
      tr.dataset.pair = c.a + "|" + c.b + "|" + c.metric;
      cell(tr, c.a, "a"); cell(tr, c.b, "b"); cell(tr, c.metric_name, "metric");
      cell(tr, fmt(c.delta), "delta"); cell(tr, fmt(c.low), "low"); cell(tr, fmt(c.high), "high");
      cell(tr, verdict(c), "decided");
      cell(tr, fmt(c.bound_low), "bound_low"); cell(tr, fmt(c.bound_high), "bound_high");
      cell(tr, String(c.judgments), "judgments"); cell(tr, c.needed, "needed");
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

  document.querySelectorAll("#comparisons button.sort").forEach((b) => b.addEventListener("click", () => {
    sortDir = sortKey === b.dataset.key ? -sortDir : 1;
    sortKey = b.dataset.key;
    if (last) draw(last);
  }));
  $("filter").addEventListener("input", () => last && draw(last));
  $("undecided-only").addEventListener("change", () => last && draw(last));

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
