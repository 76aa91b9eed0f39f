"""The page ``mua view`` writes: HTML, CSS and script in one string. ``__TITLE__`` gets HTML-escaped text and
``__DATA__`` the payload (``view.safe_json``). The script builds every element with ``textContent`` and
attributes, never ``innerHTML``, so whatever a model wrote shows as text."""

PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>__TITLE__</title>
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{padding:8px 12px;background:#24292f;color:#fff}header h1{font-size:15px;margin:0}
#bar{display:flex;gap:10px;flex-wrap:wrap;align-items:center;padding:6px 12px;background:#eee;border-bottom:1px solid #ccc}
main{display:flex;height:calc(100vh - 80px)}
#list{flex:0 0 46%;overflow:auto;border-right:1px solid #ccc}
#detail{flex:1;overflow:auto;padding:8px 12px}
table{border-collapse:collapse;width:100%}th,td{padding:2px 6px;border-bottom:1px solid #e3e3e3;text-align:left;
 max-width:260px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
th{position:sticky;top:0;background:#f3f3f3;cursor:pointer;user-select:none}
tr.ep{cursor:pointer}tr.ep:hover{background:#eef5ff}tr.sel{background:#dbeafe}
.pass{color:#137333}.fail{color:#b3261e}.unknown{color:#8a6d00;font-style:italic}.err{color:#b3261e}
.flip-regressed{background:#fde2e1}.flip-fixed{background:#dff3e4}
#pager{padding:6px 12px}
.cols{display:flex;gap:12px;align-items:flex-start}.col{flex:1;min-width:0}
.msg{border-radius:6px;padding:6px 8px;margin:6px 0;border:1px solid #ddd;background:#fff}
.msg.agent{border-left:4px solid #2563eb}.msg.user{border-left:4px solid #16a34a}
.msg.tool{border-left:4px solid #9ca3af;background:#f7f7f7}.msg.system{border-left:4px solid #a855f7}
.msg.device{border-left:4px solid #f59e0b}
.role{font-weight:600;font-size:12px;color:#555}.badge{background:#f59e0b;color:#fff;border-radius:3px;padding:0 4px;margin-left:4px;font-size:11px}
.text,pre{white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:plaintext;margin:2px 0;font:12px/1.4 ui-monospace,monospace}
.call{background:#eef2ff;border-radius:4px;padding:3px 6px;margin:3px 0}
.score{border:1px solid #ccc;border-radius:6px;padding:6px 8px;background:#fff}
.why li{color:#b3261e}
img.curves{max-width:100%;border:1px solid #ccc;background:#fff}
.note{color:#8a6d00}
</style></head>
<body>
<header><h1>__TITLE__</h1><div id="runs"></div></header>
<div id="bar">
 <span id="count"></span>
 <label><input type="checkbox" id="f-failed"> failed only</label>
 <label><input type="checkbox" id="f-errored"> errored only</label>
 <label><input type="checkbox" id="f-unknown"> unknown only</label>
 <label id="l-flipped" hidden><input type="checkbox" id="f-flipped"> flipped only</label>
 <label>subset <select id="f-subset"><option value="">all</option></select></label>
 <label>task <input type="search" id="f-task" placeholder="task id contains"></label>
</div>
<main><div id="list"><div id="training"></div><table><thead id="thead"></thead><tbody id="tbody"></tbody></table>
<div id="pager"></div></div><div id="detail"><p>Click an episode to see its conversation and score.</p></div></main>
<script type="application/json" id="mua-data">__DATA__</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("mua-data").textContent);
const RUNS = DATA.runs, ROWS = DATA.rows, N = RUNS.length, PAGE_SIZE = 100, FOLD = 600;
let shown = [], sortKey = N > 1 ? "flip" : null, sortDir = 1, page = 0, current = -1;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function flip(row) {
  if (N < 2) return "";
  const [a, b] = row.runs;
  if (!a || !b || a.pass === null || b.pass === null) return "";
  return a.pass === b.pass ? "" : (a.pass ? "regressed" : "fixed");
}
function rewardText(s) {
  if (!s) return "absent";
  if (s.error) return "error";
  return s.reward === null ? "unknown/incomplete" : String(+s.reward.toFixed(4));
}
function rewardClass(s) {
  if (!s || s.error) return "err";
  return s.pass === null ? "unknown" : (s.pass ? "pass" : "fail");
}
const BASE = [["subset", r => r.subset], ["task", r => r.task], ["trial", r => r.trial]];
const PER_RUN = [["reward", s => s ? (s.reward === null ? -1 : s.reward) : -2],
  ["termination", s => s && s.termination || ""], ["turns", s => s && s.turns !== null ? s.turns : -1],
  ["tokens", s => s && s.tokens !== null ? s.tokens : -1], ["error", s => s && s.error || ""]];
const FLIP_ORDER = {regressed: 0, fixed: 1, "": 2};
function columns() {
  const cols = BASE.map(([name, get]) => ({name, get}));
  if (N > 1) cols.push({name: "flip", get: r => FLIP_ORDER[flip(r)]});
  RUNS.forEach((run, n) => PER_RUN.forEach(([name, get]) =>
    cols.push({name: N > 1 ? name + " " + "AB"[n] : name, key: name, n, get: r => get(r.runs[n])})));
  return cols;
}
const COLS = columns();

function header() {
  const runs = document.getElementById("runs");
  RUNS.forEach((run, n) => runs.append(el("div", "", (N > 1 ? "AB"[n] + ": " : "") + run.label + " (" +
    run.details.length + " episodes, " + run.kind + ")")));
  const tr = el("tr");
  COLS.forEach(c => {
    const th = el("th", "", c.name + (sortKey === c.name ? (sortDir > 0 ? " \u25b2" : " \u25bc") : ""));
    th.addEventListener("click", () => { sortDir = sortKey === c.name ? -sortDir : 1; sortKey = c.name;
      refreshHeader(); apply(); });
    tr.append(th);
  });
  document.getElementById("thead").replaceChildren(tr);
  const select = document.getElementById("f-subset");
  [...new Set(ROWS.map(r => r.subset))].forEach(s => { const o = el("option", "", s); o.value = s; select.append(o); });
  if (N > 1) document.getElementById("l-flipped").hidden = false;
}
function refreshHeader() {
  const ths = document.querySelectorAll("#thead th");
  COLS.forEach((c, i) => ths[i].textContent = c.name + (sortKey === c.name ? (sortDir > 0 ? " \u25b2" : " \u25bc") : ""));
}
function apply() {
  const failed = document.getElementById("f-failed").checked, errored = document.getElementById("f-errored").checked;
  const unknown = document.getElementById("f-unknown").checked, flipped = document.getElementById("f-flipped").checked;
  const subset = document.getElementById("f-subset").value, task = document.getElementById("f-task").value.toLowerCase();
  shown = [];
  ROWS.forEach((r, i) => {
    if (subset && r.subset !== subset) return;
    if (task && !r.task.toLowerCase().includes(task)) return;
    if (failed && !r.runs.some(s => s && s.pass === false)) return;
    if (errored && !r.runs.some(s => s && s.error)) return;
    if (unknown && !r.runs.some(s => s && !s.error && s.reward === null)) return;
    if (flipped && !flip(r)) return;
    shown.push(i);
  });
  const col = COLS.find(c => c.name === sortKey);
  if (col) shown.sort((i, j) => {
    const a = col.get(ROWS[i]), b = col.get(ROWS[j]);
    return (a < b ? -1 : a > b ? 1 : i - j) * sortDir;
  });
  page = 0;
  render();
}
function render() {
  const count = document.getElementById("count");
  count.textContent = ROWS.length + " episodes" + (shown.length !== ROWS.length ? ", " + shown.length + " shown" : "");
  count.dataset.total = ROWS.length;
  const body = document.getElementById("tbody"), frag = document.createDocumentFragment();
  for (const i of shown.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE)) {
    const r = ROWS[i], tr = el("tr", "ep" + (i === current ? " sel" : ""));
    const f = flip(r);
    if (f) tr.classList.add("flip-" + f);
    tr.dataset.row = i;
    tr.append(el("td", "", r.subset), el("td", "", r.task), el("td", "", r.trial));
    if (N > 1) tr.append(el("td", "", f));
    r.runs.forEach(s => {
      tr.append(el("td", rewardClass(s), rewardText(s)), el("td", "", s ? s.termination : ""),
        el("td", "", s && s.turns !== null ? s.turns : ""), el("td", "", s && s.tokens !== null ? s.tokens : ""),
        el("td", "err", s && s.error ? s.error : ""));
    });
    tr.title = r.task;
    tr.addEventListener("click", () => { location.hash = "ep=" + i; });
    frag.append(tr);
  }
  body.replaceChildren(frag);
  const pager = document.getElementById("pager"), pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
  const prev = el("button", "", "\u2190 prev"), next = el("button", "", "next \u2192");
  prev.disabled = page === 0; next.disabled = page >= pages - 1;
  prev.addEventListener("click", () => { page--; render(); });
  next.addEventListener("click", () => { page++; render(); });
  pager.replaceChildren(prev, el("span", "", " page " + (page + 1) + " of " + pages + " "), next);
}

async function unpack(b64) {
  const bin = atob(b64), bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}
function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return String(text); }
}
function folded(text, cls) {
  text = text === null || text === undefined ? "" : String(text);
  if (text.length <= FOLD && text.split("\n").length <= 15) return el("div", cls, text);
  const d = el("details", "fold"), s = el("summary", "", text.slice(0, 120).replace(/\s+/g, " ") +
    "\u2026 (" + text.length + " characters)");
  d.append(s, el("div", cls, text));
  return d;
}
function renderMessages(messages) {
  const box = el("div", "conversation"), byUser = new Set();
  messages.forEach(m => { if (m.role === "user" && m.tool_calls) m.tool_calls.forEach(c => byUser.add(c.id)); });
  messages.forEach(m => {
    const device = (m.role === "user" && m.tool_calls) || (m.role === "tool" && byUser.has(m.tool_call_id));
    const kind = {assistant: "agent", user: "user", tool: "tool", system: "system"}[m.role] || "system";
    const div = el("div", "msg " + kind + (device ? " device" : ""));
    div.dataset.role = m.role;
    const label = el("div", "role", m.role === "tool" ? "tool result" + (m.name ? ": " + m.name : "") :
      (m.role === "assistant" ? "agent" : m.role));
    if (device) label.append(el("span", "badge", m.role === "tool" ? "user's device" : "user's own tool call"));
    div.append(label);
    if (m.content !== null && m.content !== undefined && m.content !== "")
      div.append(m.role === "tool" || m.role === "system" ? folded(m.content, "text") : el("div", "text", m.content));
    (m.tool_calls || []).forEach(c => {
      const fn = c.function || {}, call = el("div", "call");
      call.dataset.call = fn.name || "";
      call.append(el("span", "role", "\u2192 call " + (fn.name || "?")), folded(pretty(fn.arguments), "text"));
      div.append(call);
    });
    div.querySelectorAll(".text").forEach(t => t.setAttribute("dir", "auto"));
    box.append(div);
  });
  return box;
}
function renderScore(d) {
  const box = el("div", "score");
  const s = {reward: d.reward, pass: d.reward === null ? null : Math.abs(d.reward - 1) <= 1e-6, error: d.error};
  const head = el("div", "", "reward: ");
  head.append(el("b", rewardClass(s), rewardText(s)));
  if (d.termination) head.append(" \u00b7 termination: " + d.termination);
  box.append(head);
  if (d.error) box.append(el("div", "err", "error: " + d.error));
  const comps = Object.entries(d.components || {});
  if (comps.length) {
    const ul = el("ul", "components");
    comps.forEach(([k, v]) => ul.append(el("li", v === null ? "unknown" : (v >= 1 - 1e-6 ? "pass" : "fail"),
      k + ": " + (v === null ? "not computed (unknown)" : v))));
    box.append(el("div", "role", "components"), ul);
  }
  if (d.why && d.why.length) {
    const ul = el("ul", "why");
    d.why.forEach(line => ul.append(el("li", "", line)));
    box.append(el("div", "role", "why"), ul);
  }
  const info = el("details"), sum = el("summary", "", "scorer info");
  info.append(sum, el("pre", "", JSON.stringify(d.info, null, 2)));
  box.append(info);
  if (d.usage) box.append(el("div", "role", "usage: " + JSON.stringify(d.usage)));
  return box;
}
async function showDetail(i) {
  const r = ROWS[i];
  if (!r) return;
  current = i;
  document.querySelectorAll("tr.sel").forEach(t => t.classList.remove("sel"));
  const tr = document.querySelector('tr[data-row="' + i + '"]');
  if (tr) tr.classList.add("sel");
  const detail = document.getElementById("detail");
  const cols = el("div", "cols");
  detail.replaceChildren(el("h2", "", r.subset + " / " + r.task + " / trial " + r.trial), cols);
  const parts = await Promise.all(r.at.map((at, n) => at === null ? null : unpack(RUNS[n].details[at])));
  if (current !== i) return;
  parts.forEach((d, n) => {
    const col = el("div", "col");
    if (N > 1) col.append(el("h3", "", "AB"[n] + ": " + RUNS[n].label));
    if (d === null) col.append(el("p", "note", "not in this run"));
    else col.append(renderScore(d), renderMessages(d.messages || []));
    cols.append(col);
  });
  detail.dataset.loaded = i;
}
function training() {
  const box = document.getElementById("training");
  RUNS.forEach(run => {
    run.notes.forEach(n => box.append(el("p", "note", n)));
    if (run.curves) {
      const img = el("img", "curves");
      img.alt = "training curves";
      img.src = "data:image/png;base64," + run.curves;
      box.append(img);
    }
  });
}
function fromHash() {
  const m = /^#ep=(\d+)$/.exec(location.hash);
  if (m) showDetail(+m[1]);
}
["f-failed", "f-errored", "f-unknown", "f-flipped", "f-subset"].forEach(id =>
  document.getElementById(id).addEventListener("change", apply));
let timer = null;
document.getElementById("f-task").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(apply, 150); });
window.addEventListener("hashchange", fromHash);
header();
training();
apply();
fromHash();
document.body.dataset.ready = "1";
</script>
</body></html>
"""
