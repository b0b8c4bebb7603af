// The nice-attendre explorer page: plain JavaScript, no build step.
// The URL's #path=0.3.1 (or ?path=0.3.1) names the state: the indices of the events chosen.
// Everything shown comes from the server's JSON API (/api/info, /api/state?path=...).
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const W = 800, H = 280;
let info = null;
let current = null;      // the last /api/state answer
let forward = [];        // indices undone by "back", for "forward"
let loading = 0;

function $(id) { return document.getElementById(id); }

function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function parsePath(text) {
  if (!text) return [];
  return text.split(".").map(Number);
}

function pathFromUrl() {
  const hash = new URLSearchParams(location.hash.replace(/^#/, ""));
  if (hash.has("path")) return hash.get("path");
  const query = new URLSearchParams(location.search);
  if (query.has("path")) return query.get("path");
  return null;
}

function go(path) {
  // Changing the hash adds a history entry; the hashchange listener loads the state.
  const text = path.join(".");
  if (location.hash === "#path=" + text) { load(text); return; }
  location.hash = "path=" + text;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

async function getJson(url) {
  const answer = await fetch(url, {cache: "no-store"});
  const data = await answer.json();
  if (!answer.ok) throw new Error(data.error || answer.statusText);
  return data;
}

async function load(pathText) {
  loading += 1;
  document.body.dataset.state = "loading";
  try {
    const data = await getJson("api/state?path=" + encodeURIComponent(pathText));
    current = data;
    showError("");
    render(data);
    document.body.dataset.path = data.path;
  } catch (err) {
    showError("Cannot show path " + JSON.stringify(pathText) + ": " + err.message);
    document.body.dataset.path = "error";
  } finally {
    loading -= 1;
    if (!loading) document.body.dataset.state = "ready";
  }
}

function render(data) {
  $("where").textContent = data.depth ? `after ${data.depth} event${data.depth > 1 ? "s" : ""}` : "initial state";
  if (data.quiescent) $("where").textContent += " (quiescent)";
  const last = $("last-step");
  last.replaceChildren();
  const step = data.steps[data.steps.length - 1];
  if (step) {
    last.appendChild(el("div", {class: "summary"}, `${step.number}. ${step.lines[0]}`));
    for (const line of step.lines.slice(1)) last.appendChild(el("div", {class: "detail"}, line));
  } else {
    last.appendChild(el("div", {class: "empty"}, "the initial state" +
                        (info.initial_lines.length ? ": " + info.initial_lines.join("; ") : "")));
  }
  renderTopology(data.state);
  renderSwitches(data.state);
  renderHosts(data.state);
  renderApp(data.state);
  renderSteps(data);
  renderEnabled(data);
  renderProperties(data);
  $("trace-text").textContent = data.trace_text.join("\n") || "(no events yet)";
  $("mermaid").textContent = data.mermaid;
  for (const id of data.changed) {
    for (const node of document.querySelectorAll(`[data-part="${CSS.escape(id)}"]`)) node.classList.add("changed");
  }
  $("back").disabled = data.depth === 0;
  $("forward").disabled = forward.length === 0;
}

function place(node) {
  return {x: 60 + node.x * (W - 120), y: 50 + node.y * (H - 90)};
}

function renderTopology(state) {
  const root = $("topology");
  root.replaceChildren();
  const where = {};
  for (const node of info.layout.nodes) where[node.id] = place(node);
  const controller = {x: W / 2, y: 22};
  const switches = Object.fromEntries(state.switches.map(s => [s.id, s]));
  // control channels
  for (const sw of state.switches) {
    const p = where[sw.id];
    const group = svg("g", {class: "channel", id: "channel-" + sw.id});
    group.appendChild(svg("line", {x1: controller.x, y1: controller.y + 10, x2: p.x, y2: p.y - 18}));
    const down = sw.pending.length, up = sw.to_controller.length;
    if (down || up) {
      const mx = (controller.x + p.x) / 2, my = (controller.y + p.y) / 2;
      const label = svg("text", {x: mx + 6, y: my, class: "flight-label"},
                        [down ? `${down}\u2193 cmd` : "", up ? `${up}\u2191 msg` : ""].filter(Boolean).join(" "));
      group.appendChild(label);
    }
    root.appendChild(group);
  }
  root.appendChild(svg("rect", {x: controller.x - 50, y: controller.y - 12, width: 100, height: 22, rx: 4,
                                class: "controller", id: "node-controller"}));
  root.appendChild(svg("text", {x: controller.x, y: controller.y + 4, class: "node-label"}, "controller"));
  // links, with what is in flight towards each end (drawn last, over the nodes)
  const flights = [];
  for (const link of state.links) {
    const a = where[link.a_node], b = where[link.b_node];
    if (!a || !b) continue;
    const group = svg("g", {class: "link" + (link.up ? "" : " down") + (link.vacant ? " vacant" : ""),
                            id: `link-${link.a}-${link.b}`, "data-part": `${link.a}-${link.b}`});
    group.appendChild(svg("line", {x1: a.x, y1: a.y, x2: b.x, y2: b.y}));
    if (!link.up) group.appendChild(svg("text", {x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 8, class: "down-label"}, "down"));
    for (const [packets, from, to, end] of [[link.to_a, b, a, link.a], [link.to_b, a, b, link.b]]) {
      if (!packets.length) continue;
      const x = from.x + 0.6 * (to.x - from.x), y = from.y + 0.6 * (to.y - from.y);
      const dot = svg("g", {class: "in-flight", "data-to": end});
      dot.appendChild(svg("circle", {cx: x, cy: y, r: 7, class: "flight"}));
      dot.appendChild(svg("title", {}, `towards ${end}:\n` + packets.join("\n")));
      const names = packets.map(p => (p.match(/\S+#\d+/) || [p])[0]);
      dot.appendChild(svg("text", {x: x, y: y - 11, class: "flight-label"},
                          names.length > 2 ? `${names.length} packets` : names.join(", ")));
      flights.push(dot);
    }
    root.appendChild(group);
  }
  // nodes
  for (const node of info.layout.nodes) {
    const p = where[node.id];
    const group = svg("g", {id: "node-" + node.id, class: node.kind, "data-part": node.id});
    if (node.kind === "switch") {
      const sw = switches[node.id];
      if (sw && sw.buffered.length) group.classList.add("holding");
      group.appendChild(svg("rect", {x: p.x - 26, y: p.y - 18, width: 52, height: 36, rx: 5}));
      group.appendChild(svg("text", {x: p.x, y: p.y + 5, class: "node-label"}, node.id));
      if (sw) {
        const notes = [`${sw.table.length} entr${sw.table.length === 1 ? "y" : "ies"}`];
        if (sw.buffered.length) notes.push(`holds ${sw.buffered.length}`);
        group.appendChild(svg("text", {x: p.x, y: p.y + 32, class: "node-note"}, notes.join(", ")));
        const tip = [`${node.id}`, "table:", ...sw.table, "buffer:", ...sw.buffered, "pending:", ...sw.pending];
        group.appendChild(svg("title", {}, tip.join("\n")));
      }
    } else {
      group.appendChild(svg("circle", {cx: p.x, cy: p.y, r: 16}));
      group.appendChild(svg("text", {x: p.x, y: p.y + 5, class: "node-label"}, node.id));
    }
    root.appendChild(group);
  }
  for (const dot of flights) root.appendChild(dot);
}

function list(title, items, empty) {
  const box = el("div", {class: "list"});
  box.appendChild(el("h4", {}, title));
  if (!items.length) { box.appendChild(el("div", {class: "empty"}, empty)); return box; }
  const ul = el("ul");
  for (const item of items) ul.appendChild(el("li", {}, item));
  box.appendChild(ul);
  return box;
}

function renderSwitches(state) {
  const root = $("switches");
  root.replaceChildren();
  for (const sw of state.switches) {
    const card = el("div", {class: "card" + (sw.buffered.length ? " holding" : ""), id: "switch-" + sw.id,
                            "data-part": sw.id});
    card.appendChild(el("h3", {}, sw.id));
    card.appendChild(list("flow table", sw.table, "empty"));
    card.appendChild(list("buffer", sw.buffered, "empty"));
    card.appendChild(list("pending commands", sw.pending, "none"));
    card.appendChild(list("messages to the controller", sw.to_controller, "none"));
    root.appendChild(card);
  }
  for (const held of state.held) {
    root.appendChild(list(`held for ${held.switch} until ${held.waiting.join(", ")} answer`, held.messages, ""));
  }
  if (state.alerts.length) root.appendChild(list("alerts", state.alerts, ""));
}

function renderHosts(state) {
  const root = $("hosts");
  root.replaceChildren();
  for (const host of state.hosts) {
    const card = el("div", {class: "card", id: "host-" + host.id, "data-part": host.id});
    card.appendChild(el("h3", {}, `${host.id} at ${host.location}`));
    card.appendChild(list("sent", host.sent, "nothing"));
    card.appendChild(list("received", host.received, "nothing"));
    root.appendChild(card);
  }
  for (const extra of state.in_flight_elsewhere) root.appendChild(list(`in flight at ${extra.at}`, extra.packets, ""));
}

function renderApp(state) {
  const root = $("app");
  root.replaceChildren();
  const app = state.app;
  if (app.fields.length) {
    const table = el("table", {class: "fields"});
    for (const [name, value] of app.fields) {
      const row = el("tr");
      row.appendChild(el("th", {}, name));
      row.appendChild(el("td", {}, value));
      table.appendChild(row);
    }
    root.appendChild(table);
  } else {
    root.appendChild(el("pre", {}, app.text));
  }
  if (app.changes.length) root.appendChild(list("changed by the last step", app.changes, ""));
}

function renderSteps(data) {
  const root = $("steps");
  root.replaceChildren();
  const initial = el("li", {class: "step initial", value: 0}, "initial state");
  if (info.initial_lines.length) initial.title = info.initial_lines.join("\n");
  initial.addEventListener("click", () => { forward = parsePath(data.path).reverse().concat(forward); go([]); });
  root.appendChild(initial);
  const path = parsePath(data.path);
  for (const step of data.steps) {
    const item = el("li", {class: "step", value: step.number, "data-number": step.number});
    item.appendChild(el("div", {class: "summary"}, step.lines[0]));
    for (const line of step.lines.slice(1)) item.appendChild(el("div", {class: "detail"}, line));
    item.addEventListener("click", () => {
      forward = path.slice(step.number).reverse().concat(forward);
      go(path.slice(0, step.number));
    });
    root.appendChild(item);
  }
}

function renderEnabled(data) {
  const root = $("enabled");
  root.replaceChildren();
  if (!data.enabled.length) {
    root.appendChild(el("div", {class: "empty"}, "nothing: the network is quiescent"));
    return;
  }
  const path = parsePath(data.path);
  for (const item of data.enabled) {
    const button = el("button", {class: "event", "data-index": item.index, id: "event-" + item.index,
                                 title: item.lines.join("\n")});
    button.appendChild(el("span", {class: "index"}, String(item.index)));
    button.appendChild(el("span", {}, item.summary));
    button.addEventListener("click", () => {
      if (forward.length && forward[forward.length - 1] === item.index) forward.pop(); else forward = [];
      go(path.concat([item.index]));
    });
    root.appendChild(button);
  }
}

function renderProperties(data) {
  const root = $("properties");
  root.replaceChildren();
  const words = {holds: "holds", violated: "VIOLATED", pending: "checked at quiescence",
                 here: "holds here", "not-here": "not here", execution: "checked on whole executions (verify)"};
  for (const prop of data.properties) {
    const item = el("li", {class: "property " + prop.status, id: "prop-" + prop.name, "data-status": prop.status});
    let text = `${prop.name}: ${words[prop.status] || prop.status}`;
    if (prop.status === "violated") text += prop.step ? ` at step ${prop.step}` : " in the initial state";
    if (prop.status === "pending") text += prop.holds_now ? " (would hold if the network stopped here)"
                                                          : " (would be violated if the network stopped here)";
    item.appendChild(el("div", {class: "name"}, text));
    if (prop.explanation) item.appendChild(el("div", {class: "explanation"}, prop.explanation));
    if (prop.description) item.title = prop.description;
    root.appendChild(item);
  }
}

async function start() {
  try {
    info = await getJson("api/info");
  } catch (err) {
    showError("Cannot reach the explorer: " + err.message);
    return;
  }
  const run = $("run");
  run.textContent = `${info.app} under ${info.protocol} on ${info.topology}; ${info.traffic}`;
  if (info.trace) {
    run.textContent += ` \u2014 saved trace ${info.trace_file || ""} (${info.trace.property})`;
    const button = $("to-trace");
    button.hidden = false;
    button.addEventListener("click", () => { forward = []; go(parsePath(info.trace.path)); });
  }
  $("back").addEventListener("click", () => {
    if (!current || !current.depth) return;
    const path = parsePath(current.path);
    forward.push(path.pop());
    go(path);
  });
  $("forward").addEventListener("click", () => {
    if (!current || !forward.length) return;
    go(parsePath(current.path).concat([forward.pop()]));
  });
  $("restart").addEventListener("click", () => { forward = []; go([]); });
  document.addEventListener("keydown", (event) => {
    if (event.altKey && event.key === "ArrowLeft") { $("back").click(); event.preventDefault(); }
    if (event.altKey && event.key === "ArrowRight") { $("forward").click(); event.preventDefault(); }
  });
  window.addEventListener("hashchange", () => load(pathFromUrl() || ""));
  let first = pathFromUrl();
  if (first === null && info.trace) first = info.trace.path;
  load(first || "");
}

start();
