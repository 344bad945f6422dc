// poplar-viewer: the page of `poplar report`. Plain JavaScript, no library: the data are the
// JSON in #report-data (schema "poplar-report", docs/viewer.md); every chart is a canvas.
// In compare mode (schema "poplar-compare", `poplar report A --compare B`) the data hold two
// reports and their differences: the views show A or B (the location's hash says which: the
// side buttons set it and reload the page) and the Compare view shows B − A.
"use strict";
(function () {
  const t0 = performance.now();
  const RAW = JSON.parse(document.getElementById("report-data").textContent);
  const CMP = RAW.schema === "poplar-compare" ? RAW : null;
  // "#b/memory": side B, view memory.
  const HASH = location.hash.slice(1).split("/");
  const SIDE = CMP && HASH[0] === "b" ? "b" : "a";
  const D = CMP ? CMP[SIDE] : RAW;
  const T = D.target;
  const M = D.memory;
  const P = D.profile;
  // Streaming Memory (absent in version 1 data).
  const SM = M.streaming || { bytes_per_chip: 0, chips: [], buffers: [] };
  const NT = T.tiles;

  // ---------------------------------------------------------------- helpers
  const $ = (id) => document.getElementById(id);
  const fmt = (n) => Number(n).toLocaleString("en-US");
  const plural = (n, what) => `${fmt(n)} ${what}${n === 1 ? "" : "s"}`;
  const pct = (x) => (100 * x).toFixed(1) + " %";
  const kib = (b) => (b / 1024).toLocaleString("en-US", { maximumFractionDigits: 1 }) + " KiB";
  const bytes = (b) =>
    b >= 2 ** 40 ? (b / 2 ** 40).toFixed(2) + " TiB"
      : b >= 2 ** 30 ? (b / 2 ** 30).toFixed(2) + " GiB"
        : b >= 1 << 20 ? (b / (1 << 20)).toFixed(2) + " MiB" : b >= 1024 ? kib(b) : fmt(b) + " B";
  const us = (c) => (c / T.clock_hz * 1e6).toLocaleString("en-US", { maximumFractionDigits: 2 }) + " µs";
  const ms = (ns) => ns >= 1e6
    ? (ns / 1e6).toLocaleString("en-US", { maximumFractionDigits: 2 }) + " ms"
    : (ns / 1e3).toLocaleString("en-US", { maximumFractionDigits: 1 }) + " µs";
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of kids) if (c != null) e.append(c);
    return e;
  }
  function table(tbl, head, rows) {
    tbl.replaceChildren();
    tbl.append(el("tr", {}, ...head.map((h) => el("th", { text: h }))));
    for (const r of rows) tbl.append(r);
  }
  function row(cells, attrs) {
    return el("tr", attrs, ...cells.map((c) => (c instanceof Node ? el("td", {}, c) : el("td", { text: c }))));
  }
  // A canvas at the device's pixel ratio; returns its 2-D context in CSS pixels.
  function canvas(c, w, h) {
    const r = window.devicePixelRatio || 1;
    c.width = Math.max(1, Math.round(w * r));
    c.height = Math.max(1, Math.round(h * r));
    c.style.width = w + "px";
    c.style.height = h + "px";
    const g = c.getContext("2d");
    g.setTransform(r, 0, 0, r, 0, 0);
    return g;
  }
  const widthOf = (c) => Math.max(320, Math.min(1400, (c.parentElement.clientWidth || 1000) - 4));
  // Colour ramp for 0..1 (light yellow to dark blue), red beyond 1.
  const RAMP = [[255, 247, 188], [161, 218, 180], [65, 182, 196], [44, 127, 184], [37, 52, 148]];
  function ramp(x) {
    if (!(x > 0)) return "#f2f2f2";
    if (x > 1) return "#d7301f";
    const f = x * (RAMP.length - 1), i = Math.min(RAMP.length - 2, Math.floor(f)), u = f - i;
    const c = RAMP[i].map((a, k) => Math.round(a + (RAMP[i + 1][k] - a) * u));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }
  // Differences: -1..1 to blue (less in B) .. white .. red (more in B).
  function diverge(x) {
    const f = Math.min(1, Math.abs(x)), to = x > 0 ? [215, 48, 31] : [31, 111, 235];
    const c = to.map((a) => Math.round(255 + (a - 255) * (0.2 + 0.8 * f)));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }
  const sgn = (d) => (d > 0 ? "+" : "") + fmt(d);
  const CAT_COLOURS = ["#3b82c4", "#7cb342", "#e08a2c", "#c0ca33", "#8e6cc4", "#e25563", "#26a69a"];
  // Timeline span kinds: compute, exchange, sync, label, transfer.
  const KIND_COLOURS = ["#3b82c4", "#e08a2c", "#b0b8c0", "#6a4fb3", "#2a9d8f"];
  const KIND_NAMES = ["compute", "exchange", "sync", "label", "transfer"];
  const chipOf = (t) => Math.floor(t / T.tiles_per_chip);

  // ---------------------------------------------------------------- tabs
  const rendered = {};
  const renderers = { memory: renderMemory, programs: renderPrograms, liveness: renderLiveness, execution: renderExecution, compare: renderCompare };
  function show(view) {
    for (const b of document.querySelectorAll("#tabs button[data-view]")) b.classList.toggle("active", b.dataset.view === view);
    for (const s of document.querySelectorAll(".view")) s.classList.toggle("active", s.id === "view-" + view);
    if (!rendered[view]) {
      rendered[view] = true;
      renderers[view]();
    }
    document.documentElement.dataset.view = view;
  }
  for (const b of document.querySelectorAll("#tabs button[data-view]")) b.addEventListener("click", () => show(b.dataset.view));

  $("title").textContent = CMP ? CMP.title : D.title;
  $("target-line").textContent = (CMP ? `showing ${SIDE.toUpperCase()}: ${D.title}; ` : "") +
    `${fmt(T.chips)} chip${T.chips > 1 ? "s" : ""} × ${fmt(T.tiles_per_chip)} tiles, ` +
    `${kib(T.bytes_per_tile)} per tile, ${T.workers_per_tile} workers, ${(T.clock_hz / 1e9).toFixed(2)} GHz` +
    (P ? "; with a profile" : "; no profile");

  // ---------------------------------------------------------------- memory
  let selected = -1;
  const worstTile = M.total.reduce((b, v, i) => (v > M.total[b] ? i : b), 0);
  let mapGeom = null;
  let stripGeom = null;

  function renderMemory() {
    const s = M.total_stats;
    const over = M.total.filter((b) => b > T.bytes_per_tile).length;
    const used = M.total.filter((b) => b > 0).length;
    const sumSpan = el("span", {}, `${fmt(NT)} tiles (${fmt(used)} hold anything); total bytes per tile: max `,
      el("b", { text: bytes(s.max) }), ` (${pct(s.max / T.bytes_per_tile)} of the budget), median ${bytes(s.median)}, min ${bytes(s.min)}; ` +
      `always-live max ${bytes(M.always_live_stats.max)}, temporaries max ${bytes(M.temporary_stats.max)}; `,
      over ? el("span", { class: "over", text: `${fmt(over)} tiles over the budget` }) : "no tile over the budget");
    $("memory-summary").replaceChildren(sumSpan);
    $("memory-summary").dataset.tiles = NT;
    $("memory-legend").replaceChildren(...M.categories.map((c, i) => {
      const tot = M.by_category[i].reduce((a, b) => a + b, 0);
      return el("span", {}, el("i", { style: `background:${CAT_COLOURS[i]}` }), `${c} ${bytes(tot)}`);
    }));
    $("memory-scale").value = M.total_stats.max * 2 < T.bytes_per_tile ? "fullest" : "budget";
    $("memory-scale").addEventListener("change", () => { drawMap(); drawStrip(); });
    drawMap();
    drawStrip();
    const order = M.total.map((_, i) => i).sort((a, b) => M.total[b] - M.total[a] || a - b).slice(0, 20);
    table($("fullest"), ["tile", "chip", "total", "of budget", "always-live", "temporaries"], order.map((t) =>
      row([fmt(t), fmt(chipOf(t)), bytes(M.total[t]), pct(M.total[t] / T.bytes_per_tile), bytes(M.always_live[t]), bytes(M.temporary[t])],
        { class: "clickable", "data-tile": t, onclick: () => selectTile(t) })));
    const items = M.item_names.map((_, i) => i);
    const totals = new Array(items.length).fill(0), maxTile = new Array(items.length).fill(0), tiles = new Array(items.length).fill(0);
    for (const list of M.tile_items) {
      for (let k = 0; k < list.length; k += 2) {
        const i = list[k], b = list[k + 1];
        totals[i] += b;
        tiles[i] += 1;
        if (b > maxTile[i]) maxTile[i] = b;
      }
    }
    table($("items"), ["item", "category", "total", "tiles", "largest on a tile"], items.slice(0, 30).map((i) =>
      row([M.item_names[i], M.categories[M.item_categories[i]], bytes(totals[i]), fmt(tiles[i]), bytes(maxTile[i])])));
    $("tile-input").max = NT - 1;
    $("tile-input").addEventListener("change", () => {
      const t = Number($("tile-input").value);
      if (Number.isInteger(t) && t >= 0 && t < NT) selectTile(t);
    });
    renderStreaming();
    selectTile(worstTile);
  }

  // Streaming Memory: per chip against its capacity, and every remote buffer.
  function renderStreaming() {
    const total = SM.buffers.reduce((a, b) => a + b.bytes, 0);
    const used = SM.chips.filter((c) => c.buffers > 0);
    const over = SM.chips.filter((c) => c.bytes > SM.bytes_per_chip);
    const sum = $("streaming-summary");
    sum.dataset.buffers = SM.buffers.length;
    sum.dataset.bytes = total;
    if (!SM.buffers.length) {
      sum.textContent = `No remote buffers (${bytes(SM.bytes_per_chip)} of Streaming Memory per chip unused).`;
      $("streaming-detail").style.display = "none";
      return;
    }
    sum.replaceChildren(`${fmt(SM.buffers.length)} remote buffer${SM.buffers.length === 1 ? "" : "s"}: `, el("b", { text: bytes(total) }),
      ` on ${fmt(used.length)} of ${fmt(SM.chips.length)} chips, ${bytes(SM.bytes_per_chip)} of Streaming Memory per chip; `,
      over.length ? el("span", { class: "over", text: `${fmt(over.length)} chips over their Streaming Memory` }) : "no chip over its Streaming Memory");
    table($("streaming-chips"), ["chip", "buffers", "bytes", "of Streaming Memory", ""], used.map((c) => {
      const f = SM.bytes_per_chip ? c.bytes / SM.bytes_per_chip : 0;
      const bar = el("span", { class: "bar" }, el("i", { style: `width:${Math.min(100, Math.max(f > 0 ? 1 : 0, 100 * f)).toFixed(1)}%;background:${f > 1 ? ramp(2) : KIND_COLOURS[4]}` }));
      return row([fmt(c.chip), fmt(c.buffers), bytes(c.bytes), pct(f), bar], { "data-chip": c.chip, "data-bytes": c.bytes });
    }));
    const order = SM.buffers.map((_, i) => i).sort((a, b) => SM.buffers[b].bytes - SM.buffers[a].bytes || a - b);
    table($("streaming-buffers"), ["buffer", "type", "rows", "elements per row", "bytes", "chip"], order.slice(0, 200).map((i) => {
      const b = SM.buffers[i];
      return row([b.name, b.dtype.toLowerCase(), fmt(b.rows), fmt(b.elements), bytes(b.bytes), fmt(b.chip)], { "data-buffer": b.name, "data-bytes": b.bytes });
    }));
  }

  function drawMap() {
    const c = $("memory-map");
    const W = widthOf(c);
    const chipCols = Math.min(T.chips, 4), chipRows = Math.ceil(T.chips / chipCols);
    const cols = Math.ceil(Math.sqrt(T.tiles_per_chip * 2.5)), rows = Math.ceil(T.tiles_per_chip / cols);
    const gap = 8;
    const cell = Math.max(1, Math.min(14, Math.floor((W - gap * (chipCols - 1)) / (chipCols * cols))));
    const cw = cols * cell, ch = rows * cell;
    const H = chipRows * (ch + gap + 14);
    const g = canvas(c, Math.min(W, chipCols * (cw + gap)), H);
    const full = scaleTop();
    $("map-caption").textContent = `(colour: bytes against ${$("memory-scale").value === "budget" ? "the budget" : "the fullest tile"}, ${bytes(full)}; red: over the budget; click a tile)`;
    g.font = "11px system-ui, sans-serif";
    mapGeom = { cols, rows, cell, cw, ch, gap, chipCols };
    for (let chip = 0; chip < T.chips; chip++) {
      const ox = (chip % chipCols) * (cw + gap), oy = Math.floor(chip / chipCols) * (ch + gap + 14);
      g.fillStyle = "#5f6b76";
      g.fillText(`chip ${chip}`, ox, oy + 10);
      for (let k = 0; k < T.tiles_per_chip; k++) {
        const t = chip * T.tiles_per_chip + k;
        g.fillStyle = M.total[t] > T.bytes_per_tile ? ramp(2) : ramp(M.total[t] / full);
        g.fillRect(ox + (k % cols) * cell, oy + 14 + Math.floor(k / cols) * cell, cell > 3 ? cell - 1 : cell, cell > 3 ? cell - 1 : cell);
      }
    }
    if (selected >= 0) {
      const p = mapPos(selected);
      g.strokeStyle = "#d7301f";
      g.lineWidth = 2;
      g.strokeRect(p[0] - 2, p[1] - 2, cell + 3, cell + 3);
    }
    c.onclick = (e) => {
      const r = c.getBoundingClientRect();
      const t = mapTileAt(e.clientX - r.left, e.clientY - r.top);
      if (t >= 0) selectTile(t);
    };
    c.onmousemove = (e) => {
      const r = c.getBoundingClientRect();
      const t = mapTileAt(e.clientX - r.left, e.clientY - r.top);
      c.title = t >= 0 ? `tile ${t}: ${bytes(M.total[t])} (${pct(M.total[t] / T.bytes_per_tile)})` : "";
    };
  }
  function mapPos(t) {
    const g = mapGeom, chip = chipOf(t), k = t % T.tiles_per_chip;
    return [(chip % g.chipCols) * (g.cw + g.gap) + (k % g.cols) * g.cell,
      Math.floor(chip / g.chipCols) * (g.ch + g.gap + 14) + 14 + Math.floor(k / g.cols) * g.cell];
  }
  function mapTileAt(x, y) {
    const g = mapGeom;
    const cx = Math.floor(x / (g.cw + g.gap)), cy = Math.floor(y / (g.ch + g.gap + 14));
    const lx = x - cx * (g.cw + g.gap), ly = y - cy * (g.ch + g.gap + 14) - 14;
    if (cx >= g.chipCols || lx < 0 || ly < 0 || lx >= g.cw || ly >= g.ch) return -1;
    const k = Math.floor(ly / g.cell) * g.cols + Math.floor(lx / g.cell);
    const chip = cy * g.chipCols + cx;
    if (chip >= T.chips || k >= T.tiles_per_chip) return -1;
    return chip * T.tiles_per_chip + k;
  }

  // The byte count at the top of the memory charts' scale.
  function scaleTop() {
    return Math.max(1, $("memory-scale").value === "budget" ? Math.max(T.bytes_per_tile, M.total_stats.max) : M.total_stats.max);
  }

  function drawStrip() {
    const c = $("memory-strip");
    const W = widthOf(c), H = 220, pad = 46;
    const g = canvas(c, W, H);
    const plotW = W - pad - 4, plotH = H - 24;
    const top = scaleTop() * 1.05;
    const per = Math.max(1, Math.ceil(NT / plotW));
    const colW = plotW / Math.ceil(NT / per);
    const y = (b) => 4 + plotH - (b / top) * plotH;
    g.font = "11px system-ui, sans-serif";
    g.fillStyle = "#5f6b76";
    for (const f of [0, 0.25, 0.5, 0.75, 1]) {
      const b = (f * top) / 1.05;
      g.fillText(kib(b).replace(" KiB", "K"), 2, y(b) + 4);
    }
    const reps = [];
    for (let s = 0, x = pad; s < NT; s += per, x += colW) {
      let best = s;
      for (let t = s; t < Math.min(NT, s + per); t++) if (M.total[t] > M.total[best]) best = t;
      reps.push(best);
      let acc = 0;
      for (let k = 0; k < M.categories.length; k++) {
        const b = M.by_category[k][best];
        if (!b) continue;
        g.fillStyle = CAT_COLOURS[k];
        g.fillRect(x, y(acc + b), colW + 0.5, y(acc) - y(acc + b));
        acc += b;
      }
      if (best === selected) {
        g.fillStyle = "rgba(215,48,31,0.25)";
        g.fillRect(x, 4, Math.max(colW, 2), plotH);
      }
    }
    if (T.bytes_per_tile <= top) {
      g.strokeStyle = "#d7301f";
      g.setLineDash([5, 3]);
      g.beginPath();
      g.moveTo(pad, y(T.bytes_per_tile));
      g.lineTo(W - 2, y(T.bytes_per_tile));
      g.stroke();
      g.setLineDash([]);
    } else {
      g.fillStyle = "#d7301f";
      g.fillText(`budget ${kib(T.bytes_per_tile)} is above the scale`, W - 200, 14);
    }
    g.fillStyle = "#5f6b76";
    g.fillText(`tile 0`, pad, H - 6);
    g.fillText(`tile ${NT - 1}`, Math.max(pad, pad + reps.length * colW - 60), H - 6);
    stripGeom = { pad, colW, reps };
    const at = (e) => {
      const r = c.getBoundingClientRect();
      const i = Math.floor((e.clientX - r.left - pad) / colW);
      return i >= 0 && i < reps.length ? reps[i] : -1;
    };
    c.onclick = (e) => { const t = at(e); if (t >= 0) selectTile(t); };
    c.onmousemove = (e) => { const t = at(e); c.title = t >= 0 ? `tile ${t}: ${bytes(M.total[t])}` : ""; };
  }

  function selectTile(t) {
    selected = t;
    $("tile-input").value = t;
    const d = $("tile-detail");
    d.dataset.tile = t;
    d.dataset.total = M.total[t];
    d.dataset.alwaysLive = M.always_live[t];
    d.dataset.temporary = M.temporary[t];
    const cats = el("table", { class: "data", id: "tile-categories" });
    table(cats, ["category", "bytes"], M.categories.map((c, k) =>
      row([c, fmt(M.by_category[k][t])], { "data-category": c, "data-bytes": M.by_category[k][t] })));
    cats.append(row([el("b", { text: "total (aligned)" }), el("b", { text: fmt(M.total[t]) })], { "data-bytes": M.total[t] }));
    const list = M.tile_items[t] || [];
    const items = el("table", { class: "data", id: "tile-items" });
    const rows = [];
    for (let k = 0; k < list.length && rows.length < 200; k += 2) {
      const i = list[k];
      rows.push(row([M.item_names[i], M.categories[M.item_categories[i]], fmt(list[k + 1])], { "data-bytes": list[k + 1] }));
    }
    table(items, ["item", "category", "bytes"], rows);
    d.replaceChildren(
      el("p", {}, `tile ${fmt(t)} of chip ${chipOf(t)}: `, el("b", { text: bytes(M.total[t]) }),
        ` (${pct(M.total[t] / T.bytes_per_tile)} of ${kib(T.bytes_per_tile)}); always-live ${bytes(M.always_live[t])}, temporaries peak ${bytes(M.temporary[t])}`),
      cats, el("h3", { text: "By item" }), items);
    for (const r of document.querySelectorAll("#fullest tr")) r.classList.toggle("selected", Number(r.dataset.tile) === t && r.dataset.tile !== undefined);
    if (mapGeom) drawMap();
    if (stripGeom) drawStrip();
  }

  // ---------------------------------------------------------------- programs
  function nodeLine(n) {
    const sp = (cls, text) => el("span", { class: cls, text });
    switch (n.k) {
      case "seq": return [sp("m", `sequence (${n.c.length})`)];
      case "label": return [sp("k", n.name)];
      case "repeat": return [sp("k", `repeat × ${fmt(n.count)}`)];
      case "while": return [sp("k", "while")];
      case "if": return [sp("k", "if")];
      case "switch": return [sp("k", `switch (${n.cases.length} cases)`)];
      case "call": return [sp("k", `call function ${n.f}`)];
      case "sync": return [sp("m", n.global ? "sync (global)" : "sync (internal)")];
      case "compute": {
        const c = D.computes[n.id];
        return [sp("c", `compute ${c.name}`), sp("m", ` ${fmt(c.vertices)} vertices on ${fmt(c.tiles)} tiles, ${fmt(c.cycles)} cycles`)];
      }
      case "exchange": {
        const x = D.exchanges[n.id];
        return [sp("x", `exchange ${x.name}`), sp("m", ` ${bytes(x.bytes)}, ${fmt(x.transfers)} transfers (${fmt(x.broadcasts)} broadcasts), ${bytes(x.inter_chip_bytes)} between chips, ${fmt(x.cycles)} cycles`)];
      }
      case "stream_in": return [sp("m", `stream ${D.streams[n.stream] || n.stream} → device, ${bytes(n.bytes)}`)];
      case "stream_out": return [sp("m", `stream ${D.streams[n.stream] || n.stream} → host, ${bytes(n.bytes)}`)];
      case "remote": {
        const b = SM.buffers[n.buffer];
        const name = b ? b.name : `buffer ${n.buffer}`;
        const rows = n.first == null
          ? `${fmt(n.rows)} row${n.rows === 1 ? "" : "s"} at device offsets`
          : n.rows === 1 ? `row ${fmt(n.first)}` : `rows ${fmt(n.first)}–${fmt(n.first + n.rows - 1)}`;
        return [sp("t", n.dir === "read" ? `remote read ${name} → tiles` : `remote write tiles → ${name}`),
          sp("m", ` ${rows}, ${bytes(n.bytes)}, ${fmt(n.cycles)} cycles`)];
      }
      case "overlap_io": return [sp("k", "overlapped I/O"), sp("m", `: ${plural(n.io.length, "step")} on the I/O tiles beside ${plural(n.compute.length, "step")} on the others`)];
      default: return [sp("m", n.k)];
    }
  }
  function children(n) {
    switch (n.k) {
      case "seq": case "label": case "repeat": return n.c.map((x) => [null, x]);
      case "while": return [["condition", { k: "seq", c: n.cond }], ["body", { k: "seq", c: n.c }]];
      case "if": return [["then", { k: "seq", c: n.then }], ["else", { k: "seq", c: n.else_ }]];
      case "switch": return n.cases.map(([v, x]) => [`case ${v}`, x]).concat([["default", { k: "seq", c: n.default }]]);
      case "overlap_io": return [["I/O tiles", { k: "seq", c: n.io }], ["compute, beside it", { k: "seq", c: n.compute }]];
      case "compute": return D.computes[n.id].codelets.length ? [["codelets", null]] : [];
      default: return [];
    }
  }
  function treeNode(n, caption, open) {
    const kids = children(n);
    const line = el("span", {}, caption ? el("span", { class: "m", text: caption + ": " }) : null, ...nodeLine(n));
    if (!kids.length) return el("div", { class: "leaf" }, line);
    const det = el("details", {}, el("summary", {}, line));
    let filled = false;
    const fill = () => {
      if (filled) return;
      filled = true;
      if (n.k === "compute") {
        const c = D.computes[n.id];
        const t = el("table", { class: "data" });
        table(t, ["codelet", "vertices"], c.codelets.map(([k, v]) => row([D.codelets[k], fmt(v)])));
        det.append(el("div", { class: "leaf" }, t));
        return;
      }
      // Long sequences are shown in pages of 200.
      let shown = 0;
      const more = () => {
        for (const [cap, x] of kids.slice(shown, shown + 200)) det.append(treeNode(x, cap, false));
        shown += 200;
        if (shown < kids.length) det.append(el("div", { class: "leaf" }, el("a", { href: "#", onclick: (e) => { e.target.parentElement.remove(); e.preventDefault(); more(); } }, `${kids.length - shown} more…`)));
      };
      more();
    };
    det.addEventListener("toggle", fill);
    if (open) { det.open = true; fill(); }
    return det;
  }
  function renderPrograms() {
    const tree = $("program-tree");
    D.programs.forEach((p, i) => tree.append(treeNode(p, `program ${i}`, D.programs.length <= 4)));
    D.functions.forEach((f, i) => tree.append(treeNode(f, `function ${i}`, false)));
    const cs = D.computes.map((c, i) => [c, i]).sort((a, b) => b[0].cycles - a[0].cycles);
    table($("compute-table"), ["compute set", "tiles", "vertices", "codelets", "default estimates", "cycles"], cs.map(([c]) =>
      row([c.name, fmt(c.tiles), fmt(c.vertices), c.codelets.map(([k]) => D.codelets[k]).join(", "), fmt(c.default_estimates), fmt(c.cycles)])));
    const xs = D.exchanges.map((x, i) => [x, i]).sort((a, b) => b[0].cycles - a[0].cycles);
    // The slowest tile's cycles: values + set-ups (messages) + link wait + hop latency.
    const slowest = (x) => {
      const s = x.slowest;
      if (!s || !x.cycles) return "";
      return `tile ${x.slowest_tile} ${s.receive ? "receiving" : "sending"}: ${fmt(s.value_cycles)} + ${fmt(s.setup_cycles)} (${fmt(s.messages)}) + ${fmt(s.link_wait_cycles)} + ${fmt(s.latency_cycles)}`;
    };
    // With every tile's port at the mean: mean port + most link wait and latency, effectiveness.
    const even = (x) => {
      const e = x.even_ports;
      if (!e || !e.max_link_and_hop_cycles) return "-";
      return `${fmt(Math.round(e.mean_port_cycles))} + ${fmt(e.max_link_and_hop_cycles)}, ${(100 * e.effectiveness).toFixed(1)} %`;
    };
    table($("exchange-table"), ["exchange", "bytes", "delivered", "between chips", "transfers", "broadcasts", "sending tiles", "receiving tiles", "cycles", "slowest tile: values + set-ups (messages) + link wait + hop latency", "even ports: mean port + most link wait and latency, effectiveness"], xs.map(([x]) =>
      row([x.name, fmt(x.bytes), fmt(x.bytes_delivered), fmt(x.inter_chip_bytes), fmt(x.transfers), fmt(x.broadcasts), fmt(x.src_tiles), fmt(x.dst_tiles), fmt(x.cycles), slowest(x), even(x)])));
  }

  // ---------------------------------------------------------------- liveness
  // The program steps in order: [kind, id, path], a loop's body once, a function's body at its
  // first call.
  function steps() {
    const out = [], seenFn = new Set();
    const walk = (n, path) => {
      switch (n.k) {
        case "compute": out.push(["compute", n.id, path]); break;
        case "exchange": out.push(["exchange", n.id, path]); break;
        case "label": n.c.forEach((x) => walk(x, path.concat(n.name))); break;
        case "seq": case "repeat": n.c.forEach((x) => walk(x, path)); break;
        case "while": n.cond.concat(n.c).forEach((x) => walk(x, path)); break;
        case "if": n.then.concat(n.else_).forEach((x) => walk(x, path)); break;
        case "switch": n.cases.forEach(([, x]) => walk(x, path)); n.default.forEach((x) => walk(x, path)); break;
        case "overlap_io": n.io.concat(n.compute).forEach((x) => walk(x, path.concat("overlapped I/O"))); break;
        case "call":
          if (!seenFn.has(n.f) && D.functions[n.f]) { seenFn.add(n.f); walk(D.functions[n.f], path.concat(`function ${n.f}`)); }
          break;
      }
    };
    D.programs.forEach((p, i) => walk(p, [`program ${i}`]));
    return out;
  }
  const tempCache = new Map();
  function tempOf(kind, id, tile) {
    const key = kind + id;
    let m = tempCache.get(key);
    if (!m) {
      m = new Map();
      const flat = (kind === "compute" ? D.computes : D.exchanges)[id].temporaries;
      for (let k = 0; k < flat.length; k += 2) m.set(flat[k], flat[k + 1]);
      tempCache.set(key, m);
    }
    return m.get(tile) || 0;
  }
  function renderLiveness() {
    const st = steps();
    $("live-worst").textContent = `${worstTile} (${bytes(M.total[worstTile])})`;
    const input = $("live-tile");
    input.max = NT - 1;
    input.value = selected >= 0 ? selected : worstTile;
    const draw = () => {
      const t = Math.min(NT - 1, Math.max(0, Number(input.value) | 0));
      const c = $("live-chart");
      const W = widthOf(c), H = 260, pad = 70;
      const g = canvas(c, W, H);
      const series = [[t, "#1f6feb"], [worstTile, "#d7301f"]];
      const val = (tile, s) => M.always_live[tile] + tempOf(s[0], s[1], tile);
      // Scaled to the larger series; the budget line is drawn when it is in range.
      let top = 1;
      for (const [tile] of series) {
        top = Math.max(top, M.always_live[tile]);
        for (const s of st) top = Math.max(top, val(tile, s));
      }
      top *= 1.15;
      const plotW = W - pad - 8, plotH = H - 30;
      const n = Math.max(1, st.length);
      const x = (i) => pad + (i / n) * plotW, y = (b) => 6 + plotH - (b / top) * plotH;
      g.font = "11px system-ui, sans-serif";
      g.fillStyle = "#5f6b76";
      for (const f of [0, 0.5, 1]) g.fillText(bytes(Math.round(f * top)), 2, y(f * top) + 4);
      g.fillText(`program steps → (${st.length}); budget ${kib(T.bytes_per_tile)}`, pad, H - 6);
      if (T.bytes_per_tile <= top) {
        g.strokeStyle = "#999";
        g.setLineDash([5, 3]);
        g.beginPath(); g.moveTo(pad, y(T.bytes_per_tile)); g.lineTo(W - 8, y(T.bytes_per_tile)); g.stroke();
        g.setLineDash([]);
      }
      for (const [tile, colour] of series) {
        g.fillStyle = colour + "22";
        g.fillRect(pad, y(M.always_live[tile]), plotW, y(0) - y(M.always_live[tile]));
        g.strokeStyle = colour;
        g.lineWidth = 1.5;
        g.beginPath();
        st.forEach((s, i) => {
          const v = y(val(tile, s));
          if (i === 0) g.moveTo(x(i), v); else g.lineTo(x(i), v);
          g.lineTo(x(i + 1), v);
        });
        if (!st.length) { g.moveTo(x(0), y(M.always_live[tile])); g.lineTo(x(1), y(M.always_live[tile])); }
        g.stroke();
      }
      g.fillStyle = "#1f6feb"; g.fillText(`tile ${t}`, W - 170, 16);
      g.fillStyle = "#d7301f"; g.fillText(`worst tile ${worstTile}`, W - 100, 16);
      c.dataset.steps = st.length;
      c.dataset.tile = t;
      c.dataset.peak = st.reduce((m, s) => Math.max(m, val(t, s)), M.always_live[t]);
      c.onmousemove = (e) => {
        const r = c.getBoundingClientRect();
        const i = Math.floor(((e.clientX - r.left - pad) / plotW) * n);
        const s = st[i];
        $("live-hover").textContent = s
          ? `step ${i}: ${s[0]} ${(s[0] === "compute" ? D.computes : D.exchanges)[s[1]].name} (${s[2].join(" / ")}); tile ${t}: ${fmt(val(t, s))} B, worst tile: ${fmt(val(worstTile, s))} B`
          : "";
      };
    };
    input.addEventListener("change", draw);
    draw();
  }

  // ---------------------------------------------------------------- execution
  function renderExecution() {
    const sel = $("matrix-select");
    if (P) {
      const e = P.elapsed, xfer = e.transfer || 0, hidden = e.transfer_overlapped || 0;
      const tot = e.compute + e.exchange + e.sync + xfer;
      $("exec-summary").replaceChildren(
        `${fmt(P.runs)} run${P.runs === 1 ? "" : "s"}: `, el("b", { text: `${fmt(tot)} cycles` }),
        ` (${us(tot)} modelled): compute ${pct(e.compute / (tot || 1))}, exchange ${pct(e.exchange / (tot || 1))}, sync ${pct(e.sync / (tot || 1))}, ` +
        `transfer ${pct(xfer / (tot || 1))} (${fmt(xfer)} cycles waited for; ${fmt(hidden)} more overlapped with compute); ` +
        `${fmt(P.syncs_internal)} internal and ${fmt(P.syncs_global)} global syncs; host wall time ${ms(P.wall_ns)}` +
        (P.timeline.truncated ? "; the timeline shows the first steps only" : ""));
      $("exec-summary").dataset.cycles = tot;
      $("exec-summary").dataset.transfer = xfer;
      $("exec-summary").dataset.transferOverlapped = hidden;
      $("timeline-legend").replaceChildren(...KIND_NAMES.map((k, i) => el("span", { "data-kind": k }, el("i", { style: `background:${KIND_COLOURS[i]}` }), k)));
      drawTimeline();
      table($("label-table"), ["label", "executions", "compute", "exchange", "sync", "transfer", "total", "µs", "tile compute min / median / max", "effectiveness"],
        P.labels.map((l) => {
          const lx = l.elapsed.transfer || 0;
          const t = l.elapsed.compute + l.elapsed.exchange + l.elapsed.sync + lx;
          return row([l.name, fmt(l.executions), fmt(l.elapsed.compute), fmt(l.elapsed.exchange), fmt(l.elapsed.sync), fmt(lx), fmt(t), us(t),
            `${fmt(l.compute.min)} / ${fmt(l.compute.median)} / ${fmt(l.compute.max)}`, pct(l.effectiveness)], { "data-label": l.name, "data-total": t });
        }));
      drawTileCycles();
      const ph = P.phases.slice().sort((a, b) => b.cycles - a.cycles);
      table($("phase-table"), ["phase", "kind", "executions", "cycles (all)", "per execution min / median / max", "effectiveness", "host wall", "bytes per execution"],
        ph.map((p) => row([p.name, p.kind, fmt(p.executions), fmt(p.cycles),
          `${fmt(p.per_execution.min)} / ${fmt(p.per_execution.median)} / ${fmt(p.per_execution.max)}`, pct(p.per_execution.effectiveness),
          ms(p.wall_ns), p.kind === "exchange" || p.kind === "transfer" ? fmt(p.bytes) : ""], { "data-phase": p.name, "data-kind": p.kind, "data-cycles": p.cycles })));
      sel.append(el("option", { value: "run", text: "all exchanges of the run (× executions)" }));
    } else {
      $("exec-summary").textContent = "No profile was given: the phases below are the static cycle model of one execution each. " +
        "Run with a profile (`poplar report EXE PROFILE`) for the timeline, labels and measured host time.";
      $("exec-profile").style.display = "none";
      const rows = D.computes.map((c) => ["compute", c.name, c.cycles]).concat(D.exchanges.map((x) => ["exchange", x.name, x.cycles]))
        .sort((a, b) => b[2] - a[2]);
      table($("phase-table"), ["phase", "kind", "cycles per execution"], rows.map(([k, n, c]) => row([n, k, fmt(c)], { "data-phase": n, "data-cycles": c })));
    }
    sel.append(el("option", { value: "once", text: "every exchange once" }));
    D.exchanges.forEach((x, i) => sel.append(el("option", { value: String(i), text: `${x.name} (${bytes(x.bytes_delivered)})` })));
    sel.addEventListener("change", drawMatrices);
    drawMatrices();
  }

  // A chip × chip table of `chip` (n × n, row = source); `signed`: differences, coloured red
  // (more) and blue (less) against the largest magnitude.
  function chipTable(tbl, chip, n, signed) {
    const cmax = Math.max(1, ...Array.from(chip, Math.abs));
    tbl.replaceChildren(el("tr", {}, el("th", { text: "from \\ to" }), ...Array.from({ length: n }, (_, d) => el("th", { text: `chip ${d}` }))));
    for (let s = 0; s < n; s++) {
      tbl.append(el("tr", {}, el("th", { text: `chip ${s}` }), ...Array.from({ length: n }, (_, d) => {
        const v = chip[s * n + d], f = Math.abs(v) / cmax;
        const bg = !v ? "#fff" : signed ? diverge(v / cmax) : ramp(0.15 + 0.85 * f);
        return el("td", { text: signed ? sgn(v) : fmt(v), "data-bytes": v, style: `background:${bg};color:${f > 0.6 ? "#fff" : "inherit"}` });
      })));
    }
  }

  // Delivered bytes tile range × tile range of report R (this page's by default): over the run
  // ("run", each exchange × its executions), every exchange once ("once"), or one exchange.
  function matrixOf(choice, R) {
    R = R || D;
    const nb = R.target.matrix_bins, m = new Float64Array(nb * nb);
    const execs = new Map();
    if (R.profile) for (const p of R.profile.phases) if (p.kind === "exchange") execs.set(p.index, p.executions);
    R.exchanges.forEach((x, i) => {
      let w;
      if (choice === "run") w = execs.get(i) || 0;
      else if (choice === "once") w = 1;
      else w = String(i) === choice ? 1 : 0;
      if (!w) return;
      for (let k = 0; k < x.matrix.length; k += 3) m[x.matrix[k] * nb + x.matrix[k + 1]] += w * x.matrix[k + 2];
    });
    return m;
  }
  function drawMatrices() {
    const choice = $("matrix-select").value;
    const nb = T.matrix_bins, m = matrixOf(choice);
    const per = nb / T.chips;
    const chip = new Float64Array(T.chips * T.chips);
    for (let s = 0; s < nb; s++) for (let d = 0; d < nb; d++) chip[Math.floor(s / per) * T.chips + Math.floor(d / per)] += m[s * nb + d];
    chipTable($("chip-matrix"), chip, T.chips, false);
    drawRanges($("range-matrix"), $("range-hover"), m, false);
  }
  // The heat map of a tile range × tile range matrix `m` of this page's target; `signed`:
  // differences, red (more) and blue (less) against the largest magnitude.
  function drawRanges(c, hover, m, signed) {
    const nb = T.matrix_bins, per = nb / T.chips;
    const S = Math.min(512, Math.max(256, nb * 6));
    const g = canvas(c, S + 40, S + 20);
    const cell = S / nb;
    let mmax = 0;
    for (const v of m) mmax = Math.max(mmax, Math.abs(v));
    for (let s = 0; s < nb; s++) for (let d = 0; d < nb; d++) {
      const v = m[s * nb + d];
      g.fillStyle = !v ? "#fafafa" : signed ? diverge(Math.sign(v) * Math.sqrt(Math.abs(v) / mmax)) : ramp(0.15 + 0.85 * Math.sqrt(v / mmax));
      g.fillRect(40 + d * cell, s * cell, Math.ceil(cell), Math.ceil(cell));
    }
    g.strokeStyle = "#888";
    for (let k = 1; k < T.chips; k++) {
      g.beginPath(); g.moveTo(40 + k * per * cell, 0); g.lineTo(40 + k * per * cell, S); g.stroke();
      g.beginPath(); g.moveTo(40, k * per * cell); g.lineTo(40 + S, k * per * cell); g.stroke();
    }
    g.fillStyle = "#5f6b76";
    g.font = "11px system-ui, sans-serif";
    g.fillText("from", 2, 12);
    g.fillText("to →", 40, S + 14);
    const range = (b) => {
      const chip = Math.floor(b / per), first = chip * T.tiles_per_chip + (b % per) * T.matrix_bin_tiles;
      return `tiles ${first}–${Math.min(first + T.matrix_bin_tiles, (chip + 1) * T.tiles_per_chip) - 1}`;
    };
    c.dataset.cells = m.filter((v) => v !== 0).length;
    c.onmousemove = (e) => {
      const r = c.getBoundingClientRect();
      const d = Math.floor((e.clientX - r.left - 40) / cell), s = Math.floor((e.clientY - r.top) / cell);
      hover.textContent = s >= 0 && s < nb && d >= 0 && d < nb ? `${range(s)} → ${range(d)}: ${(signed ? sgn : fmt)(m[s * nb + d])} B` : "";
    };
  }

  let view = null;
  let drag = null;
  window.addEventListener("mouseup", () => { drag = null; });
  function drawTimeline() {
    const tl = P.timeline, c = $("timeline");
    const n = tl.start.length;
    let end = 0;
    for (let i = 0; i < n; i++) end = Math.max(end, tl.start[i] + tl.dur[i]);
    if (!view) view = [0, Math.max(1, end)];
    const W = widthOf(c), rowH = 14, lab = 130;
    const H = tl.tracks.length * rowH + 22;
    const g = canvas(c, W, H);
    const plotW = W - lab - 4;
    const x = (cy) => lab + ((cy - view[0]) / (view[1] - view[0])) * plotW;
    g.font = "11px system-ui, sans-serif";
    tl.tracks.forEach((name, k) => {
      g.fillStyle = k % 2 ? "#fafbfc" : "#fff";
      g.fillRect(0, k * rowH, W, rowH);
      g.fillStyle = "#5f6b76";
      g.fillText(name.length > 20 ? name.slice(0, 19) + "…" : name, 2, k * rowH + 11);
    });
    for (let i = 0; i < n; i++) {
      const a = tl.start[i], b = a + tl.dur[i];
      if (b < view[0] || a > view[1]) continue;
      const x0 = Math.max(lab, x(a)), x1 = Math.min(W - 4, x(b));
      g.fillStyle = KIND_COLOURS[tl.kind[i]];
      g.fillRect(x0, tl.track[i] * rowH + 2, Math.max(0.5, x1 - x0), rowH - 4);
    }
    g.fillStyle = "#5f6b76";
    g.fillText(`${fmt(Math.round(view[0]))} cycles`, lab, H - 6);
    const r = `${fmt(Math.round(view[1]))} cycles`;
    g.fillText(r, W - 8 - g.measureText(r).width, H - 6);
    const at = (e) => {
      const rc = c.getBoundingClientRect();
      const px = e.clientX - rc.left, k = Math.floor((e.clientY - rc.top) / rowH);
      const cy = view[0] + ((px - lab) / plotW) * (view[1] - view[0]);
      return [px, k, cy];
    };
    c.onwheel = (e) => {
      e.preventDefault();
      const [px, , cy] = at(e);
      if (px < lab) return;
      const f = e.deltaY > 0 ? 1.25 : 0.8;
      const w = Math.min(Math.max(1, end), Math.max(10, (view[1] - view[0]) * f));
      view = [Math.max(0, cy - (cy - view[0]) * (w / (view[1] - view[0]))), 0];
      view[1] = view[0] + w;
      drawTimeline();
    };
    c.onmousedown = (e) => { drag = [e.clientX, view[0], view[1]]; };
    c.onmousemove = (e) => {
      if (drag) {
        const d = ((e.clientX - drag[0]) / plotW) * (drag[2] - drag[1]);
        view = [Math.max(0, drag[1] - d), 0];
        view[1] = view[0] + (drag[2] - drag[1]);
        drawTimeline();
        return;
      }
      const [, k, cy] = at(e);
      let hit = "";
      for (let i = 0; i < n; i++) {
        if (tl.track[i] === k && tl.start[i] <= cy && cy <= tl.start[i] + tl.dur[i]) {
          hit = `${tl.tracks[k]}: ${KIND_NAMES[tl.kind[i]]} ${tl.names[tl.name[i]]}, cycles ${fmt(tl.start[i])}–${fmt(tl.start[i] + tl.dur[i])} (${fmt(tl.dur[i])})`;
          break;
        }
      }
      $("timeline-hover").textContent = hit;
    };
    c.ondblclick = () => { view = [0, Math.max(1, end)]; drawTimeline(); };
  }

  function drawTileCycles() {
    const c = $("tile-cycles");
    const W = widthOf(c), H = 160, pad = 46;
    const g = canvas(c, W, H);
    const plotW = W - pad - 4, plotH = H - 24;
    const per = Math.max(1, Math.ceil(NT / plotW));
    const colW = Math.max(1, Math.floor(plotW / Math.ceil(NT / per)));
    const xfer = P.tile_transfer && P.tile_transfer.length === NT ? P.tile_transfer : new Array(NT).fill(0);
    const tot = (t) => P.tile_compute[t] + P.tile_exchange[t] + P.tile_sync[t] + xfer[t];
    let top = 1;
    for (let t = 0; t < NT; t++) top = Math.max(top, tot(t));
    const y = (v) => 4 + plotH - (v / top) * plotH;
    for (let s = 0, x = pad; s < NT; s += per, x += colW) {
      let best = s;
      for (let t = s; t < Math.min(NT, s + per); t++) if (P.tile_compute[t] > P.tile_compute[best]) best = t;
      let acc = 0;
      [P.tile_compute[best], P.tile_exchange[best], P.tile_sync[best], xfer[best]].forEach((v, k) => {
        g.fillStyle = KIND_COLOURS[k === 3 ? 4 : k];
        g.fillRect(x, y(acc + v), colW, y(acc) - y(acc + v));
        acc += v;
      });
    }
    g.fillStyle = "#5f6b76";
    g.font = "11px system-ui, sans-serif";
    g.fillText(fmt(top), 2, 12);
    g.fillText("0", 2, y(0));
  }

  // ---------------------------------------------------------------- compare
  // B − A from the comparison made by `poplar report --compare` (the numbers of
  // `poplar memory|profile --compare`); the per-tile strip from the two reports' tiles.
  function diffCells(p, unit) {
    const cls = p.diff > 0 ? "more" : p.diff < 0 ? "less" : "";
    const rel = !p.diff ? "" : p.a ? (p.diff > 0 ? "+" : "") + pct(p.diff / p.a) : "new";
    return [unit(p.a), unit(p.b), el("span", { class: cls, text: p.diff ? (p.diff > 0 ? "+" : "−") + unit(Math.abs(p.diff)) : "0" }), rel];
  }
  function pairRow(name, p, unit, attrs) {
    return row([name, ...diffCells(p, unit)], Object.assign({ "data-a": p.a, "data-b": p.b, "data-diff": p.diff }, attrs));
  }
  function renderCompare() {
    const C = CMP.diff, A = CMP.a, B = CMP.b;
    const tline = (r) => `${r.title}: ${fmt(r.target.chips)} × ${fmt(r.target.tiles_per_chip)} tiles${r.profile ? ", with a profile" : ""}`;
    $("cmp-summary").textContent = `A is ${tline(A)}. B is ${tline(B)}. Differences are B − A.`;
    $("cmp-limits").replaceChildren(...C.limits.map((l) => el("li", { "data-limit": l.k, text: limitText(l) })));
    const M2 = C.memory;
    const head = ["", "A", "B", "B − A", "change"];
    table($("cmp-memory"), head, [["total", M2.total], ["always-live", M2.always_live], ["temporaries (peaks)", M2.temporary],
      ["fullest tile", M2.max_tile]].map(([n, p]) => pairRow(n, p, bytes, { "data-what": n }))
      .concat([pairRow("tiles over the budget", M2.over_budget, fmt, { "data-what": "over budget" })])
      .concat(M2.categories.map((c) => pairRow(c.name, c, bytes, { "data-category": c.name }))));
    drawTileDiff();
    table($("cmp-tiles"), ["tile", "A", "B", "B − A", "change"], M2.tiles.map((t) => pairRow(fmt(t.tile), t, bytes, { "data-tile": t.tile })));
    if (C.elapsed) {
      const E = C.elapsed;
      table($("cmp-elapsed"), head, ["runs", "compute", "exchange", "sync", "transfer", "total"].map((k) =>
        pairRow(k, E[k], fmt, { "data-what": k })));
    } else $("cmp-elapsed-box").style.display = "none";
    $("cmp-phase-source").textContent = C.phase_source === "profile"
      ? "(cycles over the runs, matched by kind and name)" : "(modelled cycles of one execution, matched by kind and name)";
    const both = C.phases.filter((p) => p.a && p.b), one = C.phases.filter((p) => !(p.a && p.b));
    const side = (s) => (s ? s.cycles : 0);
    const phRow = (p) => {
      const r = pairRow(p.name, { a: side(p.a), b: side(p.b), diff: side(p.b) - side(p.a) }, fmt, { "data-phase": p.name, "data-kind": p.kind });
      r.firstChild.after(el("td", { class: "name", text: p.kind }));
      return r;
    };
    both.sort((x, y) => Math.abs(side(y.b) - side(y.a)) - Math.abs(side(x.b) - side(x.a)));
    table($("cmp-phases"), ["phase", "kind", "A cycles", "B cycles", "B − A", "change"], both.map(phRow));
    table($("cmp-unmatched"), ["phase", "kind", "only in", "cycles"], one.length ? one.map((p) => row([p.name, p.kind, p.a ? "A" : "B", fmt(side(p.a || p.b))],
      { "data-phase": p.name, "data-side": p.a ? "a" : "b" })) : [row(["none: every phase of each run is in the other", "", "", ""])]);
    if (C.labels.length) {
      const tot = (s) => (s ? s.compute + s.exchange + s.sync + (s.transfer || 0) : 0);
      table($("cmp-labels"), ["label", "A cycles", "B cycles", "B − A", "change"], C.labels.map((l) =>
        pairRow(l.name + (l.a && l.b ? "" : l.a ? " (A only)" : " (B only)"), { a: tot(l.a), b: tot(l.b), diff: tot(l.b) - tot(l.a) }, fmt, { "data-label": l.name })));
    } else $("cmp-labels-box").style.display = "none";
    const X = C.exchange;
    $("cmp-chip-weight").textContent = X.weight === "run" ? "(delivered over the runs; row = source chip)" : "(every exchange once; row = source chip)";
    chipTable($("cmp-chips-a"), X.a, X.a_chips, false);
    chipTable($("cmp-chips-b"), X.b, X.b_chips, false);
    if (X.diff) chipTable($("cmp-chips-diff"), X.diff, X.a_chips, true);
    else $("cmp-chips-diff").replaceChildren(el("tr", {}, el("td", { text: "different chip counts" })));
    drawRangeDiff(X.weight);
  }
  // B − A of the tile range × tile range bytes, when the two targets have the same ranges.
  function drawRangeDiff(weight) {
    const ta = CMP.a.target, tb = CMP.b.target;
    if (ta.tiles !== tb.tiles || ta.chips !== tb.chips || ta.matrix_bins !== tb.matrix_bins || ta.matrix_bin_tiles !== tb.matrix_bin_tiles) {
      $("cmp-range").style.display = "none";
      $("cmp-range-hover").textContent = "not compared: the targets have different tile ranges";
      return;
    }
    const ma = matrixOf(weight, CMP.a), mb = matrixOf(weight, CMP.b);
    drawRanges($("cmp-range"), $("cmp-range-hover"), mb.map((v, k) => v - ma[k]), true);
  }
  function limitText(l) {
    switch (l.k) {
      case "tiles": return `different targets: ${fmt(l.a)} tiles in A, ${fmt(l.b)} in B; per-tile differences are left out`;
      case "chips": return `different targets: ${fmt(l.a)} chips in A, ${fmt(l.b)} in B; chip × chip differences are left out`;
      case "bytes_per_tile": return `different targets: ${bytes(l.a)} per tile in A, ${bytes(l.b)} in B`;
      case "clock": return `different clocks: ${(l.a / 1e9).toFixed(3)} GHz in A, ${(l.b / 1e9).toFixed(3)} GHz in B; cycles compare, times do not`;
      default: return l.k;
    }
  }
  // B − A of each tile's total, up and down from a zero line.
  function drawTileDiff() {
    const c = $("cmp-strip"), A = CMP.a.memory.total, B = CMP.b.memory.total;
    if (A.length !== B.length) { c.style.display = "none"; return; }
    const n = A.length, W = widthOf(c), H = 160, pad = 70;
    const g = canvas(c, W, H);
    const plotW = W - pad - 4, mid = H / 2;
    const per = Math.max(1, Math.ceil(n / plotW)), colW = Math.max(1, Math.floor(plotW / Math.ceil(n / per)));
    let top = 1, changed = 0;
    for (let t = 0; t < n; t++) { top = Math.max(top, Math.abs(B[t] - A[t])); if (B[t] !== A[t]) changed++; }
    const cols = [];
    for (let s = 0, x = pad; s < n; s += per, x += colW) {
      let best = s;
      for (let t = s; t < Math.min(n, s + per); t++) if (Math.abs(B[t] - A[t]) > Math.abs(B[best] - A[best])) best = t;
      const d = B[best] - A[best], h = (Math.abs(d) / top) * (mid - 8);
      g.fillStyle = d > 0 ? "#d7301f" : "#1f6feb";
      g.fillRect(x, d > 0 ? mid - h : mid, colW, h);
      cols.push(best);
    }
    g.strokeStyle = "#999";
    g.beginPath(); g.moveTo(pad, mid); g.lineTo(W - 4, mid); g.stroke();
    g.fillStyle = "#5f6b76";
    g.font = "11px system-ui, sans-serif";
    g.fillText("+" + bytes(top), 2, 12);
    g.fillText("0", 2, mid + 4);
    g.fillText("−" + bytes(top), 2, H - 4);
    c.dataset.changed = changed;
    c.dataset.maxChange = top;
    c.onmousemove = (e) => {
      const t = cols[Math.floor((e.clientX - c.getBoundingClientRect().left - pad) / colW)];
      $("cmp-strip-hover").textContent = t === undefined ? ""
        : `tile ${t} (chip ${chipOf(t)}): A ${fmt(A[t])} B, B ${fmt(B[t])} B, B − A ${sgn(B[t] - A[t])} B`;
    };
  }
  if (CMP) {
    document.querySelector("#tabs button[data-view=compare]").hidden = false;
    $("sides").hidden = false;
    for (const b of document.querySelectorAll("#sides button")) {
      b.classList.toggle("active", b.dataset.side === SIDE);
      b.title = CMP[b.dataset.side].title;
      b.addEventListener("click", () => {
        if (b.dataset.side === SIDE) return;
        location.hash = `${b.dataset.side}/${document.documentElement.dataset.view}`;
        location.reload();
      });
    }
  }

  // ---------------------------------------------------------------- start
  show(CMP ? (renderers[HASH[1]] ? HASH[1] : "compare") : "memory");
  // Script time of the first view, and time since navigation started (parse + script).
  document.documentElement.dataset.renderMs = (performance.now() - t0).toFixed(1);
  document.documentElement.dataset.firstRenderMs = performance.now().toFixed(1);
  document.documentElement.dataset.rendered = "1";
  window.poplarReport = { data: D, compare: CMP, side: SIDE, selectTile, show, mapPos, mapTileAt };
})();
