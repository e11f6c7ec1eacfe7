// The judging page: fetch the next item, answer by keys from anywhere on the page (y, then the link and Enter;
// n and u save at once; z undoes), show the item's evidence from the graph. Text goes in with textContent only,
// and a link only when it is https, so nothing an item or an annotator wrote runs here.
//
// Typing ahead: an answer is taken from the page the moment its key is pressed (the label, the link and the
// note as they are then), the fields are emptied for the next item at once, and the answer waits in a queue
// that is sent in order, one request at a time, each to the item the page shows when its turn comes. So keys
// typed while an answer is on its way belong to the next item: `y` moves the focus to the link field at once
// (the link's letters land there, never as answer keys), Enter there queues that answer; `n`, `u` and `z` queue.
// A link the page's rule (the server's, served in data-pattern) refuses is never queued: the page says why.
"use strict";
(function () {
  const token = document.body.dataset.token;
  const role = document.body.dataset.role;
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const $ = (id) => document.getElementById(id);
  const sites = ($("verified").dataset.sites || "").split(" ").filter(Boolean);
  const rule = new RegExp($("source").dataset.pattern, "i");
  const POLL_MS = 2000;  // an empty page asks again: a conflict or a returned item appears without a reload
  const NAMES = {y: "Yes", n: "No", u: "can't tell"};
  let current = null, number = null, label = null, shownAt = 0, since = 0, busy = false, poller = null;
  const queue = [];  // answers taken from the page, not yet sent: {kind: "judge" | "undo", label, source, ...}

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

  // the server's words (kgeval.campaign.protocol.source_problem) for a link its rule refuses, else null
  function linkProblem(v) {
    if (v.length > 2000 || /[\u0000-\u001f]/.test(v)) return "a link of at most 2000 characters on one line";
    if (rule.test(v)) return null;
    const m = v.includes("://") ? /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(v) : null;
    const scheme = m ? m[1].toLowerCase() : "";
    if (scheme !== "http" && scheme !== "https") {
      return "only http:// or https:// links are accepted, not one starting '" +
             (scheme ? scheme + "://" : v.slice(0, 12)) + "' (cut off?)";
    }
    return "only http:// or https:// links naming a site are accepted (https://en.wikipedia.org/wiki/…), no " +
           "space or backslash before the path";
  }

  function verifiedSite(link) {
    const m = rule.exec(link);
    if (!m) return null;
    const host = m[1].toLowerCase();
    return sites.some((d) => host === d || host.endsWith("." + d));
  }

  function checkSource() {
    const v = $("source").value.trim();
    const ok = v ? verifiedSite(v) : null;
    $("source-check").textContent = !v ? "" : ok === null ? "not a link yet: " + linkProblem(v) :
      ok ? "✓ a verified source" : "not on the verified list: the curator will check it";
    $("source-check").className = ok ? "ok" : v ? "warn" : "";
  }

  function clearFields() {
    choose(null);
    $("source").value = "";
    $("note").value = "";
    checkSource();
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

  // the item; the fields are not touched: what they hold was typed for the item shown next
  function show(data) {
    current = data.item;
    number = data.number;
    $("progress").max = Math.max(data.total, 1);
    $("progress").value = data.done;
    $("progress-text").textContent = data.done + " of " + data.total;
    clearTimeout(poller);
    if (data.item === null) {
      $("card").hidden = true;
      message((role === "adjudicator" ? "No conflict waits for you" : "No item left for you") +
              " (this page checks again every " + POLL_MS / 1000 + " s).", "done");
      poller = setTimeout(() => { if (!busy) run(load); }, POLL_MS);
      return;
    }
    if ($("message").className === "done") message("");  // the empty queue's words go with it
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

  // one request at a time: ``first`` (a load), then every queued answer in order; ``busy`` is set before the
  // first await, so a key pressed meanwhile queues
  async function run(first) {
    busy = true;
    try {
      if (first) await first();
      while (queue.length) {
        const a = queue.shift();
        if (a.kind === "undo") { await undoLast(); continue; }
        if (current === null) { dropQueue(a, "no item is left to answer"); break; }
        if (!(await send(a))) break;
      }
    } finally { busy = false; }
  }

  function dropQueue(a, why) {
    const n = queue.length + 1;
    queue.length = 0;
    message(n + (n === 1 ? " answer" : " answers") + " typed ahead not saved: " + why + ".", "error");
  }

  async function load() {
    try { show(await call("/next")); } catch (e) { message(e.message, "error"); }
  }

  async function send(a) {
    const n = number;
    try {
      const r = await call("/judge", {item: current, label: a.label, source: a.source, next: true, note: a.note,
                                      seconds: a.seconds});
      const saved = "Item " + (r.number || n) + ": saved your " + NAMES[a.label] +
                    (r.hint ? " (" + r.hint + ")" : "") + ".";
      message(saved, "ok");
      if (r.next) show(r.next); else await load();  // the next item came with the answer: one round trip
      if (current === null) message(saved + " " + $("message").textContent, "done");  // the last: both said
      return true;
    } catch (e) {
      // the answer comes back to the fields of its item, as typed; answers typed after it were meant for the
      // items after it: none is sent to this one
      const later = queue.length;
      queue.length = 0;
      choose(a.label);
      $("source").value = a.source;
      $("note").value = a.note;
      checkSource();
      message("Item " + n + ": not saved: " + e.message.replace(/^item [^:]+: /, "") +
              (later ? " (" + later + " answers typed after it were not sent)" : "") +
              (a.source ? "; Esc in the link field clears it" : ""), "error");
      if (a.label === "y" || a.source) $("source").focus(); else home();
      return false;
    }
  }

  async function undoLast() {
    try {
      const r = await call("/undo", {});
      message("Item " + r.number + ": your answer was withdrawn: answer it again.", "ok");
      await load();
    } catch (e) { message(e.message, "error"); }
  }

  function enqueue(a) {
    queue.push(a);
    if (!busy) run();
  }

  // an answer from what the page holds now; the fields empty at once for the next item
  function take() {
    if (!busy && current === null) return;
    if (label === null) {
      message("Choose Yes, No" + (role === "adjudicator" ? "" : " or can't tell") + " first.", "error");
      return;
    }
    const source = $("source").value.trim();
    if (source || label === "y") {
      const problem = source ? linkProblem(source) : "a Yes needs the http(s) link of the page that confirms it";
      if (problem) {
        message((busy ? "" : "Item " + number + ": ") + "not saved: " + problem +
                (source ? "; Esc clears the link" : "") + ".", "error");
        $("source").focus();
        return;
      }
    }
    const now = performance.now();
    const seconds = Math.max(0, now - Math.max(shownAt, since)) / 1000;
    since = now;
    enqueue({kind: "judge", label: label, source: source, note: $("note").value,
             seconds: Math.round(seconds * 10) / 10});
    clearFields();
    home();
  }

  function act(k) {
    if (k === "z") { clearFields(); home(); enqueue({kind: "undo"}); return; }
    if ((!busy && current === null) || $("card").hidden) return;  // no item, nor one on its way
    if (k === "y") { choose("y"); $("source").focus(); checkSource(); return; }
    if (k === "n" || k === "u") { choose(k); take(); return; }
    if (k === "enter") take();
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
    if (ev.key === "Escape" && typing) {
      ev.preventDefault();
      // a link the rule refuses goes with Esc, so that n and u (which send the link field too) work again
      if (t === $("source") && $("source").value.trim() && linkProblem($("source").value.trim())) {
        $("source").value = "";
        if (label === "y") choose(null);
        checkSource();
        message("The link was cleared: y, n" + (role === "adjudicator" ? "" : ", u") + " or z.", "ok");
      }
      home();
      return;
    }
    if (ev.key === "Enter") {
      if (t === $("note") || t.tagName === "A") return;  // a new line in the note; a link opens
      ev.preventDefault();  // never the focused button's click: Enter after an undo does not undo again
      act("enter");
      return;
    }
    if (typing || t.tagName === "A") return;  // a letter typed in a field is text, never an answer key
    const k = ev.key.toLowerCase();
    if (k === "y" || k === "n" || k === "z" || (k === "u" && role !== "adjudicator")) { ev.preventDefault(); act(k); }
  });
  run(load);
})();
