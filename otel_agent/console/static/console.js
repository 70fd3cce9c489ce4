// otel-agent console: small progressive enhancement. Every page works without this file.
// Never builds HTML from data: the details panel is server-rendered (escaped) HTML fetched from our own origin,
// and the keyboard help is a server-rendered element this file only shows and hides.
"use strict";

(function () {
  function rowsOf(tree) { return Array.prototype.slice.call(tree.querySelectorAll("tr.node, tr.gap")); }
  function visible(r) { return r.classList.contains("node") && !r.classList.contains("hidden"); }

  function setupTree(tree) {
    var rows, byKey, kids;
    function index() {  // again when rows of a tree sent in part arrive (tree.adopt)
      rows = rowsOf(tree);
      byKey = {};
      kids = {};
      rows.forEach(function (r) {
        if (r.dataset.key) { byKey[r.dataset.key] = r; }
        var p = r.dataset.parent || "";
        (kids[p] = kids[p] || []).push(r);
      });
    }
    index();
    function setOpen(row, open) {
      var b = row.querySelector(".toggle");
      if (b) { b.setAttribute("aria-expanded", open ? "true" : "false"); b.textContent = open ? "\u25BE" : "\u25B8"; }
      row.dataset.open = open ? "1" : "0";
      if (kids[row.dataset.key]) { row.setAttribute("aria-expanded", open ? "true" : "false"); }
    }
    function showChildren(key, show) {
      (kids[key] || []).forEach(function (c) {
        c.classList.toggle("hidden", !show);
        showChildren(c.dataset.key, show && c.dataset.open === "1");
      });
    }
    function reveal(row) {  // open every ancestor of row
      var chain = [];
      for (var p = byKey[row.dataset.parent]; p; p = byKey[p.dataset.parent]) { chain.unshift(p); }
      chain.forEach(function (p) { setOpen(p, true); showChildren(p.dataset.key, true); });
    }
    var openDepth = parseInt(tree.dataset.openDepth || "2", 10);
    // Open on load: the first levels, and every ancestor of a problem, a match or the selected node (the server
    // marks those data-reveal), so nothing that went wrong is hidden in a collapsed skill.
    rows.forEach(function (r) {
      setOpen(r, parseInt(r.dataset.depth, 10) < openDepth || r.dataset.reveal === "1");
    });
    (kids[""] || []).forEach(function (r) { showChildren(r.dataset.key, r.dataset.open === "1"); });
    rows.forEach(function (r) { if (!byKey[r.dataset.parent]) { r.classList.remove("hidden"); } });

    tree.setAttribute("role", "treegrid");
    rows.forEach(function (r) { r.tabIndex = -1; r.setAttribute("aria-level", String(parseInt(r.dataset.depth, 10) + 1)); });
    var current = tree.querySelector("tr.node.selected") || rows[0];
    if (current) { current.tabIndex = 0; }
    function focusRow(row) {
      if (!row) { return; }
      if (current && current !== row) { current.tabIndex = -1; }
      current = row;
      row.tabIndex = 0;
      row.focus();
    }
    tree.focusRow = focusRow;
    tree.openRow = function (row) { setOpen(row, true); showChildren(row.dataset.key, true); };
    tree.adopt = function (added) {  // rows just inserted (closed, not yet focusable)
      index();
      added.forEach(function (r) {
        setOpen(r, false);
        r.tabIndex = -1;
        r.setAttribute("aria-level", String(parseInt(r.dataset.depth, 10) + 1));
      });
    };

    tree.addEventListener("click", function (ev) {
      var toggle = ev.target.closest(".toggle");
      var row = ev.target.closest("tr.node");
      if (!row) { return; }
      if (toggle) {
        ev.preventDefault();
        var open = row.dataset.open !== "1";
        setOpen(row, open);
        showChildren(row.dataset.key, open);
        return;
      }
      if (ev.target.closest("a") && !ev.target.closest("a.kind")) { return; }
      ev.preventDefault();
      focusRow(row);
      select(tree, row);
    });

    tree.addEventListener("keydown", function (ev) {
      var row = ev.target.closest && ev.target.closest("tr.node");
      if (!row || ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
      var k = ev.key;
      // the next or previous shown row by walking siblings: a 10,000-row tree is never scanned per key press
      function step(from, dir) {
        var r = dir > 0 ? from.nextElementSibling : from.previousElementSibling;
        while (r && !visible(r)) { r = dir > 0 ? r.nextElementSibling : r.previousElementSibling; }
        return r || from;
      }
      if (k === "ArrowDown" || k === "j") { focusRow(step(row, 1)); }
      else if (k === "ArrowUp" || k === "k") { focusRow(step(row, -1)); }
      else if (k === "Home") { focusRow(rows[0]); }
      else if (k === "End") { var last = rows[rows.length - 1]; focusRow(visible(last) ? last : step(last, -1)); }
      else if (k === "ArrowRight" || k === "l") {
        if (kids[row.dataset.key] && row.dataset.open !== "1") { setOpen(row, true); showChildren(row.dataset.key, true); }
        else if (kids[row.dataset.key]) { focusRow(kids[row.dataset.key][0]); }
      } else if (k === "ArrowLeft" || k === "h") {
        if (kids[row.dataset.key] && row.dataset.open === "1") { setOpen(row, false); showChildren(row.dataset.key, false); }
        else if (byKey[row.dataset.parent]) { focusRow(byKey[row.dataset.parent]); }
      } else if (k === "Enter" || k === " ") { select(tree, row); }
      else { return; }
      ev.preventDefault();
    });

    // the problems and matches strips: open the way to the node, select it and show it
    document.querySelectorAll(".strip a.jump").forEach(function (a) {
      a.addEventListener("click", function (ev) {
        var row = byKey[a.dataset.key];
        if (!row) { return; }
        ev.preventDefault();
        reveal(row);
        row.classList.remove("hidden");
        focusRow(row);
        row.scrollIntoView({ block: "center" });
        select(tree, row);
      });
    });
  }

  function urls(tree, row) {
    // data-key is "trace_id:span_id"; the page URL selects by key (run page) or by span id (trace page)
    var key = row.dataset.key;
    var cut = key.indexOf(":");
    var trace = key.slice(0, cut);
    var span = key.slice(cut + 1);
    var pick = tree.dataset.select === "key" ? key : span;
    return {
      href: tree.dataset.base + (tree.dataset.q || "?span=") + encodeURIComponent(pick),
      fragment: "/traces/" + encodeURIComponent(trace) + "/spans/" + encodeURIComponent(span) + "?fragment=1"
    };
  }

  function select(tree, row) {
    var panel = document.getElementById("details");
    var u = urls(tree, row);
    if (!panel) { window.location = u.href; return; }
    rowsOf(tree).forEach(function (r) { r.classList.remove("selected"); });
    row.classList.add("selected");
    fetch(u.fragment, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (resp) { if (!resp.ok) { throw new Error(resp.status); } return resp.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        panel.replaceChildren.apply(panel, Array.prototype.slice.call(doc.body.childNodes));
        history.replaceState(null, "", u.href);
      })
      .catch(function () { window.location = u.href; });
  }

  // the split between the tree and the details: drag the gutter, or focus it and use the arrow keys
  function setupGutter() {
    var split = document.getElementById("split");
    var gutter = document.getElementById("gutter");
    if (!split || !gutter) { return; }
    function setWidth(px) {
      var max = Math.max(280, split.clientWidth * 0.6);
      px = Math.max(240, Math.min(max, px));
      split.style.gridTemplateColumns = "minmax(0, 1fr) 10px " + Math.round(px) + "px";
      gutter.setAttribute("aria-valuenow", String(Math.round(px)));
      try { window.localStorage.setItem("oa.details.width", String(Math.round(px))); } catch (e) { /* private mode */ }
    }
    var saved = null;
    try { saved = parseInt(window.localStorage.getItem("oa.details.width"), 10); } catch (e) { saved = null; }
    if (saved && window.matchMedia("(min-width: 901px)").matches) { setWidth(saved); }
    gutter.addEventListener("pointerdown", function (ev) {
      ev.preventDefault();
      gutter.setPointerCapture(ev.pointerId);
      gutter.classList.add("dragging");
      function move(e) { setWidth(split.getBoundingClientRect().right - e.clientX - 5); }
      function up() {
        gutter.classList.remove("dragging");
        gutter.removeEventListener("pointermove", move);
        gutter.removeEventListener("pointerup", up);
      }
      gutter.addEventListener("pointermove", move);
      gutter.addEventListener("pointerup", up);
    });
    gutter.addEventListener("keydown", function (ev) {
      var details = document.getElementById("details");
      var w = details ? details.getBoundingClientRect().width : 320;
      if (ev.key === "ArrowLeft") { setWidth(w + 32); ev.preventDefault(); }
      if (ev.key === "ArrowRight") { setWidth(w - 32); ev.preventDefault(); }
    });
  }

  // the minimap: drag across it to zoom to that part, click to move the shown part there
  function setupMinimap() {
    var map = document.getElementById("minimap");
    if (!map) { return; }
    function frac(ev) {
      var box = map.getBoundingClientRect();
      return Math.max(0, Math.min(1, (ev.clientX - box.left) / Math.max(box.width, 1)));
    }
    var start = null;
    map.addEventListener("pointerdown", function (ev) { start = frac(ev); map.setPointerCapture(ev.pointerId); });
    map.addEventListener("pointerup", function (ev) {
      if (start === null) { return; }
      var end = frac(ev);
      var params = new URLSearchParams(window.location.search);
      var lo, hi;
      if (Math.abs(end - start) > 0.01) { lo = Math.min(start, end); hi = Math.max(start, end); }
      else {
        var cur = (params.get("zoom") || "0-1").split("-").map(parseFloat);
        var width = (cur.length === 2 && cur[1] > cur[0]) ? Math.min(cur[1] - cur[0], 0.5) : 0.25;
        lo = Math.max(0, Math.min(1 - width, end - width / 2)); hi = lo + width;
      }
      start = null;
      params.set("zoom", lo.toFixed(4) + "-" + hi.toFixed(4));
      window.location.search = params.toString();
    });
  }

  // lists: j / k (or arrows) move between rows, Enter opens the row's first link
  function setupLists() {
    document.querySelectorAll("table.grid.keys").forEach(function (table) {
      var links = function () {
        return Array.prototype.slice.call(table.querySelectorAll("tbody tr")).map(function (tr) {
          return tr.querySelector("a");
        }).filter(Boolean);
      };
      table.addEventListener("keydown", function (ev) {
        if (ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
        var all = links();
        var i = all.indexOf(document.activeElement);
        if (i < 0) { return; }
        if (ev.key === "j" || ev.key === "ArrowDown") { all[Math.min(i + 1, all.length - 1)].focus(); ev.preventDefault(); }
        if (ev.key === "k" || ev.key === "ArrowUp") { all[Math.max(i - 1, 0)].focus(); ev.preventDefault(); }
      });
    });
  }

  // page keys: ? help, / find, g then t: the tree or list, Escape closes the help
  function setupKeys() {
    var help = document.getElementById("keyhelp");
    document.addEventListener("keydown", function (ev) {
      var t = ev.target;
      if (ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
      if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) {
        if (ev.key === "Escape") { t.blur(); }
        return;
      }
      if (ev.key === "?" && help) { help.hidden = !help.hidden; ev.preventDefault(); return; }
      if (ev.key === "Escape" && help && !help.hidden) { help.hidden = true; return; }
      if (ev.key === "/") {
        var box = document.querySelector("#find, form.filters input[type=search], form.filters input[type=text], textarea.sql");
        if (box) { box.focus(); ev.preventDefault(); }
        return;
      }
      if (ev.target.closest && ev.target.closest("table.tree, table.grid.keys")) { return; }
      if (ev.key === "j" || ev.key === "k" || ev.key === "ArrowDown") {
        var tree = document.querySelector("table.tree");
        if (tree && tree.focusRow) {
          var row = tree.querySelector("tr.node.selected") || tree.querySelector("tr.node:not(.hidden)");
          tree.focusRow(row); ev.preventDefault(); return;
        }
        var first = document.querySelector("table.grid.keys tbody tr a");
        if (first && ev.key !== "ArrowDown") { first.focus(); ev.preventDefault(); }
      }
    });
    var close = document.getElementById("keyhelp-close");
    if (close && help) { close.addEventListener("click", function () { help.hidden = true; }); }
  }

  function setupRefresh() {
    var el = document.querySelector("[data-refresh-seconds]");
    if (!el) { return; }
    var seconds = Math.max(5, parseInt(el.dataset.refreshSeconds, 10) || 15);
    window.setTimeout(function () {
      if (!document.hidden) { window.location.reload(); } else { setupRefresh(); }
    }, seconds * 1000);
  }

  function setupConfirm() {
    document.querySelectorAll("form.review").forEach(function (f) {
      f.addEventListener("submit", function () {
        f.querySelectorAll("button").forEach(function (b) { b.setAttribute("aria-busy", "true"); });
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("table.tree").forEach(setupTree);
    setupGutter();
    setupMinimap();
    setupLists();
    setupKeys();
    setupRefresh();
    setupConfirm();
  });
})();

// ---- Live pages (issue 36: pages/runs.py, templates/_runs_live.html, run.html's data-live root) ----------------
// The runs list, and the page of a run whose status is running, ask the server for their own page again every few
// seconds while the tab is visible and swap in what it rendered (escaped HTML from our origin, as the details panel
// is: nothing here builds HTML from data). Held while paused (the button), while the tab is hidden, while text is
// selected, while focus is in a form or the list, or while scrolled a screen past the list's top. Without this file
// a reload shows the same rows.
(function () {
  var PAUSED_KEY = "otel-agent.live.paused";

  function clock() {
    var d = new Date();
    return [d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()].map(function (n) {
      return (n < 10 ? "0" : "") + n;
    }).join(":");
  }

  function storedPause() {
    try { return window.sessionStorage.getItem(PAUSED_KEY) === "1"; } catch (e) { return false; }
  }

  function storePause(paused) {
    try { window.sessionStorage.setItem(PAUSED_KEY, paused ? "1" : "0"); } catch (e) { /* private mode */ }
  }

  // Why not to update now ("" when nothing holds it): an update must never move what the user is working on.
  function holdReason(region, paused) {
    if (paused) { return "paused"; }
    if (document.visibilityState !== "visible") { return "hidden"; }
    var sel = window.getSelection ? window.getSelection() : null;
    if (sel && !sel.isCollapsed && String(sel).trim()) { return "held while text is selected"; }
    var a = document.activeElement;
    if (a && a !== document.body && a.closest && (a.closest("form") || region.contains(a))) {
      return "held while you are in the page";
    }
    var rows = region.querySelector("tbody") || region;  // past the first screen of rows, not of the page
    if (rows.getBoundingClientRect().top < -window.innerHeight) { return "held while scrolled down"; }
    return "";
  }

  // The loop: every `seconds`, unless held, `update()` (a promise of "ok", "held" or "stop").
  function liveLoop(bar, region, seconds, update) {
    var label = bar.querySelector(".live-label");
    var button = bar.querySelector(".live-pause");
    var paused = storedPause();
    var timer = null;
    var busy = false;
    var stopped = false;
    function say(text) { label.textContent = text; }
    function showPause() {
      button.setAttribute("aria-pressed", paused ? "true" : "false");
      button.textContent = paused ? "resume" : "pause";
      bar.classList.toggle("paused", paused);
    }
    function schedule(ms) {
      if (stopped) { return; }
      window.clearTimeout(timer);
      timer = window.setTimeout(tick, ms);
    }
    function tick() {
      if (busy || stopped) { return; }
      var why = holdReason(region, paused);
      if (why) {
        if (why !== "hidden") { say(why === "paused" ? "paused" : "live · " + why); }
        schedule(seconds * 1000);
        return;
      }
      busy = true;
      update(function () { return holdReason(region, paused); }).then(function (result) {
        if (result === "stop") { stopped = true; bar.classList.add("stopped"); return; }
        if (result === "ok") { say("live · updated " + clock() + " UTC"); }
      }, function () {
        say("live · update failed at " + clock() + " UTC, retrying");
      }).then(function () {
        busy = false;
        schedule(seconds * 1000);
      });
    }
    button.addEventListener("click", function () {
      paused = !paused;
      storePause(paused);
      showPause();
      if (paused) { window.clearTimeout(timer); say("paused"); } else { say("live"); if (!busy) { schedule(0); } }
    });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible" && !paused && !busy) { schedule(0); }
    });
    bar.hidden = false;
    showPause();
    say(paused ? "paused" : "live · updated " + clock() + " UTC");
    schedule(seconds * 1000);
  }

  function fetchPage(url) {
    return window.fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } }).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.text();
    }).then(function (html) { return new DOMParser().parseFromString(html, "text/html"); });
  }

  function swap(current, fresh, selector) {
    var a = current.querySelector(selector);
    var b = fresh.querySelector(selector);
    if (a && b) { a.replaceWith(b); }
  }

  // The runs list: ?fragment=live is the same page (same filters, sort and page) rendering only its live part.
  function setupLiveRuns(region) {
    var bar = document.querySelector("[data-live-bar=runs]");
    if (!bar) { return; }
    var seconds = Math.max(1, parseInt(region.dataset.liveSeconds, 10) || 5);
    liveLoop(bar, region, seconds, function (held) {
      var params = new URLSearchParams(window.location.search);
      params.set("fragment", "live");
      return fetchPage(window.location.pathname + "?" + params.toString()).then(function (doc) {
        var fresh = doc.getElementById("runs-live");
        var current = document.getElementById("runs-live");
        if (!fresh || !current) { throw new Error("no live part in the answer"); }
        if (held()) { return "held"; }
        var before = {};
        var known = false;
        current.querySelectorAll("tr[data-run-id]").forEach(function (tr) {
          before[tr.dataset.runId] = tr.dataset.status;
          known = true;
        });
        fresh.querySelectorAll("tr[data-run-id]").forEach(function (tr) {
          var old = before[tr.dataset.runId];
          if (old === undefined) { if (known) { tr.classList.add("live-new"); } } else if (old !== tr.dataset.status) {
            tr.classList.add("live-changed");
          }
        });
        // the parts, not the table: its keyboard handlers (j / k) stay
        swap(current, fresh, ".charts");
        swap(current, fresh, "tbody");
        swap(current, fresh, ".pager");
        current.dataset.asOf = fresh.dataset.asOf || "";
        var asOf = document.getElementById("runs-as-of");
        if (asOf) { asOf.textContent = fresh.dataset.asOf || ""; }
        window.setTimeout(function () {
          current.querySelectorAll("tr.live-new, tr.live-changed").forEach(function (tr) {
            tr.classList.remove("live-new", "live-changed");
          });
        }, 6000);
        return "ok";
      });
    });
  }

  // A running run's page: every few seconds its row of the runs list (?fragment=live for this run id: what a runs
  // page costs, milliseconds) tells whether anything changed; only then is the run page itself asked again (a
  // run page classifies the run: seconds on a large one), its summary (head and figures) swapped in place, and its
  // tree, graph and charts, whose controls keep state in the page, shown by reloading the page (same URL: the
  // selected span, the scroll) while the user has not used the tree — after they did, when they press "show".
  function setupLiveRun(root) {
    if (root.dataset.live !== "running") { return; }
    var head = root.querySelector(".pagehead");
    var match = /^\/runs\/([^/]+)$/.exec(window.location.pathname);
    if (!head || !match) { return; }
    var runId = decodeURIComponent(match[1]);
    var bar = document.createElement("span");
    bar.className = "live-bar";
    bar.hidden = true;
    var dot = document.createElement("span");
    dot.className = "live-dot";
    dot.setAttribute("aria-hidden", "true");
    var label = document.createElement("span");
    label.className = "live-label";
    label.setAttribute("role", "status");
    var button = document.createElement("button");
    button.type = "button";
    button.className = "link live-pause";
    var show = document.createElement("button");
    show.type = "button";
    show.className = "link live-show";
    show.textContent = "show new spans";
    show.hidden = true;
    show.addEventListener("click", function () { window.location.reload(); });
    bar.append(dot, label, " ", button, " ", show);
    (head.querySelector(".sub") || head).appendChild(bar);
    var touched = false;  // the user opened, closed or selected something in the tree: do not reload under them
    var split = document.getElementById("split");
    if (split) {
      split.addEventListener("click", function () { touched = true; });
      split.addEventListener("keydown", function () { touched = true; });
    }
    var seen = null;  // the run's row as last seen in the runs list
    var figures = function (scope) {
      var stats = scope.querySelector(".stats");
      return stats ? stats.textContent.replace(/\s+/g, " ") : "";
    };
    var seconds = Math.max(1, parseInt(root.dataset.liveSeconds, 10) || 5);
    liveLoop(bar, head, seconds, function (held) {
      var params = new URLSearchParams({ run: runId, fragment: "live" });  // its row, by id: no text search
      return fetchPage("/?" + params.toString()).then(function (list) {
        var row = Array.prototype.slice.call(list.querySelectorAll("tr[data-run-id]")).filter(function (tr) {
          return tr.dataset.runId === runId;
        })[0];
        var now = row ? row.dataset.status + "|" + row.textContent.replace(/\s+/g, " ") : "";
        if (now === seen) { return "ok"; }
        return fetchPage(window.location.href).then(function (doc) {
          var fresh = doc.querySelector("[data-live]");
          if (!fresh) { throw new Error("no run in the answer"); }
          if (held()) { return "held"; }
          var first = seen === null;
          seen = now;
          // the first time, the row has nothing to be compared with: the page itself is
          if (first && figures(fresh) === figures(root) && fresh.dataset.live === root.dataset.live) { return "ok"; }
          var freshHead = fresh.querySelector(".pagehead h1");
          var currentHead = root.querySelector(".pagehead h1");
          if (freshHead && currentHead) { currentHead.replaceWith(freshHead); }
          swap(root, fresh, ".stats");
          var ended = fresh.dataset.live !== "running";
          if (!touched) { window.location.reload(); return "stop"; }
          show.hidden = false;
          if (ended) { label.textContent = "run ended: " + fresh.dataset.live; return "stop"; }
          return "ok";
        });
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var runs = document.getElementById("runs-live");
    if (runs) { setupLiveRuns(runs); }
    var run = document.querySelector("[data-live]:not(#runs-live)");
    if (run) { setupLiveRun(run); }
  });
})();

// ---- Trees sent in part (issue 35: a 10,000-span trace stays usable) ----
// A big tree arrives with its open part only: a closed node whose children were not sent has data-lazy (its
// "N inside" link is the subtree's page), and the children an open node did not send are a row.gap (its link
// likewise). Opening either asks the server for those rows (?fragment=1: server-rendered, escaped rows of the
// same page code) and moves them into the tree; nothing is built from data here.
(function () {
  function fetchRows(url) {
    var sep = url.indexOf("?") < 0 ? "?" : "&";
    return fetch(url + sep + "fragment=1", { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (resp) { if (!resp.ok) { throw new Error(resp.status); } return resp.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        return Array.prototype.slice.call(doc.querySelectorAll("tbody > tr"));
      });
  }

  function insertAfter(anchor, rows) {
    var at = anchor;
    rows.forEach(function (r) {
      var node = document.importNode(r, true);
      at.parentNode.insertBefore(node, at.nextSibling);
      at = node;
    });
  }

  function loadChildren(tree, row) {  // a lazy node: its children go right after it, then it opens
    if (row.dataset.loading) { return; }
    var link = row.querySelector("a.more-spans");
    if (!link) { return; }
    row.dataset.loading = "1";
    row.setAttribute("aria-busy", "true");
    fetchRows(link.getAttribute("href")).then(function (rows) {
      insertAfter(row, rows);
      var added = [];
      for (var r = row.nextElementSibling, i = 0; r && i < rows.length; r = r.nextElementSibling, i++) { added.push(r); }
      delete row.dataset.lazy;
      link.remove();
      tree.adopt(added);
      tree.openRow(row);
    }).catch(function () { window.location = link.href; })
      .then(function () { delete row.dataset.loading; row.removeAttribute("aria-busy"); });
  }

  function loadGap(tree, gap) {  // a gap: the rows it stands for take its place
    if (gap.dataset.loading) { return; }
    var link = gap.querySelector("a.more-spans");
    gap.dataset.loading = "1";
    fetchRows(link.getAttribute("href")).then(function (rows) {
      insertAfter(gap, rows);
      var added = [];
      for (var r = gap.nextElementSibling, i = 0; r && i < rows.length; r = r.nextElementSibling, i++) { added.push(r); }
      gap.remove();
      tree.adopt(added);
      var first = added.filter(function (r) { return r.classList.contains("node"); })[0];
      if (first && tree.focusRow && document.activeElement && tree.contains(document.activeElement)) { tree.focusRow(first); }
    }).catch(function () { window.location = link.href; });
  }

  function setup(tree) {
    if (!tree.adopt) { return; }
    tree.addEventListener("click", function (ev) {
      var gap = ev.target.closest("tr.gap");
      if (gap && ev.target.closest("a.more-spans")) { ev.preventDefault(); ev.stopPropagation(); loadGap(tree, gap); return; }
      var row = ev.target.closest("tr.node[data-lazy]");
      if (row && (ev.target.closest(".toggle") || ev.target.closest("a.more-spans"))) {
        ev.preventDefault();
        ev.stopPropagation();
        loadChildren(tree, row);
      }
    }, true);
    tree.addEventListener("keydown", function (ev) {
      var here = ev.target.closest && ev.target.closest("tr.node");
      if (!here || ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
      var next = here.nextElementSibling;
      if ((ev.key === "ArrowDown" || ev.key === "j") && next && next.classList.contains("gap") &&
          !next.classList.contains("hidden")) {  // the keyboard reaches the spans a gap stands for
        ev.preventDefault(); ev.stopPropagation(); loadGap(tree, next); return;
      }
      if (here.dataset.lazy && (ev.key === "ArrowRight" || ev.key === "l")) {
        ev.preventDefault(); ev.stopPropagation(); loadChildren(tree, here);
      }
    }, true);
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("table.tree").forEach(setup);
  });
})();
