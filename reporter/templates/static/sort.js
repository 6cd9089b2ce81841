// Sortable tables: progressive enhancement; every table is complete without this script.
(function () {
  "use strict";
  function key(cell) {
    var raw = cell ? (cell.getAttribute("data-sort") || cell.textContent) : "";
    var text = raw.trim();
    var n = Number(text.replace(/,/g, "").replace(/^\+/, "").replace(/%$/, ""));
    return text !== "" && !isNaN(n) ? { num: true, v: n } : { num: false, v: text.toLowerCase() };
  }
  function compare(a, b) {
    if (a.num && b.num) { return a.v - b.v; }
    if (a.num !== b.num) { return a.num ? -1 : 1; }
    return a.v < b.v ? -1 : (a.v > b.v ? 1 : 0);
  }
  function sortBy(table, th, col) {
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).map(function (row, index) {
      return { row: row, k: key(row.cells[col]), i: index };
    });
    rows.sort(function (x, y) { var c = compare(x.k, y.k) || x.i - y.i; return ascending ? c : -c; });
    rows.forEach(function (r) { body.appendChild(r.row); });
  }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) { button.appendChild(th.firstChild); }
      th.appendChild(button);
      button.addEventListener("click", function () { sortBy(table, th, col); });
    });
  });
})();
