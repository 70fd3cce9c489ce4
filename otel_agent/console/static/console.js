// otel-agent console: small progressive enhancement. Every page works without this file.
// Never builds HTML from data: the details panel is server-rendered (escaped) HTML fetched from our own origin.
"use strict";

(function () {
  function rowsOf(tree) { return Array.prototype.slice.call(tree.querySelectorAll("tr.node")); }

  function setupTree(tree) {
    var rows = rowsOf(tree);
    var byKey = {};
    var kids = {};
    rows.forEach(function (r) {
      byKey[r.dataset.key] = r;
      var p = r.dataset.parent || "";
      (kids[p] = kids[p] || []).push(r);
    });
    function setOpen(row, open) {
      var b = row.querySelector(".toggle");
      if (b) { b.setAttribute("aria-expanded", open ? "true" : "false"); b.textContent = open ? "\u25BE" : "\u25B8"; }
      row.dataset.open = open ? "1" : "0";
    }
    function showChildren(key, show) {
      (kids[key] || []).forEach(function (c) {
        c.classList.toggle("hidden", !show);
        showChildren(c.dataset.key, show && c.dataset.open === "1");
      });
    }
    var openDepth = parseInt(tree.dataset.openDepth || "2", 10);
    var selected = tree.querySelector("tr.node.selected");
    var keep = {};
    for (var s = selected; s; s = byKey[s.dataset.parent]) { keep[s.dataset.parent] = true; }
    rows.forEach(function (r) {
      setOpen(r, parseInt(r.dataset.depth, 10) < openDepth || !!keep[r.dataset.key]);
    });
    (kids[""] || []).forEach(function (r) { showChildren(r.dataset.key, r.dataset.open === "1"); });
    rows.forEach(function (r) { if (!byKey[r.dataset.parent]) { r.classList.remove("hidden"); } });

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
      select(tree, row);
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
      href: tree.dataset.base + "?span=" + encodeURIComponent(pick),
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
    setupRefresh();
    setupConfirm();
  });
})();
