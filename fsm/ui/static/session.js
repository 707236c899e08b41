// The session page: transcript, timeline and machine diagram of one session, following the journal live.
// Events come from /api/sessions/ID?after=SEQ (polled); every journal string is set with textContent.
"use strict";

const POLL_MS = 400;
const LIVE_SECONDS = 600; // a run not idle that moved this recently is live (a model call may take 600 s)
const FOLD_CHARS = 600;
const FOLD_LINES = 10;
const ENDINGS = new Set(["stopped", "turn_limit", "interrupted"]);
const REFUSALS = new Map([["context_exceeded", "model refused (too long)"], ["compaction_failed", "compaction failed"],
                          ["compaction_blocked", "compaction blocked"]]);

const SID = decodeURIComponent(location.pathname.split("/").pop());
const events = [];
const bySeq = new Map();   // seq -> index in events
const rows = [];           // timeline row per index
const items = new Map();   // seq -> transcript elements made by that transition
const calls = new Map();   // agent + tool_use id -> {box, sub, result}
const containers = new Map(); // agent -> the element its conversation goes into
const agentNames = new Map();
let info = null;
let selected = -1;
let svgRoot = null;

const $ = (id) => document.getElementById(id);

function agentName(agent) {
  if (!agentNames.has(agent)) {
    const root = info ? info.root_agent : agent;
    agentNames.set(agent, agent === root ? "root" : "sub " + agent.slice(root.length).replace(/^\./, ""));
  }
  return agentNames.get(agent);
}

function childClass(e) {
  if (!e.depth) return "d0";
  const n = parseInt(e.agent.split(".").pop(), 10);
  return `d1 c${isNaN(n) ? 0 : (n - 1) % 4}`;
}

// -- the timeline ---------------------------------------------------------------------------------------

function edgeText(e) {
  const span = el("span", "edge");
  span.append(`${e.source} —`, el("b", null, e.trigger), `→ ${e.dest}`);
  return span;
}

function timelineRow(e) {
  const row = el("div", `tl-row ${childClass(e)}`);
  row.dataset.seq = e.seq;
  row.setAttribute("role", "option");
  row.append(el("span", "seq", e.seq), el("span", "who", agentName(e.agent)), edgeText(e),
             el("span", "ms", e.duration_ms >= 1000 ? (e.duration_ms / 1000).toFixed(1) + " s"
                                                    : e.duration_ms.toFixed(e.duration_ms < 10 ? 1 : 0)));
  return row;
}

// -- the transcript -------------------------------------------------------------------------------------

function remember(e, node) {
  node.dataset.seq = e.seq;
  if (!items.has(e.seq)) items.set(e.seq, []);
  items.get(e.seq).push(node);
  return node;
}

function lineCount(text) {
  let lines = 1;
  for (let at = text.indexOf("\n"); at !== -1 && lines <= FOLD_LINES; at = text.indexOf("\n", at + 1)) lines++;
  return lines;
}

function textBlock(text) {
  const lines = lineCount(text);
  if (text.length <= FOLD_CHARS && lines <= FOLD_LINES) return el("pre", "text", text);
  const fold = el("details", "fold");
  const summary = el("summary", null, oneLine(text.slice(0, 400), 160));
  summary.append(el("span", "size", ` ${number(text.length)} chars, ${number(text.split("\n").length)} lines`));
  fold.append(summary);
  fold.addEventListener("toggle", () => fold.append(el("pre", "text", text)), {once: true}); // made when opened
  return fold;
}

function message(e, role, text, cls) {
  const box = el("div", `msg ${cls || role}`);
  box.append(el("div", "role", role), textBlock(text));
  return remember(e, box);
}

function toolCall(e, block, container) {
  const box = el("div", "call");
  const head = el("div", "call-head");
  const mcp = block.name.startsWith("mcp__") ? block.name.slice(5) : null; // mcp__SERVER__TOOL: a server's tool
  const server = mcp === null ? null : mcp.slice(0, mcp.indexOf("__") < 0 ? mcp.length : mcp.indexOf("__"));
  head.append(el("span", "role", server === null ? "tool call" : `MCP call · server ${server}`));
  head.append(el("b", "tool", block.name), el("span", "tool-id", block.id));
  if (server !== null) box.classList.add("mcp");
  box.append(head, textBlock(JSON.stringify(block.input, null, 2)));
  const sub = el("div", "sub-slot");
  const result = el("div", "result pending", "waiting for the result…");
  box.append(sub, result);
  calls.set(e.agent + "\u0000" + block.id, {box, sub, result});
  container.append(remember(e, box));
}

function toolResult(e, container) {
  const call = calls.get(e.agent + "\u0000" + e.call.id);
  const r = e.result;
  const denied = r.denied_by !== null && r.denied_by !== undefined;
  const kind = denied ? "denied" : r.is_error ? "error" : "ok";
  const box = el("div", `result ${kind}`);
  const label = denied ? `permission denied by ${r.denied_by}` : r.is_error ? "error result" : "result";
  if (e.todos) { // a TodoWrite: the list as it now stands, one item a line, marked by status
    const list = el("ul", "todos");
    for (const t of e.todos) list.append(el("li", `todo ${t.status}`, t.status === "in_progress" ? t.activeForm : t.content));
    box.append(el("div", "role", `todo list (${e.todos.length})`), list);
  } else {
    box.append(el("div", "role", label), textBlock(r.text));
  }
  remember(e, box);
  if (!call) return void container.append(box);
  call.result.replaceWith(box);
  call.result = box;
  call.box.classList.add(kind);
}

function spawn(e, container) {
  const call = e.call && calls.get(e.agent + "\u0000" + e.call.id);
  const nest = el("details", `subagent ${childClass({depth: 1, agent: e.child})}`);
  nest.open = true;
  const summary = el("summary", null, `subagent ${e.child}`);
  summary.append(el("span", "size", " its own conversation; only its final answer returns"));
  const body = el("div", "sub-body");
  nest.append(summary, body);
  remember(e, nest);
  containers.set(e.child, body);
  (call ? call.sub : container).append(nest);
}

function addToTranscript(e) {
  let container = containers.get(e.agent);
  if (!container) { // a subagent whose spawn is not in this lineage: show it at the top level
    container = $("transcript");
    containers.set(e.agent, container);
  }
  if (e.prompt !== undefined) {
    container.append(message(e, e.trigger === "continue_forced" ? "user (Stop hook)" : "user", e.prompt, "user"));
  }
  if (e.reply && e.source !== "compacting") { // a summary call's reply shows in its compaction's box
    if (!e.reply.blocks.length) container.append(message(e, "assistant", "(empty reply)", "assistant"));
    for (const block of e.reply.blocks) {
      if (block.type === "text") container.append(message(e, "assistant", block.text, "assistant"));
      else if (block.type === "tool_use") toolCall(e, block, container);
      else container.append(message(e, block.type, JSON.stringify(block, null, 2), "other"));
    }
  }
  if (e.trigger === "model_failed") container.append(message(e, "model error", e.error || "", "error"));
  if (REFUSALS.has(e.trigger) && e.error) container.append(message(e, REFUSALS.get(e.trigger), e.error, "error"));
  if (e.compaction) compaction(e, container);
  if (e.trigger === "subagent_spawned") spawn(e, container);
  if (e.result && e.call) toolResult(e, container);
  const call = e.call && calls.get(e.agent + "\u0000" + e.call.id);
  const notes = call && e.trigger !== "subagent_spawned" ? call.box : container; // a tool's notes go with it
  for (const note of e.notes || []) notes.append(remember(e, el("div", "note", note)));
  if (ENDINGS.has(e.trigger) || (e.trigger === "replied_final" && e.outcome && e.outcome !== "end_turn")) {
    const outcome = e.outcome || "max_turns";
    const text = `${e.trigger}: ${outcome}` + (e.error ? ` (${e.error})` : "");
    container.append(remember(e, el("div", `ending ${outcome === "end_turn" ? "ok" : "bad"}`, text)));
  }
}

// A compaction: where it happened, what it replaced (the agent's transcript above it is marked, or the old tool
// results it cleared), and the summary the model sees from then on. Nothing is removed: the journal keeps it all.
function compaction(e, container) {
  const c = e.compaction;
  const box = el("div", "compaction");
  const head = el("div", "role", `compaction (${c.trigger}) at #${e.seq}`);
  const parts = [`${number(c.pre_tokens)} → ${number(c.post_tokens)} tokens`];
  if (c.summary !== null) parts.push(`a summary replaced ${number(c.replaced)} messages`);
  const some = (n, what) => `${number(n)} ${what}${n === 1 ? "" : "s"}`;
  if (c.cleared.length) parts.push(`${some(c.cleared.length, "old tool result")} cleared`);
  if (c.persisted.length) parts.push(`${some(c.persisted.length, "large result")} persisted`);
  box.append(head, el("div", "what", parts.join(" · ")));
  if (c.summary !== null) box.append(textBlock(c.summary));
  container.append(remember(e, box));
  const mark = (node) => {
    if (node.classList.contains("replaced")) return;
    node.classList.add("replaced");
    node.title = `replaced by the compaction at #${e.seq}; the journal keeps it`;
  };
  if (c.summary !== null) {
    for (const other of events) {
      if (other.seq >= e.seq) break;
      if (other.agent === e.agent) for (const node of items.get(other.seq) || []) mark(node);
    }
  }
  for (const id of [...c.cleared, ...c.persisted]) {
    const call = calls.get(e.agent + "\u0000" + id);
    if (call) mark(call.result);
  }
}

// -- the diagram ----------------------------------------------------------------------------------------

function node(name) {
  return svgRoot && svgRoot.querySelector(`g.node.st_${name}`);
}

// Every agent's state right after events[index], and which are running (the root, its live subagents).
function agentsAt(index) {
  const root = info.root_agent;
  const states = new Map([[root, "idle"]]);
  const running = new Set([root]);
  for (let i = 0; i <= index; i++) {
    const e = events[i];
    states.set(e.agent, e.dest);
    if (e.trigger === "subagent_spawned") { running.add(e.child); states.set(e.child, "idle"); }
    if (e.trigger === "subagent_returned") running.delete(e.child);
    if (e.trigger === "interrupted" && e.agent === root) for (const a of [...running]) if (a !== root) running.delete(a);
  }
  return {states, running};
}

function isLive() {
  if (!info || !events.length) return false;
  const rootState = agentsAt(events.length - 1).states.get(info.root_agent);
  return rootState !== "idle" && Date.now() / 1000 - info.updated_at < LIVE_SECONDS;
}

function highlight(index) {
  if (!svgRoot) return;
  for (const g of svgRoot.querySelectorAll(".current, .also, .last, .live")) {
    g.classList.remove("current", "also", "last", "live");
  }
  const e = events[index];
  const {states, running} = agentsAt(index);
  const prefix = (agent) => (agent === info.root_agent ? "" : "sub_");
  for (const agent of running) {
    const n = node(prefix(agent) + states.get(agent));
    if (n && agent !== e.agent) n.classList.add("also");
  }
  const current = node(prefix(e.agent) + e.dest);
  if (current) {
    current.classList.remove("also");
    current.classList.add("current");
    if (index === events.length - 1 && isLive()) current.classList.add("live");
    requestAnimationFrame(() => reveal(current)); // once the bar below it is filled in and the box has its size
  }
  for (const g of svgRoot.querySelectorAll(`g.edge.tr_${prefix(e.agent)}${e.source}__${e.trigger}`)) {
    g.classList.add("last");
  }
  const chips = [...running].map((agent) => {
    const chip = el("span", `chip ${agent === e.agent ? "me" : ""}`);
    chip.append(el("b", null, agentName(agent)), " " + states.get(agent));
    return chip;
  });
  $("agents").replaceChildren(el("span", "label", "running at this point:"), ...chips);
}

// -- selection ------------------------------------------------------------------------------------------

function select(index, {from = null} = {}) {
  if (index === undefined || index < 0 || index >= events.length) return;
  if (selected >= 0) {
    rows[selected].classList.remove("sel");
    rows[selected].setAttribute("aria-selected", "false");
    for (const node of items.get(events[selected].seq) || []) node.classList.remove("sel");
  }
  selected = index;
  const e = events[index];
  const row = rows[index];
  row.classList.add("sel");
  row.setAttribute("aria-selected", "true");
  if (from !== "timeline") row.scrollIntoView({block: "nearest"});
  const mine = items.get(e.seq) || [];
  for (const node of mine) node.classList.add("sel");
  if (from !== "transcript" && mine.length) mine[0].scrollIntoView({block: "nearest"});
  highlight(index);
  const line = el("span", "sel-line");
  line.append(el("b", null, `#${e.seq}`), ` ${agentName(e.agent)} · turn ${e.turn} · `, edgeText(e));
  $("selected").replaceChildren(line);
  $("fork-cmd").textContent = `agentfsm debug --session ${SID} --at ${e.seq}`;
  $("scrub").value = String(index + 1);
  if (from !== null) history.replaceState(null, "", `#seq=${e.seq}`); // a person's choice goes in the address
}

function seqFromHash() {
  const match = /seq=(\d+)/.exec(location.hash);
  return match ? Number(match[1]) : null;
}

// -- loading and following ------------------------------------------------------------------------------

function renderHeader() {
  document.title = `agentfsm · ${info.id}`;
  $("sid").textContent = info.id;
  const live = isLive();
  const status = $("status");
  status.textContent = live ? "live" : info.outcome || `stopped at ${info.state || "the start"}`;
  status.className = `badge ${live ? "live" : outcomeClass(info)}`;
  status.title = `last transition ${Math.max(0, Math.round(Date.now() / 1000 - info.updated_at))} s ago`;
  $("stats").textContent = `started ${when(info.created_at)} · ${info.turns} turns · ${info.model_calls} model ` +
    `calls · ${number(info.tokens)} tokens · ${info.cost_usd === null ? "cost unknown" : dollars(info.cost_usd)} · ` +
    `${info.transitions} transitions`;
  $("prompt").textContent = oneLine(info.prompt || "(no prompt yet)", 220);
  $("prompt").title = info.prompt || "";
  const origin = $("fork-origin");
  if (info.forked_from && !origin.childElementCount) {
    const link = el("a", null, info.forked_from);
    link.href = `/session/${encodeURIComponent(info.forked_from)}#seq=${info.forked_at}`;
    origin.append(" · fork of ", link, ` at #${info.forked_at}`);
  }
}

function append(batch) {
  const following = selected === events.length - 1;
  const timeline = document.createDocumentFragment();
  for (const e of batch) {
    if (bySeq.has(e.seq)) continue;
    const index = events.length;
    events.push(e);
    bySeq.set(e.seq, index);
    const row = timelineRow(e);
    rows.push(row);
    timeline.append(row);
    addToTranscript(e);
  }
  $("timeline").append(timeline);
  $("scrub").max = String(Math.max(1, events.length));
  return following;
}

async function poll() {
  try {
    const last = events.length ? events[events.length - 1].seq : 0;
    const data = await getJSON(`/api/sessions/${encodeURIComponent(SID)}?after=${last}`);
    info = data.session;
    const following = append(data.events);
    renderHeader();
    if (following && data.events.length) select(events.length - 1);
    else if (selected >= 0 && selected === events.length - 1) highlight(selected); // the glow may end
  } catch (error) {
    $("status").textContent = error.message;
    $("status").className = "badge bad";
  }
}

async function loadDiagram(loading) {
  const response = await loading;
  if (!response.ok) {
    const body = await response.json().catch(() => ({error: response.statusText}));
    $("diagram").replaceChildren(el("p", "empty", `No diagram: ${body.error}`));
    return;
  }
  // The SVG comes from this server, drawn from the machine's table: no journal text is in it.
  $("diagram").innerHTML = await response.text();
  svgRoot = $("diagram").querySelector("svg");
  sizeDiagram();
}

// The diagram fits its box, but never so small that its smallest label is under LEGIBLE_PX: below that width
// the box scrolls (and follows the selected state) instead.
const LEGIBLE_PX = 11.5;

function sizeDiagram() {
  const box = svgRoot && svgRoot.viewBox.baseVal;
  if (!box || !box.width || !box.height) return;
  const sizes = [...svgRoot.querySelectorAll("text")].map((t) => parseFloat(t.getAttribute("font-size")) || 14);
  const smallest = Math.min(14, ...sizes);
  $("diagram").style.setProperty("--ratio", box.width / box.height);
  $("diagram").style.setProperty("--legible", `${Math.ceil((box.width * LEGIBLE_PX) / smallest)}px`);
}

// Scroll the diagram's box (only it, never the page) so that *g* is in view.
function reveal(g) {
  const box = $("diagram");
  const r = g.getBoundingClientRect();
  const b = box.getBoundingClientRect();
  if (r.left < b.left || r.right > b.right) box.scrollLeft += (r.left + r.right) / 2 - (b.left + b.right) / 2;
  if (r.top < b.top || r.bottom > b.bottom) box.scrollTop += (r.top + r.bottom) / 2 - (b.top + b.bottom) / 2;
}

async function start() {
  const diagram = fetch("/api/diagram.svg", {cache: "no-store"}); // both requests at once
  const session = getJSON(`/api/sessions/${encodeURIComponent(SID)}?after=0`);
  session.catch(() => {}); // its error is reported below, once the diagram is in
  await loadDiagram(diagram);
  try {
    const data = await session;
    info = data.session;
    containers.set(info.root_agent, $("transcript"));
    append(data.events);
    renderHeader();
  } catch (error) {
    $("status").textContent = error.message;
    $("status").className = "badge bad";
    return;
  }
  const wanted = seqFromHash();
  select(wanted !== null && bySeq.has(wanted) ? bySeq.get(wanted) : events.length - 1);
  // "Open": everything drawn, in the frame after the first selection (the benchmark reads this mark).
  requestAnimationFrame(() => setTimeout(() => performance.mark("agentfsm:open"), 0));
  setInterval(poll, POLL_MS);
}

// One listener per panel: the innermost element with a seq is what was clicked.
$("timeline").addEventListener("click", (event) => {
  const row = event.target.closest(".tl-row");
  if (row) select(bySeq.get(Number(row.dataset.seq)), {from: "timeline"});
});
$("transcript").addEventListener("click", (event) => {
  if (event.target.closest("summary")) return; // folding is not selecting
  const item = event.target.closest("[data-seq]");
  if (item) select(bySeq.get(Number(item.dataset.seq)), {from: "transcript"});
});
$("timeline").addEventListener("mouseover", (event) => { // the full edge, for a row cut short
  const row = event.target.closest(".tl-row");
  if (row && !row.title) row.title = row.querySelector(".edge").textContent;
});
$("timeline").addEventListener("keydown", (event) => {
  const step = {ArrowDown: 1, j: 1, ArrowUp: -1, k: -1, PageDown: 20, PageUp: -20}[event.key];
  const keys = {from: "keys"};
  if (step !== undefined) select(Math.min(events.length - 1, Math.max(0, selected + step)), keys);
  else if (event.key === "Home") select(0, keys);
  else if (event.key === "End") select(events.length - 1, keys);
  else return;
  event.preventDefault();
});
$("scrub").addEventListener("input", () => select(Number($("scrub").value) - 1, {from: "scrub"}));
$("copy").addEventListener("click", async () => {
  const text = $("fork-cmd").textContent;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const range = document.createRange();
    range.selectNodeContents($("fork-cmd"));
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    document.execCommand("copy");
  }
  $("copy").textContent = "Copied";
  setTimeout(() => { $("copy").textContent = "Copy"; }, 1500);
});
$("zoom").addEventListener("click", () => {
  const zoomed = document.querySelector(".right").classList.toggle("zoom");
  $("zoom").textContent = zoomed ? "Shrink" : "Enlarge";
});
addEventListener("hashchange", () => {
  const wanted = seqFromHash();
  if (wanted !== null && bySeq.has(wanted) && bySeq.get(wanted) !== selected) select(bySeq.get(wanted));
});
start();
