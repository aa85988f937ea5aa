// serpeval report: sortable tables, panel switchers, instant tooltips. No network, no libraries.
(function () {
  "use strict";

  // Tables: a click on a header sorts by that column (numbers by data-sort), again to reverse.
  // Text sorts with its digits read as numbers: query 99 before query 1000, q9 before q10.
  var collator = new Intl.Collator(undefined, { numeric: true });
  function cellKey(row, index, numeric) {
    var cell = row.cells[index];
    if (!cell) { return numeric ? NaN : ""; }
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent;
    return numeric ? parseFloat(raw) : raw.trim().toLowerCase();
  }
  function sortTable(th) {
    var table = th.closest("table");
    var index = Array.prototype.indexOf.call(th.parentNode.children, th);
    var numeric = th.getAttribute("data-type") === "num";
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (row, i) { row._order = i; });
    rows.sort(function (a, b) {
      var x = cellKey(a, index, numeric), y = cellKey(b, index, numeric);
      var missingX = numeric ? isNaN(x) : x === "", missingY = numeric ? isNaN(y) : y === "";
      if (missingX || missingY) { return missingX === missingY ? a._order - b._order : (missingX ? 1 : -1); }
      var c = numeric ? (x < y ? -1 : (x > y ? 1 : 0)) : collator.compare(x, y);
      return (ascending ? c : -c) || a._order - b._order;
    });
    rows.forEach(function (row) { row.classList.remove("group-start"); body.appendChild(row); });
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.setAttribute("aria-sort", "none"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }
  document.querySelectorAll("table.sortable th").forEach(function (th) {
    th.addEventListener("click", function () { sortTable(th); });
  });

  // Switchers: a select shows one of several panels.
  document.querySelectorAll("select[data-switch]").forEach(function (select) {
    select.addEventListener("change", function () {
      var name = select.getAttribute("data-switch");
      document.querySelectorAll('[data-panel="' + name + '"]').forEach(function (panel) {
        panel.hidden = panel.getAttribute("data-value") !== select.value;
      });
    });
  });

  // Tooltips: each chart mark carries an SVG <title>; show it at once, next to the pointer.
  var tip = document.getElementById("tooltip");
  document.querySelectorAll("svg.chart title").forEach(function (title) {
    var owner = title.parentNode;
    owner.setAttribute("data-tip", title.textContent);
    owner.removeChild(title);
  });
  function place(event) {
    var pad = 14, box = tip.getBoundingClientRect();
    var x = event.clientX + pad, y = event.clientY + pad;
    if (x + box.width > window.innerWidth - 4) { x = event.clientX - box.width - pad; }
    if (y + box.height > window.innerHeight - 4) { y = event.clientY - box.height - pad; }
    tip.style.left = Math.max(4, x) + "px";
    tip.style.top = Math.max(4, y) + "px";
  }
  document.addEventListener("mouseover", function (event) {
    var mark = event.target.closest ? event.target.closest("[data-tip]") : null;
    if (!mark) { tip.hidden = true; return; }
    tip.textContent = mark.getAttribute("data-tip");
    tip.hidden = false;
    place(event);
  });
  document.addEventListener("mousemove", function (event) { if (!tip.hidden) { place(event); } });
  document.addEventListener("mouseleave", function () { tip.hidden = true; });
})();
