// The sessions page: every session of the journal, newest first, filtered by text and outcome; polled.
"use strict";

const POLL_MS = 2000;
let sessions = [];

function matches(s, text, outcome) {
  if (outcome && outcomeOf(s) !== outcome) return false;
  if (!text) return true;
  const hay = [s.id, s.task || "", s.prompt || "", outcomeOf(s), s.forked_from || ""].join(" ").toLowerCase();
  return text.toLowerCase().split(/\s+/).every((word) => hay.includes(word));
}

function row(s) {
  const tr = el("tr");
  tr.dataset.id = s.id;
  const id = el("td", "id");
  const link = el("a", null, s.id.length > 12 ? s.id.slice(0, 8) + "…" : s.id); // a prefix names it everywhere
  link.title = s.id;
  link.href = `/session/${encodeURIComponent(s.id)}`;
  id.append(link);
  const prompt = el("td", "prompt");
  if (s.forked_from) {
    const fork = el("span", "fork-of", "fork of ");
    const origin = el("a", null, s.forked_from.slice(0, 8));
    origin.title = s.forked_from;
    origin.href = `/session/${encodeURIComponent(s.forked_from)}#seq=${s.forked_at}`;
    fork.append(origin, ` at #${s.forked_at}`);
    prompt.append(fork, " ");
  }
  if (s.task) { // a batch's task: its id, and its final verdict from results.jsonl
    const verdict = s.task_verify === true ? " ✓" : s.task_verify === false ? " ✗" : "";
    prompt.append(el("span", "task", `${s.task}${verdict}`), " ");
  }
  prompt.append(el("span", null, oneLine(s.prompt || "(no prompt yet)", 140)));
  prompt.title = s.prompt || "";
  const outcome = el("td");
  outcome.append(el("span", `badge ${outcomeClass(s)}`, outcomeOf(s)));
  tr.append(id, el("td", "when", when(s.created_at)), prompt, outcome, el("td", "num", s.turns),
            el("td", "num", s.model_calls), el("td", "num", number(s.tokens)), el("td", "num cost", dollars(s.cost_usd)),
            el("td", "num", s.transitions));
  return tr;
}

function render() {
  const text = document.getElementById("filter").value.trim();
  const outcome = document.getElementById("outcome").value;
  const shown = sessions.filter((s) => matches(s, text, outcome));
  document.getElementById("rows").replaceChildren(...shown.map(row));
  document.getElementById("count").textContent = `${shown.length} of ${sessions.length} sessions`;
  const select = document.getElementById("outcome");
  const known = new Set([...select.options].map((o) => o.value));
  for (const value of new Set(sessions.map(outcomeOf))) {
    if (!known.has(value)) select.append(new Option(value, value));
  }
}

async function load() {
  try {
    const data = await getJSON("/api/sessions");
    document.getElementById("journal").textContent = data.journal;
    sessions = data.sessions;
    const empty = document.getElementById("empty");
    empty.hidden = sessions.length > 0;
    empty.textContent = data.exists ? "No sessions in this journal yet." :
      `No sessions yet: ${data.journal} does not exist. Run agentfsm -p PROMPT in this workspace.`;
    render();
  } catch (error) {
    document.getElementById("journal").textContent = `cannot read the journal: ${error.message}`;
  }
}

document.getElementById("filter").addEventListener("input", render);
document.getElementById("outcome").addEventListener("change", render);
load();
setInterval(load, POLL_MS);
