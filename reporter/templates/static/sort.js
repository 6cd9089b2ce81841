// Sortable and filterable tables: progressive enhancement; every table is complete without this script.
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
  // A filter box above each filterable table: rows whose text holds every word typed stay shown.
  function filterRows(table, query, status) {
    var words = query.toLowerCase().split(/\s+/).filter(function (w) { return w !== ""; });
    var rows = table.tBodies[0].rows, shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var text = rows[i].textContent.toLowerCase();
      var keep = words.every(function (w) { return text.indexOf(w) !== -1; });
      rows[i].hidden = !keep;
      if (keep) { shown++; }
    }
    status.textContent = words.length ? shown + " of " + rows.length + " rows" : "";
  }
  var filterable = document.querySelectorAll("table.filterable");
  Array.prototype.forEach.call(filterable, function (table, n) {
    if (!table.tBodies.length || table.tBodies[0].rows.length < 2) { return; }
    var wrap = table.closest(".table-wrap") || table;
    var box = document.createElement("div");
    box.className = "filter";
    var label = document.createElement("label");
    var input = document.createElement("input");
    input.type = "search";
    input.id = "filter-" + n;
    label.htmlFor = input.id;
    label.textContent = "Filter rows";
    var status = document.createElement("span");
    status.className = "muted";
    status.setAttribute("aria-live", "polite");
    box.appendChild(label);
    box.appendChild(input);
    box.appendChild(status);
    wrap.parentNode.insertBefore(box, wrap);
    input.addEventListener("input", function () { filterRows(table, input.value, status); });
  });
  // A table wider than its box scrolls sideways inside it: a line above it says so while it does.
  var wraps = document.querySelectorAll(".table-wrap");
  function hint() {
    Array.prototype.forEach.call(wraps, function (wrap) {
      var more = wrap.scrollWidth > wrap.clientWidth + 1;
      var note = wrap.previousElementSibling;
      var has = note !== null && note.className === "scroll-hint";
      if (more && !has) {
        note = document.createElement("p");
        note.className = "scroll-hint";
        note.textContent = "Wider than the screen: scroll the table sideways for more columns \u2192";
        wrap.parentNode.insertBefore(note, wrap);
      } else if (!more && has) {
        note.parentNode.removeChild(note);
      }
    });
  }
  hint();
  window.addEventListener("resize", hint);
  // A folded long table is printed whole: opened for the print, closed again after (a reader's open ones stay).
  var opened = [];
  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll("details.fold:not([open])"), function (d) {
      d.open = true;
      opened.push(d);
    });
  });
  window.addEventListener("afterprint", function () {
    opened.forEach(function (d) { d.open = false; });
    opened = [];
  });
})();
