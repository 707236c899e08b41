// Helpers shared by both pages. Every string from a journal goes through el(), i.e. textContent.
"use strict";

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

async function getJSON(url) {
  const response = await fetch(url, {cache: "no-store"});
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function when(seconds) {
  const d = new Date(seconds * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function number(n) {
  return Number(n || 0).toLocaleString("en-US");
}

function oneLine(text, limit) {
  const flat = String(text || "").split(/\s+/).join(" ").trim();
  return flat.length <= limit ? flat : flat.slice(0, limit - 1) + "…";
}

// What a session's outcome cell says: the outcome, or "(state)" for a run that stopped (or is) midway.
function outcomeOf(session) {
  if (session.outcome) return session.outcome;
  return session.state ? `(${session.state})` : "(no transitions)";
}

function outcomeClass(session) {
  if (session.outcome === "end_turn") return "ok";
  if (session.outcome) return "bad";
  return "open";
}

// A session's cost in dollars, or a dash when the journal cannot tell (no model recorded, or no known price).
function dollars(usd) {
  if (usd === null || usd === undefined) return "—";
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}
