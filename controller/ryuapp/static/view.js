// dcfabric live view: draws the model's layout once (/view/layout) and
// polls the controller's state (/view/state) twice a second.
'use strict';
const SVG_NS = 'http://www.w3.org/2000/svg';
const POLL_MS = 500;
const EVENTS_SHOWN = 40;
const svg = document.getElementById('fabric');
let nextEvent = 0;

function element(name, attributes, parent) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  parent.appendChild(node);
  return node;
}

function rate(bps) {
  if (bps === null) return 'n/a';
  if (bps >= 1e6) return (bps / 1e6).toFixed(1) + ' Mbit/s';
  return (bps / 1e3).toFixed(1) + ' kbit/s';
}

function draw(layout) {
  document.getElementById('title').textContent = 'dcfabric: ' + layout.name;
  svg.setAttribute('viewBox', `0 0 ${layout.width} ${layout.height}`);
  const at = {};
  for (const node of layout.nodes) at[node.name] = node;
  const links = element('g', {id: 'links'}, svg);
  for (const link of layout.links) {
    const a = at[link.a], b = at[link.b];
    const line = element('line', {id: 'link-' + link.id, class: 'link unknown', 'data-state': 'unknown',
      x1: a.x, y1: a.y, x2: b.x, y2: b.y, 'stroke-width': 1.5}, links);
    element('title', {}, line).textContent = `${link.a}:${link.port_a} - ${link.b}:${link.port_b}`;
  }
  const nodes = element('g', {id: 'nodes'}, svg);
  const labelled = layout.nodes.filter(n => n.switch).length <= 100;
  for (const node of layout.nodes) {
    const group = element('g', {id: 'node-' + node.name, class: `node ${node.switch ? 'switch' : 'host'} role-${node.role}`,
      'data-name': node.name}, nodes);
    element('circle', {cx: node.x, cy: node.y, r: node.switch ? 9 : 3}, group);
    element('title', {}, group).textContent = `${node.name} (${node.role})`;
    if (node.switch && labelled) element('text', {x: node.x, y: node.y - 12}, group).textContent = node.name;
  }
}

function update(state) {
  const connected = new Set(state.connected);
  for (const group of svg.querySelectorAll('.switch'))
    group.classList.toggle('connected', connected.has(group.dataset.name));
  const shielded = new Set(state.shielded);
  for (const group of svg.querySelectorAll('.switch'))
    group.classList.toggle('shielded', shielded.has(group.dataset.name));
  const avoided = new Set(state.avoided);
  const reserved = new Set(state.reserved.map(r => r.link));
  for (const da of state.da_links) da.links.forEach(id => reserved.add(id));
  const loads = state.links.map(l => Math.max(l.a_to_b_bps || 0, l.b_to_a_bps || 0));
  const scale = Math.max(1e5, ...loads);  // auto scale; 100 kbit/s floor keeps idle links thin
  state.links.forEach((link, i) => {
    const line = document.getElementById('link-' + link.id);
    line.setAttribute('class', `link ${link.state}` + (avoided.has(link.id) ? ' avoided' : '')
      + (reserved.has(link.id) && link.state === 'up' ? ' reserved' : ''));
    line.dataset.state = link.state;
    line.dataset.avoided = avoided.has(link.id);
    line.setAttribute('stroke-width', (1.5 + 6 * loads[i] / scale).toFixed(2));
    line.firstChild.textContent = line.firstChild.textContent.split('\n')[0]
      + `\n${link.state}; ${rate(link.a_to_b_bps)} / ${rate(link.b_to_a_bps)}`;
  });
  const busiest = state.links.map((l, i) => [loads[i], l]).filter(p => p[0] > 0)
    .sort((p, q) => q[0] - p[0]).slice(0, 8);
  document.getElementById('busiest').replaceChildren(...busiest.map(([load, link]) => {
    const item = document.createElement('li');
    item.textContent = `${link.id}: ${rate(load)}`;
    return item;
  }));
  const overlay = [
    ...state.reserved.map(r => `reserved ${r.from}->${r.to}: ${r.label}`),
    ...state.da_links.map(d => `DA link ${d.source} -> ${d.destination} via ${d.spine}`),
    ...state.shielded.map(s => `shielded leaf ${s}`),
    ...state.avoided.map(a => `avoided ${a}`)];
  document.getElementById('overlay').replaceChildren(...overlay.map(text => {
    const item = document.createElement('li');
    item.textContent = text;
    return item;
  }));
  document.getElementById('confirmation').textContent = state.unconfirmed.length
    ? `${state.unconfirmed.length} switches not confirmed: ${state.unconfirmed.slice(0, 8).join(' ')}`
    : 'every switch confirmed its tables';
  document.getElementById('errors').replaceChildren(...state.openflow_errors.slice().reverse().map(error => {
    const item = document.createElement('li');
    item.textContent = `${new Date(error.time * 1000).toISOString().substring(11, 23)} ${error.switch} `
      + `xid ${error.xid} ${error.error}: ${error.message || '(not a table change)'}`;
    return item;
  }));
  const log = document.getElementById('events');
  for (const event of state.events) {
    const item = document.createElement('li');
    item.className = 'event-' + event.kind;
    item.textContent = `${new Date(event.time * 1000).toISOString().substring(11, 23)} ${event.text}`;
    log.prepend(item);
    nextEvent = event.seq + 1;
  }
  while (log.children.length > EVENTS_SHOWN) log.lastChild.remove();
  document.getElementById('status').textContent =
    `${connected.size} switches connected, ${state.failed_links} failed links, `
    + `${state.outstanding_errors} OpenFlow errors outstanding, `
    + `updated ${new Date(state.time * 1000).toISOString().substring(11, 19)} UTC`;
}

async function poll() {
  try {
    const reply = await fetch('/view/state?since=' + nextEvent);
    if (!reply.ok) throw new Error((await reply.json()).error);
    update(await reply.json());
  } catch (error) {
    document.getElementById('status').textContent = 'controller not answering: ' + error.message;
  }
  setTimeout(poll, POLL_MS);
}

// the layout is fetched until the controller answers: a busy controller's
// first answer can fail, and the page would otherwise stay empty
async function start() {
  for (;;) {
    try {
      const reply = await fetch('/view/layout');
      if (!reply.ok) throw new Error((await reply.json()).error);
      draw(await reply.json());
      break;
    } catch (error) {
      document.getElementById('status').textContent = 'controller not answering: ' + error.message;
      await new Promise(resolve => setTimeout(resolve, POLL_MS));
    }
  }
  poll();
}

start();
