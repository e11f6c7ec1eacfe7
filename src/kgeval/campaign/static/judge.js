// The judging page: fetch the next item, answer by keys from anywhere on the page (y, then the link and Enter;
// n and u save at once; z undoes), show the item's evidence from the graph. Keys pressed while an answer is on
// its way are queued and applied to the next item, never dropped nor typed into a field. Text goes in with
// textContent only, and a link only when it is https, so nothing an item or an annotator wrote runs here.
"use strict";
(function () {
  const token = document.body.dataset.token;
  const role = document.body.dataset.role;
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const $ = (id) => document.getElementById(id);
  const sites = ($("verified").dataset.sites || "").split(" ").filter(Boolean);
  const POLL_MS = 2000;  // an empty page asks again: a conflict or a returned item appears without a reload
  let current = null, number = null, label = null, shownAt = 0, busy = false, poller = null;
  const queue = [];

  function message(text, kind) {
    $("message").textContent = text;
    $("message").className = kind || "";
  }

  function setLink(el, url) {
    if (!el) return;
    if (typeof url === "string" && url.startsWith("https://")) { el.href = url; el.hidden = false; }
    else { el.removeAttribute("href"); el.hidden = true; }
  }

  function choose(l) {
    label = l;
    document.querySelectorAll(".answer button").forEach((b) => {
      b.setAttribute("aria-pressed", String(b.dataset.label === l));
    });
  }

  // the focus back on the page (not a field, not a button): the next key is an answer, Enter repeats nothing
  function home() {
    if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
    $("card").focus({preventScroll: true});
  }

  function verifiedSite(link) {
    let host;
    try { host = new URL(link).hostname.toLowerCase(); } catch (e) { return null; }
    return sites.some((d) => host === d || host.endsWith("." + d));
  }

  function checkSource() {
    const v = $("source").value.trim();
    const ok = v ? verifiedSite(v) : null;
    $("source-check").textContent = !v ? "" : ok === null ? "not a link yet" :
      ok ? "✓ a verified source" : "not on the verified list: the curator will check it";
    $("source-check").className = ok ? "ok" : v ? "warn" : "";
  }

  function list(ul, texts) {
    ul.replaceChildren();
    texts.forEach((t) => { const li = document.createElement("li"); li.textContent = t; ul.appendChild(li); });
  }

  function evidence(ev, data) {
    $("evidence").hidden = !ev;
    if (!ev) return;
    [["head", data.head], ["tail", data.tail]].forEach(([side, name]) => {
      const e = ev[side];
      $("ev-" + side + "-name").textContent = name;
      $("ev-" + side + "-types").textContent = e.types.length ? "type: " + e.types.join(", ") : "type: not known";
      list($("ev-" + side + "-facts"), e.facts);
      $("ev-" + side + "-more").textContent = e.n_facts > e.facts.length ?
        (e.n_facts - e.facts.length) + " more known facts" : (e.n_facts ? "" : "no known fact");
    });
    const box = $("ev-questions");
    box.replaceChildren();
    ev.questions.forEach((a) => {
      const p = document.createElement("p");
      const more = a.count > a.known.length ? " and " + (a.count - a.known.length) + " more" : "";
      p.textContent = "Known answers to “" + a.question + "”: " +
        (a.count ? a.known.join("; ") + more + " (known: Yes)" : "none known");
      box.appendChild(p);
    });
  }

  function show(data) {
    current = data.item;
    number = data.number;
    $("progress").max = Math.max(data.total, 1);
    $("progress").value = data.done;
    $("progress-text").textContent = data.done + " of " + data.total;
    choose(null);
    $("source").value = "";
    $("note").value = "";
    checkSource();
    clearTimeout(poller);
    if (data.item === null) {
      $("card").hidden = true;
      message((role === "adjudicator" ? "No conflict waits for you" : "No item left for you") +
              " (this page checks again every " + POLL_MS / 1000 + " s).", "done");
      poller = setTimeout(() => { if (!busy) exclusive(load); }, POLL_MS);
      return;
    }
    $("card").hidden = false;
    $("number").textContent = data.number;
    $("question").textContent = data.question;
    $("head").textContent = data.head;
    $("tail").textContent = data.tail;
    $("head-id").textContent = data.head_id;
    $("tail-id").textContent = data.tail_id;
    $("relation").textContent = data.relation;
    evidence(data.evidence, data);
    setLink($("wikidata"), data.wikidata);
    setLink($("wikidata-tail"), data.wikidata_tail ||
      "https://www.wikidata.org/w/index.php?search=" + encodeURIComponent("haswbstatement:P646=" + data.tail_id));
    setLink($("websearch"), data.websearch);
    const body = document.querySelector("#answers tbody");
    if (body) {
      body.replaceChildren();
      (data.answers || []).forEach((a) => {
        const tr = document.createElement("tr");
        [a.label.toUpperCase(), a.source, a.note].forEach((text, i) => {
          const td = document.createElement("td");
          if (i === 1 && /^https?:\/\//.test(text)) {
            const link = document.createElement("a");
            link.href = text; link.textContent = text; link.rel = "noopener noreferrer"; link.target = "_blank";
            td.appendChild(link);
          } else td.textContent = text;
          tr.appendChild(td);
        });
        body.appendChild(tr);
      });
    }
    shownAt = performance.now();
  }

  async function call(path, body) {
    const opts = body === undefined ? {} : {
      method: "POST", body: JSON.stringify(body),
      headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
    };
    const r = await fetch("/api/" + token + path, opts);
    const data = await r.json();
    if (!r.ok) throw new Error(data.error || ("HTTP " + r.status));
    return data;
  }

  // one request at a time; keys pressed meanwhile wait in the queue and act on what the page shows next
  async function exclusive(fn) {
    busy = true;
    try { await fn(); } finally { busy = false; }
    const k = queue.shift();
    if (k !== undefined) act(k);
  }

  async function load() {
    try { show(await call("/next")); } catch (e) { message(e.message, "error"); }
  }

  async function submit() {
    if (current === null) return;
    if (label === null) { message("Item " + number + ": choose Yes, No" +
                                  (role === "adjudicator" ? "" : " or can't tell") + " first.", "error"); return; }
    const item = current, n = number, l = label;
    home();
    try {
      const seconds = (performance.now() - shownAt) / 1000;
      const r = await call("/judge", {item: item, label: l, source: $("source").value, next: true,
                                      note: $("note").value, seconds: Math.round(seconds * 10) / 10});
      const saved = "Item " + (r.number || n) + ": saved your " + {y: "Yes", n: "No", u: "can't tell"}[l] +
                    (r.hint ? " (" + r.hint + ")" : "") + ".";
      message(saved, "ok");
      if (r.next) show(r.next); else await load();  // the next item came with the answer: one round trip
      if (current === null) message(saved + " " + $("message").textContent, "ok");  // the last: both said
    } catch (e) {
      message("Item " + n + ": " + e.message.replace(/^item [^:]+: /, ""), "error");
      if (l === "y") $("source").focus();
    }
  }

  async function undoLast() {
    home();
    try {
      const r = await call("/undo", {});
      message("Item " + r.number + ": your answer was withdrawn: answer it again.", "ok");
      await load();
    } catch (e) { message(e.message, "error"); }
  }

  function act(k) {
    if (busy) { queue.push(k); return; }
    if (k === "z") { exclusive(undoLast); return; }
    if (current === null) return;
    if (k === "y") { choose("y"); $("source").focus(); return; }
    if (k === "n" || k === "u") { choose(k); exclusive(submit); return; }
    if (k === "enter") exclusive(submit);
  }

  document.querySelectorAll(".answer button").forEach((b) => b.addEventListener("click", () => {
    choose(b.dataset.label);
    if (b.dataset.label === "y") $("source").focus();
  }));
  $("submit").addEventListener("click", () => act("enter"));
  $("undo").addEventListener("click", () => act("z"));
  $("source").addEventListener("input", checkSource);
  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    const typing = t === $("note") || t === $("source");
    if (ev.key === "Escape" && typing) { ev.preventDefault(); home(); return; }
    if (ev.key === "Enter") {
      if (t === $("note") || t.tagName === "A") return;  // a new line in the note; a link opens
      ev.preventDefault();  // never the focused button's click: Enter after an undo does not undo again
      act("enter");
      return;
    }
    if (typing || t.tagName === "A") return;
    const k = ev.key.toLowerCase();
    if (k === "y" || k === "n" || k === "z" || (k === "u" && role !== "adjudicator")) { ev.preventDefault(); act(k); }
  });
  exclusive(load);
})();
