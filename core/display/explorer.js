/* glasswork's set explorer (glasswork.display.explorer): draws from the JSON document in
   #gx-data. Data only ever reaches the page as text (textContent), never as markup. */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("gx-data").textContent);
  var SVG = "http://www.w3.org/2000/svg";
  var members = D.members;
  var FIXED = ["rank", "objective", "size"];
  var conditions = [];
  var sortBy = "rank";
  var descending = false;
  var shown = [];
  var focusAt = 0;
  var pick = { a: 0, b: members.length > 1 ? 1 : 0 };
  var heatAt = { i: 0, j: 0 };
  var P = null;
  var predicted = 0;
  var n = D.n_rows || 0;

  function $(id) { return document.getElementById(id); }

  function el(tag, text, attrs) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    for (var k in attrs || {}) node.setAttribute(k, attrs[k]);
    return node;
  }

  function svg(tag, attrs, title) {
    var node = document.createElementNS(SVG, tag);
    for (var k in attrs || {}) node.setAttribute(k, attrs[k]);
    if (title !== undefined) {
      var t = document.createElementNS(SVG, "title");
      t.textContent = title;
      node.appendChild(t);
    }
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  if (D.predictions) {
    var bytes = atob(D.predictions.data);
    var raw = new Uint8Array(bytes.length);
    for (var i = 0; i < bytes.length; i++) raw[i] = bytes.charCodeAt(i);
    P = D.regression ? new Float32Array(raw.buffer) : raw;
    predicted = D.predictions.members;
  }

  function predictionOf(m, row) { return P[m * n + row]; }

  function same(a, b) {
    if (!D.regression) return a === b;
    return Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b));
  }

  function compare(i, j) {
    // two members over the rows: the share predicted alike (classes), or the mean and largest
    // absolute difference (regression)
    var alike = 0, total = 0, worst = 0;
    for (var r = 0; r < n; r++) {
      var p = predictionOf(i, r), q = predictionOf(j, r);
      if (D.regression) { var d = Math.abs(p - q); total += d; worst = Math.max(worst, d); }
      else if (p === q) alike++;
    }
    return D.regression ? { mean: n ? total / n : 0, worst: worst } : { share: n ? alike / n : 1 };
  }

  function fmt(name, v) {
    if (v === undefined || v === null) return "\u2013";
    if (name === "rank" || name === "size") return String(v);
    if (name === "objective") return Number(v.toPrecision(6)).toString();
    return v.toFixed(4);
  }

  function label(value) {
    if (D.regression) return Number(value.toPrecision(6)).toString();
    return D.classes ? D.classes[value] : String(value);
  }

  // -- choosing: the conditions, as --where reads them -------------------------------------------

  function holds(m, c) {
    if (c.kind === "figure") {
      var v = m.f[c.name];
      if (v === undefined || v === null) return false; // unknown: not listed, as --where
      return c.op === ">=" ? v >= c.value : v <= c.value;
    }
    var uses = c.features.some(function (j) { return m.features.indexOf(j) >= 0; });
    return c.kind === "uses" ? uses : !uses;
  }

  function quoteName(name) { return '"' + name.replace(/\\/g, "\\\\").replace(/"/g, '\\"') + '"'; }

  function conditionText(c) {
    if (c.kind === "figure") return c.name + " " + c.op + " " + c.value;
    return (c.kind === "avoids" ? "not " : "") + "uses(" + quoteName(c.name) + ")";
  }

  function whereText() {
    var words = ["glasswork rashomon " + D.run];
    if (conditions.length) {
      var expr = conditions.map(conditionText).join(" and ");
      words.push("--where '" + expr.replace(/'/g, "'\\''") + "'");
    }
    if (sortBy !== "rank" || descending) words.push("--sort " + (descending ? "-" : "") + sortBy);
    return words.join(" ");
  }

  function choose() {
    shown = [];
    members.forEach(function (m, i) {
      if (conditions.every(function (c) { return holds(m, c); })) shown.push(i);
    });
    shown.sort(function (i, j) {
      var a = members[i].f[sortBy], b = members[j].f[sortBy];
      var ua = a === undefined || a === null, ub = b === undefined || b === null;
      if (ua !== ub) return ua ? 1 : -1; // members without the figure last, as --sort
      if (!ua && a !== b) return descending ? b - a : a - b;
      return members[i].rank - members[j].rank;
    });
    focusAt = Math.min(focusAt, Math.max(0, shown.length - 1));
  }

  // -- the controls --------------------------------------------------------------------------------

  function fillControls() {
    var figure = $("gx-figure");
    D.figures.forEach(function (name) { figure.appendChild(el("option", name, { value: name })); });
    figure.value = D.figures.indexOf("test_auc") >= 0 ? "test_auc" : "objective";
    var feature = $("gx-feature");
    D.features.forEach(function (name, j) {
      if (members.some(function (m) { return m.features.indexOf(j) >= 0; })) {
        feature.appendChild(el("option", name, { value: "f" + j }));
      }
    });
    Object.keys(D.columns).forEach(function (column) {
      feature.appendChild(el("option", column + " (raw column: every feature made from it)", { value: "c" + column }));
    });
    $("gx-add-figure").addEventListener("click", function () {
      var value = parseFloat($("gx-value").value);
      if (!isFinite(value)) { $("gx-value").focus(); return; }
      conditions.push({ kind: "figure", name: figure.value, op: $("gx-op").value, value: value });
      update();
    });
    $("gx-add-feature").addEventListener("click", function () {
      var v = feature.value;
      if (!v) return;
      var c = v[0] === "f"
        ? { name: D.features[+v.slice(1)], features: [+v.slice(1)] }
        : { name: v.slice(1), features: D.columns[v.slice(1)] };
      c.kind = $("gx-use-mode").value;
      conditions.push(c);
      update();
    });
    $("gx-clear").addEventListener("click", function () { conditions = []; update(); });
    ["a", "b"].forEach(function (which) {
      var select = $("gx-" + which);
      members.forEach(function (m, i) {
        select.appendChild(el("option", "member " + m.rank + " (objective " + fmt("objective", m.f.objective) + ")", { value: i }));
      });
      select.addEventListener("change", function () { pick[which] = +select.value; drawPicked(); });
    });
    $("gx-body").addEventListener("keydown", onTableKey);
    $("gx-body").addEventListener("click", function (event) {
      var row = event.target.closest("tr");
      if (!row) return;
      focusAt = +row.getAttribute("data-at");
      setPick(event.shiftKey ? "b" : "a", shown[focusAt]);
    });
  }

  function drawConditions() {
    var list = clear($("gx-conditions"));
    conditions.forEach(function (c, k) {
      var item = el("li", conditionText(c) + " ");
      var remove = el("button", "remove", { type: "button", "aria-label": "remove the condition " + conditionText(c) });
      remove.addEventListener("click", function () {
        conditions.splice(k, 1);
        update();
        ($("gx-conditions").querySelector("button") || $("gx-add-figure")).focus();
      });
      item.appendChild(remove);
      list.appendChild(item);
    });
    $("gx-clear").disabled = conditions.length === 0;
  }

  // -- the member table ----------------------------------------------------------------------------

  function drawHead() {
    var head = clear($("gx-head"));
    D.columns_shown.forEach(function (name, k) {
      if (k === FIXED.length) {
        head.appendChild(el("th", "rules", { scope: "col" }));
        head.appendChild(el("th", "decides as", { scope: "col", title: "the best member with the same predictions on the training rows" }));
      }
      var th = el("th", null, { scope: "col" });
      if (name === sortBy) th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      var button = el("button", name + (name === sortBy ? (descending ? " \u25bc" : " \u25b2") : ""), {
        type: "button", "data-sort": name,
      });
      button.addEventListener("click", function () {
        descending = sortBy === name ? !descending : false;
        sortBy = name;
        update();
        head.querySelector('[data-sort="' + name + '"]').focus();
      });
      th.appendChild(button);
      head.appendChild(th);
    });
  }

  function drawTable() {
    var body = clear($("gx-body"));
    shown.forEach(function (i, at) {
      var m = members[i];
      var tr = el("tr", null, { "data-at": at, "data-rank": m.rank, tabindex: at === focusAt ? "0" : "-1" });
      if (i === pick.a) tr.className = "gx-a";
      if (i === pick.b) tr.className += " gx-b";
      tr.setAttribute("aria-label", "member " + m.rank + (i === pick.a ? ", A" : "") + (i === pick.b ? ", B" : ""));
      D.columns_shown.forEach(function (name, k) {
        if (k === FIXED.length) {
          var rules = el("td", null, { class: "gx-rules" });
          rules.appendChild(el("code", m.rules));
          tr.appendChild(rules);
          tr.appendChild(el("td", m.like === null ? "\u2013" : m.like === m.rank ? "itself" : "member " + m.like, { class: "gx-like" }));
        }
        tr.appendChild(el("td", fmt(name, m.f[name]), { class: "n" }));
      });
      body.appendChild(tr);
    });
    $("gx-count").textContent = "Showing " + shown.length + " of " + members.length + " members" +
      (conditions.length ? " (" + conditions.length + " condition" + (conditions.length > 1 ? "s" : "") + ")" : "") + ".";
    $("gx-where").textContent = whereText();
  }

  function onTableKey(event) {
    var moves = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 };
    var at = focusAt;
    if (event.key in moves) at = Math.max(0, Math.min(shown.length - 1, at + moves[event.key]));
    else if (event.key === "Home") at = 0;
    else if (event.key === "End") at = shown.length - 1;
    else if (event.key === "Enter" || event.key === "a" || event.key === "b") {
      setPick(event.key === "b" ? "b" : "a", shown[focusAt]);
      event.preventDefault();
      return;
    } else return;
    event.preventDefault();
    moveFocus(at);
  }

  function moveFocus(at) {
    var rows = $("gx-body").rows;
    if (!rows.length) return;
    if (rows[focusAt]) rows[focusAt].tabIndex = -1;
    focusAt = at;
    rows[at].tabIndex = 0;
    rows[at].focus();
  }

  function setPick(which, i) {
    if (i === undefined) return;
    pick[which] = i;
    drawTable();
    drawPicked();
    var row = $("gx-body").rows[focusAt];
    if (row) row.focus();
  }

  // -- the features' bars ----------------------------------------------------------------------------

  function bar(width, x0, x1, colour, title) {
    var box = svg("svg", { width: width, height: 12, role: "img", "aria-label": title }, title);
    box.appendChild(svg("rect", { x: x0.toFixed(1), y: 3, width: Math.max(x1 - x0, 1.5).toFixed(1), height: 6, fill: colour }));
    return box;
  }

  function drawBars() {
    var body = clear($("gx-bars").tBodies[0]);
    var rows = [];
    D.features.forEach(function (name, j) {
      var users = shown.filter(function (i) { return members[i].features.indexOf(j) >= 0; }).length;
      if (!users) return;
      var ratios = D.reliance && D.reliance[j] ? shown.map(function (i) { return D.reliance[j][i]; }) : null;
      rows.push({ name: name, use: users / shown.length, lo: ratios ? Math.min.apply(null, ratios) : null,
        hi: ratios ? Math.max.apply(null, ratios) : null });
    });
    rows.sort(function (a, b) { return b.use - a.use || (b.hi || 0) - (a.hi || 0); });
    var top = Math.max(1, Math.max.apply(null, rows.map(function (r) { return r.hi || 1; }).concat([1])));
    var W = 200;
    $("gx-axis").textContent = D.reliance ? "reliance range (axis 0 to " + Number(top.toPrecision(3)) + "; the line at 1: not relied on)" : "";
    rows.slice(0, 40).forEach(function (r) {
      var tr = el("tr");
      tr.appendChild(el("td", r.name));
      tr.appendChild(el("td", (100 * r.use).toFixed(1) + " %", { class: "n" }));
      var use = el("td");
      use.appendChild(bar(100, 0, 100 * r.use, "#228833", "used by " + (100 * r.use).toFixed(1) + " % of the members shown"));
      tr.appendChild(use);
      tr.appendChild(el("td", r.lo === null ? "\u2013" : r.lo.toFixed(4), { class: "n" }));
      tr.appendChild(el("td", r.hi === null ? "\u2013" : r.hi.toFixed(4), { class: "n" }));
      var range = el("td");
      if (r.lo !== null) {
        var x = function (v) { return W * Math.min(Math.max(v, 0), top) / top; };
        var box = bar(W, x(r.lo), x(r.hi), "#4477aa", "reliance " + r.lo.toFixed(4) + " to " + r.hi.toFixed(4));
        box.insertBefore(svg("line", { x1: x(1), x2: x(1), y1: 0, y2: 12, stroke: "#999" }), box.firstChild.nextSibling);
        range.appendChild(box);
      }
      tr.appendChild(range);
      body.appendChild(tr);
    });
    var more = rows.length > 40 ? " " + (rows.length - 40) + " more features used by some member shown are left out." : "";
    $("gx-bars-note").textContent = shown.length
      ? "Over the " + shown.length + " members shown; the features most used first." + more
      : "No member is shown: loosen the conditions.";
  }

  // -- two members side by side ----------------------------------------------------------------------

  function drawPicked() {
    $("gx-a").value = pick.a;
    $("gx-b").value = pick.b;
    var out = clear($("gx-compare"));
    var a = members[pick.a], b = members[pick.b];
    var side = el("div", null, { class: "row" });
    [["A", a], ["B", b]].forEach(function (pair) {
      var box = el("div", null, { class: "gx-side" });
      box.appendChild(el("h4", pair[0] + ": member " + pair[1].rank));
      var figures = el("table");
      D.figures.forEach(function (name) {
        var tr = el("tr");
        tr.appendChild(el("td", name));
        tr.appendChild(el("td", fmt(name, pair[1].f[name]), { class: "n" }));
        figures.appendChild(tr);
      });
      box.appendChild(figures);
      box.appendChild(el("pre", pair[1].text));
      side.appendChild(box);
    });
    out.appendChild(side);
    if (!P) { out.appendChild(el("p", D.no_rows || "The page holds no predictions.", { class: "note" })); return; }
    if (pick.a >= predicted || pick.b >= predicted) {
      out.appendChild(el("p", "Only the best " + predicted + " members' predictions are in the page.", { class: "note" }));
      return;
    }
    var S = D.sample, rows = [];
    var position = S.at;
    if (D.regression) {
      var gap = compare(pick.a, pick.b);
      out.appendChild(el("p", "Their predictions differ by " + gap.mean.toPrecision(4) + " on average (largest " +
        gap.worst.toPrecision(4) + ", in units of the target) over the " + n + " " + D.part + " rows.", { id: "gx-differ" }));
      rows = S.rows.map(function (_, k) { return k; }).sort(function (k, l) {
        return Math.abs(predictionOf(pick.a, position[l]) - predictionOf(pick.b, position[l])) -
          Math.abs(predictionOf(pick.a, position[k]) - predictionOf(pick.b, position[k]));
      }).slice(0, 20);
    } else {
      var differ = Math.round(n * (1 - compare(pick.a, pick.b).share));
      out.appendChild(el("p", "They disagree on " + differ + " of the " + n + " " + D.part + " rows (" +
        (n ? (100 * differ / n).toFixed(1) : "0") + " %).", { id: "gx-differ" }));
      for (var k = 0; k < S.rows.length && rows.length < 20; k++) {
        if (!same(predictionOf(pick.a, position[k]), predictionOf(pick.b, position[k]))) rows.push(k);
      }
    }
    if (!rows.length) return;
    var read = a.features.concat(b.features.filter(function (j) { return a.features.indexOf(j) < 0; }))
      .filter(function (j) { return S.values[j] !== undefined; });
    var table = el("table", null, { id: "gx-rows" });
    var head = el("tr");
    ["row", "true label", "A", "B"].concat(read.map(function (j) { return D.features[j]; })).forEach(function (h) {
      head.appendChild(el("th", h, { scope: "col" }));
    });
    table.appendChild(head);
    rows.forEach(function (k) {
      var tr = el("tr");
      var at = position[k];
      [S.rows[k], D.regression ? label(S.label[k]) : S.label[k], label(predictionOf(pick.a, at)), label(predictionOf(pick.b, at))]
        .concat(read.map(function (j) { var v = S.values[j][k]; return v === null ? "\u2013" : Number(v.toPrecision(6)); }))
        .forEach(function (v) { tr.appendChild(el("td", v)); });
      table.appendChild(tr);
    });
    out.appendChild(el("p", (D.regression ? "The " + rows.length + " rows where they differ most" : "The first " + rows.length + " of them") +
      " among the " + S.rows.length + " rows the page holds " +
      "(rows the members split on, " + S.row_source + " row numbers, from 1); the values of the features either member reads. " +
      "The store keeps no rows: these come from the data the run's spec points to, loaded again when the report was " +
      "written and checked against the run's data fingerprint.", { class: "note" }));
    out.appendChild(table);
  }

  // -- the agreement heatmap ---------------------------------------------------------------------------

  function drawHeat() {
    var box = clear($("gx-heat"));
    if (!P) { $("gx-heat-note").textContent = D.no_rows || "The page holds no predictions."; return; }
    var drawn = shown.filter(function (i) { return i < predicted; }).slice(0, D.heatmap_members);
    var k = drawn.length;
    if (!k) { $("gx-heat-note").textContent = "No member with predictions is shown: loosen the conditions."; return; }
    $("gx-heat-note").textContent = (D.regression
      ? "How far apart two members' predictions are on the " + n + " " + D.part + " rows (the mean absolute difference, in units of the target), "
      : "The share of the " + n + " " + D.part + " rows on which two members predict alike, ") +
      "for the first " + k + " members the table shows (at most " + D.heatmap_members + ", in its order). " +
      "Darker: closer. Select a cell to compare its two members.";
    var value = [], lo = Infinity, hi = -Infinity;
    for (var x = 0; x < k; x++) {
      value.push([]);
      for (var y = 0; y < k; y++) {
        if (y < x) { value[x].push(value[y][x]); continue; }
        var c = compare(drawn[x], drawn[y]);
        var v = D.regression ? c.mean : c.share;
        value[x].push(v);
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
    }
    function closeness(v) { // 1: the closest pair drawn, 0: the farthest
      if (hi <= lo) return 1;
      return D.regression ? (hi - v) / (hi - lo) : (v - lo) / (hi - lo);
    }
    function words(v) {
      return D.regression ? "predictions differ by " + v.toPrecision(4) + " on average" : "agree on " + (100 * v).toFixed(1) + " % of the rows";
    }
    var cell = Math.max(6, Math.min(16, Math.floor(560 / k)));
    var pad = 34, size = pad + cell * k;
    var map = svg("svg", {
      width: size, height: size, role: "img", tabindex: "0", id: "gx-heatmap",
      "aria-label": "pairwise agreement of " + k + " members; arrow keys move between cells, Enter compares the two members",
    });
    for (var i = 0; i < k; i++) {
      var text = String(members[drawn[i]].rank);
      if (cell >= 10 || i % 5 === 0) {
        var left = svg("text", { x: pad - 3, y: pad + cell * i + cell * 0.75, "text-anchor": "end", "font-size": 8 });
        left.textContent = text;
        map.appendChild(left);
        var tx = pad + cell * i + cell * 0.75;
        var top = svg("text", { x: tx, y: pad - 3, "font-size": 8, transform: "rotate(-90 " + tx + " " + (pad - 3) + ")" });
        top.textContent = text;
        map.appendChild(top);
      }
      for (var j = 0; j < k; j++) {
        var t = closeness(value[i][j]);
        var shade = Math.round(235 - 170 * t);
        var rect = svg("rect", {
          x: pad + cell * j, y: pad + cell * i, width: cell, height: cell,
          fill: "rgb(" + shade + "," + Math.round(shade * 0.9 + 20) + ",230)", "data-i": i, "data-j": j,
        }, "members " + members[drawn[i]].rank + " and " + members[drawn[j]].rank + ": " + words(value[i][j]));
        map.appendChild(rect);
      }
    }
    function compareCell(i, j) {
      pick.a = drawn[i];
      pick.b = drawn[j];
      drawTable();
      drawPicked();
    }
    map.addEventListener("click", function (event) {
      var a = event.target.getAttribute && event.target.getAttribute("data-i");
      if (a === null || a === undefined) return;
      compareCell(+a, +event.target.getAttribute("data-j"));
    });
    // the keyboard: a cursor cell, moved by the arrow keys, Enter compares its two members
    heatAt = { i: Math.min(heatAt.i, k - 1), j: Math.min(heatAt.j, k - 1) };
    var cursor = svg("rect", { width: cell, height: cell, fill: "none", stroke: "#aa3377", "stroke-width": 2, visibility: "hidden" });
    map.appendChild(cursor);
    var said = el("p", "", { id: "gx-heat-cell", class: "note", "aria-live": "polite" });
    function showCursor() {
      cursor.setAttribute("x", pad + cell * heatAt.j);
      cursor.setAttribute("y", pad + cell * heatAt.i);
      cursor.setAttribute("visibility", "visible");
      said.textContent = "members " + members[drawn[heatAt.i]].rank + " and " + members[drawn[heatAt.j]].rank + ": " +
        words(value[heatAt.i][heatAt.j]) + " (Enter: compare them)";
    }
    map.addEventListener("focus", showCursor);
    map.addEventListener("blur", function () { cursor.setAttribute("visibility", "hidden"); });
    map.addEventListener("keydown", function (event) {
      var moves = { ArrowRight: [0, 1], ArrowLeft: [0, -1], ArrowDown: [1, 0], ArrowUp: [-1, 0] };
      if (event.key in moves) {
        heatAt.i = Math.max(0, Math.min(k - 1, heatAt.i + moves[event.key][0]));
        heatAt.j = Math.max(0, Math.min(k - 1, heatAt.j + moves[event.key][1]));
        showCursor();
      } else if (event.key === "Enter") {
        compareCell(heatAt.i, heatAt.j);
      } else return;
      event.preventDefault();
    });
    box.appendChild(map);
    box.appendChild(said);
    box.appendChild(el("p", "Darkest: " + words(D.regression ? lo : hi) + "; lightest: " + words(D.regression ? hi : lo) + ".", { class: "note" }));
  }

  // -- together --------------------------------------------------------------------------------------------

  function update() {
    choose();
    drawConditions();
    drawHead();
    drawTable();
    drawBars();
    drawHeat();
  }

  var about = "The " + members.length + " member" + (members.length === 1 ? "" : "s") + " of the set the run kept (it counts " +
    D.count + (D.complete ? ", complete" : ", not complete") + "), best first. Choose among them by their figures and " +
    "the features they use or avoid; everything below follows the members shown.";
  if (D.reliance) {
    about += " Reliance (model reliance, Fisher, Rudin and Dominici 2019): a member's error on the " + D.part +
      " rows with the feature's column shuffled (one fixed permutation) over its error on the rows as they are; 1: its " +
      "predictions do not depend on the feature; each bar is the range over the members shown.";
  }
  $("gx-about").textContent = about + (D.no_rows ? " " + D.no_rows + "." : "") +
    (D.notes.length ? " Note: " + D.notes.join("; ") + "." : "");
  if (P && members.length > 1) { // B: the best member that predicts otherwise than A somewhere
    var differing = -1;
    for (var m = 1; m < predicted && differing < 0; m++) {
      for (var r = 0; r < n; r++) if (!same(predictionOf(0, r), predictionOf(m, r))) { differing = m; break; }
    }
    if (differing > 0) pick.b = differing;
  }
  fillControls();
  update();
  drawPicked();
})();
