// The judging page: fetch the next item, answer with the keys y/n/u and Enter, undo. Text goes in with
// textContent only, and a link only when it is https, so nothing an item or an annotator wrote runs here.
"use strict";
(function () {
  const token = document.body.dataset.token;
  const role = document.body.dataset.role;
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const $ = (id) => document.getElementById(id);
  let current = null, label = null, shownAt = 0;

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

  function show(data) {
    current = data.item;
    $("progress").max = Math.max(data.total, 1);
    $("progress").value = data.done;
    $("progress-text").textContent = data.done + " of " + data.total;
    choose(null);
    $("source").value = "";
    $("note").value = "";
    if (data.item === null) {
      $("card").hidden = true;
      message(role === "adjudicator" ? "No conflict waits for you: thank you." : "No item left for you: thank you.",
              "done");
      return;
    }
    $("card").hidden = false;
    $("question").textContent = data.question;
    $("head").textContent = data.head;
    $("tail").textContent = data.tail;
    $("head-id").textContent = data.head_id;
    $("tail-id").textContent = data.tail_id;
    $("relation").textContent = data.relation;
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

  async function load() {
    try { show(await call("/next")); } catch (e) { message(e.message, "error"); }
  }

  async function submit() {
    if (current === null) return;
    if (label === null) { message("Choose Yes, No" + (role === "adjudicator" ? "" : " or can't tell") + " first.",
                                  "error"); return; }
    try {
      const seconds = (performance.now() - shownAt) / 1000;
      const r = await call("/judge", {item: current, label: label, source: $("source").value,
                                      note: $("note").value, seconds: Math.round(seconds * 10) / 10});
      message("Saved" + (r.hint ? " (" + r.hint + ")" : "") + ".", "ok");
      await load();
    } catch (e) { message(e.message, "error"); }
  }

  async function undoLast() {
    try {
      const r = await call("/undo", {});
      message("Your answer to item " + r.undone + " was withdrawn: answer it again.", "ok");
      await load();
    } catch (e) { message(e.message, "error"); }
  }

  document.querySelectorAll(".answer button").forEach((b) => b.addEventListener("click", () => choose(b.dataset.label)));
  $("submit").addEventListener("click", submit);
  $("undo").addEventListener("click", undoLast);
  document.addEventListener("keydown", (ev) => {
    const typing = ev.target === $("note") || ev.target === $("source");
    if (ev.key === "Enter" && ev.target !== $("note") && ev.target.tagName !== "BUTTON") {
      ev.preventDefault(); submit(); return;
    }
    if (typing || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = ev.key.toLowerCase();
    if (k === "y" || k === "n" || (k === "u" && role !== "adjudicator")) { ev.preventDefault(); choose(k); }
  });
  load();
})();
