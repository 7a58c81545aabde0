// toolcanon report: draws the page from the data inlined above it, with the inlined Chart.js.
// Nothing is fetched. Every text from the data goes in through textContent, never as HTML: tool
// names, models and session ids come from agent logs.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var charts = [];

  // ---- formatting ----------------------------------------------------------------------------
  var intFmt = new Intl.NumberFormat('en-US');
  var compactFmt = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
  function num(v) { return v === null || v === undefined || v === '' ? 0 : Number(v); }
  function fmtInt(v) { return intFmt.format(num(v)); }
  function fmtCompact(v) { return compactFmt.format(num(v)); }
  function fmtUsd(v) {
    var n = num(v);
    var digits = n !== 0 && Math.abs(n) < 0.1 ? 4 : 2;
    return '$' + n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }
  function fmtPct(v) { return (num(v) * 100).toLocaleString('en-US', { maximumFractionDigits: 1 }) + '%'; }
  function fmtDuration(s) {
    s = num(s);
    if (s < 60) return s + ' s';
    if (s < 3600) return Math.round(s / 60) + ' min';
    return (s / 3600).toLocaleString('en-US', { maximumFractionDigits: 1 }) + ' h';
  }
  /** "unknown_price:grok-4=5 above_price_limit:x=2" as words. */
  function describeFlags(flags) {
    return String(flags || '').split(' ').filter(Boolean).map(function (f) {
      var m = /^([a-z_]+)(?::(.*))?=(\d+)$/.exec(f);
      if (!m) return f;
      var what = m[1] === 'unknown_price' ? 'no price for ' + m[2] : m[1] === 'above_price_limit' ? m[2] + ' above its priced prompt size' : 'no model named';
      return what + ' (' + fmtInt(m[3]) + ' request' + (m[3] === '1' ? '' : 's') + ')';
    }).join('; ');
  }

  // ---- DOM helpers ---------------------------------------------------------------------------
  function el(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === 'text') e.textContent = attrs[k];
      else if (k === 'className') e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    for (var i = 2; i < arguments.length; i++) if (arguments[i] != null) e.appendChild(typeof arguments[i] === 'string' ? document.createTextNode(arguments[i]) : arguments[i]);
    return e;
  }
  function empty(plot, message) {
    plot.textContent = '';
    plot.appendChild(el('div', { className: 'empty', 'data-empty': 'true', text: message }));
  }

  // ---- colours (re-read when the scheme changes) --------------------------------------------
  function cssVar(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }
  function colour(i) { return cssVar('--s' + (i % 10)); }
  function applyChartDefaults() {
    Chart.defaults.animation = false;
    Chart.defaults.responsive = true;
    Chart.defaults.maintainAspectRatio = false;
    Chart.defaults.color = cssVar('--muted');
    Chart.defaults.borderColor = cssVar('--grid');
    Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
    Chart.defaults.plugins.legend.labels.boxWidth = 12;
    Chart.defaults.plugins.legend.labels.boxHeight = 12;
  }

  /** A chart in the figure named `name`, or its empty state when `config` is null. */
  function draw(name, build, emptyMessage) {
    var figure = document.querySelector('[data-chart="' + name + '"]');
    var plot = figure.querySelector('.plot');
    var config = build();
    if (!config) { empty(plot, emptyMessage); return; }
    plot.textContent = '';
    var canvas = el('canvas', { role: 'img', 'aria-label': figure.querySelector('figcaption b').textContent });
    plot.appendChild(canvas);
    charts.push(new Chart(canvas, config));
  }

  function stackedBars(labels, series, valueFormat, horizontal, alwaysLegend) {
    return {
      type: 'bar',
      data: { labels: labels, datasets: series.map(function (s, i) { return { label: s.label, data: s.data, backgroundColor: s.colour || colour(i), borderWidth: 0, maxBarThickness: 48 }; }) },
      options: {
        indexAxis: horizontal ? 'y' : 'x',
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: { stacked: true, ticks: horizontal ? { callback: function (v) { return valueFormat(v); } } : { autoSkip: true, maxRotation: 0 }, grid: { display: !!horizontal } },
          y: { stacked: true, ticks: horizontal ? { autoSkip: false } : { callback: function (v) { return valueFormat(v); } }, grid: { display: !horizontal } },
        },
        plugins: {
          legend: { display: alwaysLegend || series.length > 1, position: 'bottom' },
          tooltip: { callbacks: { label: function (c) { return c.dataset.label + ': ' + valueFormat(horizontal ? c.parsed.x : c.parsed.y); } } },
        },
      },
    };
  }

  // ---- headline --------------------------------------------------------------------------------
  function metric(label, valueNode, detail, wide) {
    return el('div', { className: 'card metric' + (wide ? ' wide' : '') }, el('div', { className: 'label', text: label }), valueNode, detail ? el('div', { className: 'detail' }, detail) : null);
  }
  function figure(name, value, text) {
    return el('span', { 'data-metric': name, 'data-value': String(value === null ? '' : value), text: text });
  }
  function renderHeadline() {
    var h = data.headline;
    var box = document.getElementById('headline');
    box.appendChild(metric('Sessions', el('div', { className: 'value' }, figure('sessions', h.sessions, fmtInt(h.sessions))), fmtInt(h.requests) + ' model requests'));
    box.appendChild(metric('Tool calls', el('div', { className: 'value' }, figure('tool_calls', h.tool_calls, fmtInt(h.tool_calls))),
      el('span', {}, figure('errors', h.errors, fmtInt(h.errors)), ' errors (' + fmtPct(h.tool_calls ? h.errors / h.tool_calls : 0) + ')')));
    var kinds = [['input_tokens', 'input'], ['cache_read_tokens', 'cache read'], ['cache_write_tokens', 'cache write'], ['output_tokens', 'output'], ['reasoning_tokens', 'reasoning']];
    var tokenList = el('div', { className: 'value kinds' });
    // The kinds overlap differently per harness (Codex's input includes its cache reads): the big
    // figure is each request's input with cache plus output with reasoning, counted once.
    var total = data.usage.reduce(function (n, r) { return n + num(r.tokens); }, 0);
    var detail = el('span', {});
    kinds.forEach(function (k, i) {
      if (i) detail.appendChild(document.createTextNode(' · '));
      detail.appendChild(figure(k[0], h[k[0]], fmtCompact(h[k[0]])));
      detail.appendChild(document.createTextNode(' ' + k[1]));
    });
    tokenList.textContent = fmtCompact(total);
    var tokensCard = metric('Tokens', tokenList, detail);
    tokensCard.title = 'The kinds as each harness reports them (Codex input includes its cache reads); the total counts each token once.';
    box.appendChild(tokensCard);
    var cost = h.cost_usd === null
      ? el('div', { className: 'value unknown' }, figure('cost_usd', null, num(h.cost_known_usd) > 0 ? '≥ ' + fmtUsd(h.cost_known_usd) : 'unknown'))
      : el('div', { className: 'value' }, figure('cost_usd', h.cost_usd, fmtUsd(h.cost_usd)));
    box.appendChild(metric('Cost', cost, h.cost_usd === null ? (num(h.cost_known_usd) > 0 ? 'partly unknown: see below' : 'no price known: see below') : 'at list prices'));
    box.appendChild(metric('Breaches', el('div', { className: 'value' }, figure('breaches', h.breaches, fmtInt(h.breaches))), 'context threshold crossings'));
    box.appendChild(metric('Dead letters', el('div', { className: 'value' }, figure('dead_letters', h.dead_letters, fmtInt(h.dead_letters))), 'events kept but not analysed'));
    if (h.cost_flags) {
      var note = document.getElementById('cost-note');
      note.hidden = false;
      note.textContent = (num(h.cost_known_usd) > 0 ? 'Cost unknown for part of the usage: ' : 'Cost unknown: ') + describeFlags(h.cost_flags) + '. ' +
        (num(h.cost_known_usd) > 0 ? 'The known part is ' + fmtUsd(h.cost_known_usd) + '. ' : '') +
        'Unknown is never counted as zero; add the missing prices with --prices FILE.';
    }
  }

  // ---- usage and cost per day ---------------------------------------------------------------
  /** The days with observed usage, and every day between the first and the last. */
  function days() {
    var seen = {};
    data.usage.forEach(function (r) { if (num(r.requests) > 0) seen[r.day] = true; });
    var list = Object.keys(seen).sort();
    if (list.length < 2) return list;
    // Every day between the first and the last, so gaps show as gaps (up to a year).
    var out = [];
    var t = Date.parse(list[0] + 'T00:00:00Z');
    var end = Date.parse(list[list.length - 1] + 'T00:00:00Z');
    if ((end - t) / 86400000 > 366) return list;
    for (; t <= end; t += 86400000) out.push(new Date(t).toISOString().slice(0, 10));
    return out;
  }
  function seriesByDay(value) {
    var labels = days();
    var index = {};
    labels.forEach(function (d, i) { index[d] = i; });
    var by = {};
    data.usage.forEach(function (r) {
      var v = value(r);
      if (v === null || v === 0 || index[r.day] === undefined) return;
      var key = r.harness + ' · ' + (r.model || '(no model)');
      if (!by[key]) by[key] = { label: key, data: labels.map(function () { return 0; }), total: 0 };
      by[key].data[index[r.day]] += v;
      by[key].total += v;
    });
    var series = Object.keys(by).map(function (k) { return by[k]; }).sort(function (a, b) { return b.total - a.total; });
    if (series.length > 9) {
      var rest = { label: 'other', data: labels.map(function () { return 0; }), colour: colour(7) };
      series.slice(8).forEach(function (s) { s.data.forEach(function (v, i) { rest.data[i] += v; }); });
      series = series.slice(0, 8).concat([rest]);
    }
    return { labels: labels, series: series };
  }
  function renderSpend() {
    draw('tokens-per-day', function () {
      var s = seriesByDay(function (r) { return num(r.tokens); });
      return s.series.length ? stackedBars(s.labels, s.series, fmtCompact, false, true) : null;
    }, 'No observed usage in this scope.');
    draw('cost-per-day', function () {
      var s = seriesByDay(function (r) { return r.cost_usd === null ? null : num(r.cost_usd); });
      return s.series.length ? stackedBars(s.labels, s.series, fmtUsd, false, true) : null;
    }, data.headline.cost_flags ? 'No priced usage: ' + describeFlags(data.headline.cost_flags) + '.' : 'No observed usage in this scope.');
  }

  // ---- tools ----------------------------------------------------------------------------------
  function sumBy(rows, key, value) {
    var out = {};
    rows.forEach(function (r) { out[key(r)] = (out[key(r)] || 0) + value(r); });
    return out;
  }
  function renderTools() {
    var tools = data.tools;
    draw('namespace-kind', function () {
      if (!tools.length) return null;
      var perNs = sumBy(tools, function (r) { return r.namespace; }, function (r) { return num(r.calls); });
      var namespaces = Object.keys(perNs).sort(function (a, b) { return perNs[b] - perNs[a]; });
      var perKind = sumBy(tools, function (r) { return r.kind; }, function (r) { return num(r.calls); });
      var kinds = Object.keys(perKind).sort(function (a, b) { return perKind[b] - perKind[a]; });
      var series = kinds.map(function (k) {
        return { label: k, data: namespaces.map(function (ns) { return tools.filter(function (r) { return r.namespace === ns && r.kind === k; }).reduce(function (n, r) { return n + num(r.calls); }, 0); }) };
      });
      return stackedBars(namespaces, series, fmtInt, true);
    }, 'No tool calls in this scope.');
    draw('top-tools', function () {
      if (!tools.length) return null;
      var top = tools.slice().sort(function (a, b) { return num(b.calls) - num(a.calls); }).slice(0, 15);
      var labels = top.map(function (r) { return r.tool_name + ' (' + r.namespace + ')'; });
      return stackedBars(labels, [
        { label: 'succeeded', data: top.map(function (r) { return num(r.calls) - num(r.errors); }), colour: cssVar('--s0') },
        { label: 'failed', data: top.map(function (r) { return num(r.errors); }), colour: cssVar('--s9') },
      ], fmtInt, true);
    }, 'No tool calls in this scope.');
    draw('error-share', function () {
      if (!tools.length) return null;
      var calls = sumBy(tools, function (r) { return r.namespace; }, function (r) { return num(r.calls); });
      var errors = sumBy(tools, function (r) { return r.namespace; }, function (r) { return num(r.errors); });
      var namespaces = Object.keys(calls).sort(function (a, b) { return errors[b] / calls[b] - errors[a] / calls[a] || calls[b] - calls[a]; });
      var config = stackedBars(namespaces, [{ label: 'error share', data: namespaces.map(function (ns) { return errors[ns] / calls[ns]; }), colour: cssVar('--s9') }], fmtPct, true);
      config.options.plugins.tooltip.callbacks.label = function (c) { var ns = namespaces[c.dataIndex]; return fmtPct(c.parsed.x) + ' (' + fmtInt(errors[ns]) + ' of ' + fmtInt(calls[ns]) + ')'; };
      return config;
    }, 'No tool calls in this scope.');
    draw('mcp-servers', function () {
      var servers = data.mcp.filter(function (r) { return num(r.calls) > 0; }).sort(function (a, b) { return num(b.calls) - num(a.calls); }).slice(0, 15);
      if (!servers.length) return null;
      return stackedBars(servers.map(function (r) { return r.server; }), [
        { label: 'succeeded', data: servers.map(function (r) { return Math.round(num(r.calls) * (1 - num(r.error_share))); }), colour: cssVar('--s4') },
        { label: 'failed', data: servers.map(function (r) { return num(r.calls) - Math.round(num(r.calls) * (1 - num(r.error_share))); }), colour: cssVar('--s9') },
      ], fmtInt, true);
    }, 'No MCP tool calls in this scope.');
    renderMcpTable();
    draw('discovery', function () {
      var d = data.discovery;
      if (!d.length) return null;
      var total = function (k) { return d.reduce(function (n, r) { return n + num(r[k]); }, 0); };
      var afterSearch = d.reduce(function (n, r) { return n + Math.round(num(r.mcp_calls) * num(r.share_after_search)); }, 0);
      var steps = [['turns with a tool call', total('turns')], ['turns that searched', total('turns_searching')], ['MCP calls', total('mcp_calls')],
        ['MCP calls after a search listed the tool', afterSearch], ['not-in-active-set refusals', total('not_in_active_set')], ['recovered after a refusal', total('recovered')]];
      return stackedBars(steps.map(function (s) { return s[0]; }), [{ label: 'count', data: steps.map(function (s) { return s[1]; }), colour: cssVar('--s3') }], fmtInt, true);
    }, 'No tool calls in this scope.');
  }
  function renderMcpTable() {
    var card = document.getElementById('mcp-table-card');
    // Servers seen only in tool calls have no lifecycle to show: the chart above has them.
    var rows = data.mcp.filter(function (r) { return r.state !== null && r.state !== undefined && r.state !== ''; });
    if (!rows.length) { card.hidden = true; return; }
    var cols = [['server', 'server'], ['state', 'state'], ['since', 'since'], ['connected_share', 'connected', 'pct'], ['reconnects', 'reconnects', 'int'], ['flapping_since', 'flapping since'],
      ['restarts', 'restarts', 'int'], ['restart_flags', 'restart flags'], ['model_visible', 'tools visible', 'int'], ['search_only', 'search only', 'int'], ['calls', 'calls', 'int'], ['error_share', 'errors', 'pct']];
    fillTable(document.getElementById('mcp-table'), cols, rows, false);
  }

  // ---- context per session --------------------------------------------------------------------
  function renderContext() {
    var box = document.getElementById('context');
    if (!data.context.length) { box.appendChild(el('div', { className: 'card' }, el('div', { className: 'empty', 'data-empty': 'true', text: 'No context figures in this scope (no usage and no tool output estimates).' }))); return; }
    data.context.forEach(function (s, i) {
      var name = 'context-' + i;
      var title = s.harness + ' · ' + (s.model || '(no model)');
      var sub = 'session ' + s.session_id.slice(0, 12) + (s.agent_id ? ' / ' + s.agent_id.slice(0, 10) : '') + ' · window ' + fmtCompact(s.window) + ', threshold ' + s.threshold_pct + '%' +
        (s.headroom_tokens ? ' − ' + fmtCompact(s.headroom_tokens) : '') + ' · peak ' + fmtPct(s.points.reduce(function (m, p) { return Math.max(m, p[1]); }, 0) / s.window) +
        ' of the window · ' + s.breaches + ' breach' + (s.breaches === 1 ? '' : 'es');
      box.appendChild(el('figure', { className: 'card chart', 'data-chart': name }, el('figcaption', {}, el('b', { text: title }), el('span', { text: sub, title: s.session_id })), el('div', { className: 'plot small' })));
      draw(name, function () {
        var t0 = s.points[0][0];
        var peak = s.points.reduce(function (m, p) { return Math.max(m, p[1]); }, 0);
        // A session far below its threshold is drawn at its own scale (a flat line says nothing);
        // the threshold is then named in the caption instead.
        var showThreshold = peak >= s.threshold_tokens * 0.25;
        var minutes = function (t) { return (t - t0) / 60000; };
        var last = minutes(s.points[s.points.length - 1][0]);
        return {
          type: 'line',
          data: {
            datasets: [
              { label: 'context tokens', data: s.points.map(function (p) { return { x: minutes(p[0]), y: p[1] }; }), borderColor: colour(0), backgroundColor: colour(0), pointRadius: s.points.length > 60 ? 0 : 2, borderWidth: 2, stepped: false, tension: 0 },
              { label: 'threshold', hidden: !showThreshold, data: [{ x: 0, y: s.threshold_tokens }, { x: Math.max(last, 0.001), y: s.threshold_tokens }], borderColor: colour(9), borderDash: [6, 4], borderWidth: 1.5, pointRadius: 0 },
              { label: 'breach', type: 'scatter', data: s.breach_points.map(function (p) { return { x: minutes(p[0]), y: p[1] }; }), borderColor: colour(9), backgroundColor: colour(9), pointRadius: 5, pointHoverRadius: 6 },
            ],
          },
          options: {
            parsing: false,
            interaction: { mode: 'nearest', intersect: false },
            scales: {
              x: { type: 'linear', min: 0, title: { display: true, text: 'minutes since the session started' }, ticks: { maxTicksLimit: 6 } },
              y: { beginAtZero: true, suggestedMax: showThreshold ? s.threshold_tokens * 1.1 : peak * 1.3, ticks: { callback: function (v) { return fmtCompact(v); }, maxTicksLimit: 5 } },
            },
            plugins: {
              legend: { display: i === 0, position: 'bottom' },
              tooltip: { callbacks: { label: function (c) { return c.dataset.label + ': ' + fmtInt(c.parsed.y) + ' (' + fmtPct(c.parsed.y / s.window) + ' of the window)'; } } },
            },
          },
        };
      }, '');
    });
  }

  // ---- drift ------------------------------------------------------------------------------------
  function renderDrift() {
    var est = sumBy(data.drift, function (r) { return r.content_class; }, function (r) { return num(r.estimated_tokens); });
    var obs = sumBy(data.drift, function (r) { return r.content_class; }, function (r) { return num(r.observed_tokens); });
    var classes = Object.keys(est).sort();
    document.getElementById('drift-ratios').textContent = classes.length
      ? 'ratio estimate / observed: ' + classes.map(function (c) { return c + ' ' + (obs[c] ? (est[c] / obs[c]).toFixed(2) : '–'); }).join(', ')
      : '';
    draw('drift', function () {
      if (!classes.length) return null;
      var config = stackedBars(classes, [
        { label: 'estimated (bytes/4)', data: classes.map(function (c) { return est[c]; }), colour: colour(1) },
        { label: 'observed', data: classes.map(function (c) { return obs[c]; }), colour: colour(0) },
      ], fmtCompact, false);
      config.options.scales.x.stacked = false;
      config.options.scales.y.stacked = false;
      return config;
    }, 'No drift intervals in this scope (they need two observed requests with tool outputs between them).');
  }

  // ---- tables -----------------------------------------------------------------------------------
  /** cols: [key, header, type?]; type int | pct | usd | duration | id | text. */
  function fillTable(table, cols, rows, sortable) {
    table.textContent = '';
    var head = el('tr');
    cols.forEach(function (c, i) {
      var numeric = c[2] && c[2] !== 'id' && c[2] !== 'text' && c[2] !== 'time';
      var th = el('th', { scope: 'col', className: numeric ? 'num' : '', 'data-key': c[0] });
      if (sortable) {
        var button = el('button', { type: 'button', text: c[1] });
        button.addEventListener('click', function () { sortTable(table, i, numeric, th); });
        th.appendChild(button);
      } else th.textContent = c[1];
      head.appendChild(th);
    });
    table.appendChild(el('thead', {}, head));
    var body = el('tbody');
    rows.forEach(function (r) {
      var tr = el('tr');
      cols.forEach(function (c) {
        var v = typeof c[3] === 'function' ? c[3](r) : r[c[0]];
        var type = c[2];
        var text = v === null || v === undefined || v === '' ? (type === 'usd' ? 'unknown' : '') :
          type === 'int' ? fmtInt(v) : type === 'pct' ? fmtPct(v) : type === 'usd' ? fmtUsd(v) : type === 'duration' ? fmtDuration(v) : type === 'time' ? String(v).slice(0, 16) : String(v);
        var td = el('td', { className: type && type !== 'text' && type !== 'id' && type !== 'time' ? 'num' : type === 'id' ? 'id' : '', text: text });
        if (type === 'id') td.title = String(v);
        if (type === 'usd' && (v === null || v === undefined)) { td.className += ' flag'; td.title = describeFlags(r.cost_flags); }
        td.setAttribute('data-value', v === null || v === undefined ? '' : String(v));
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    table.appendChild(body);
  }
  function sortTable(table, index, numeric, th) {
    var current = th.getAttribute('aria-sort');
    var dir = current === 'descending' ? 'ascending' : current === 'ascending' ? 'descending' : numeric ? 'descending' : 'ascending';
    table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir);
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var sign = dir === 'ascending' ? 1 : -1;
    rows.sort(function (a, b) {
      var x = a.cells[index].getAttribute('data-value');
      var y = b.cells[index].getAttribute('data-value');
      // Blanks (unknown cost, no tokens) always last.
      if (x === '' || y === '') return x === y ? 0 : x === '' ? 1 : -1;
      return sign * (numeric ? Number(x) - Number(y) : x.localeCompare(y));
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function renderSessions() {
    var tokens = function (r) {
      var kinds = ['input_tokens', 'cache_read_tokens', 'cache_write_tokens', 'output_tokens'];
      if (kinds.every(function (k) { return r[k] === null || r[k] === undefined; })) return null;
      return kinds.reduce(function (n, k) { return n + num(r[k]); }, 0);
    };
    fillTable(document.getElementById('sessions'), [
      ['session_id', 'session', 'id'], ['harness', 'harness', 'text'], ['models', 'models', 'text'], ['started', 'start (UTC)', 'time'], ['duration_s', 'duration', 'duration'],
      ['calls', 'calls', 'int'], ['errors', 'errors', 'int'], ['requests', 'requests', 'int'], ['tokens', 'tokens', 'int', tokens], ['cost_usd', 'cost', 'usd'], ['breaches', 'breaches', 'int'],
    ], data.sessions, true);
  }
  function renderPrices() {
    var perM = function (k) { return function (r) { return r[k] === null ? '' : '$' + r[k]; }; };
    var host = function (r) { try { return r.price_source ? new URL(r.price_source).host : ''; } catch (e) { return r.price_source; } };
    var used = data.models.filter(function (r) { return num(r.requests) > 0; });
    if (!used.length) { document.getElementById('prices').appendChild(el('caption', { text: 'No observed requests in this scope.' })); return; }
    fillTable(document.getElementById('prices'), [
      ['model', 'model', 'text'], ['requests', 'requests', 'int'], ['cost_usd', 'cost', 'usd'], ['price_key', 'priced as', 'text'],
      ['input', 'input $/M', 'text', perM('input')], ['cache_read', 'cache read $/M', 'text', perM('cache_read')], ['cache_write', 'cache write $/M', 'text', perM('cache_write')],
      ['output', 'output $/M', 'text', perM('output')], ['price_date', 'checked', 'text'], ['price_source', 'source', 'text', host],
    ], used, false);
  }

  function renderFrame() {
    var s = data.scope || {};
    var parts = [];
    if (s.since || s.until) parts.push((s.since || 'start') + ' to ' + (s.until || 'now'));
    if (s.harness) parts.push('harness ' + s.harness);
    document.getElementById('scope').textContent = parts.length ? parts.join(' · ') : 'All data';
    document.getElementById('generated').textContent = 'Generated ' + data.generated_at.replace('T', ' ').slice(0, 19) + ' UTC';
    document.getElementById('footer').textContent = 'toolcanon report html' + (data.source ? ' · ' + data.source : '') +
      ' · tokens as observed by each harness (see README, Token accounting) · cost at list prices from the shipped table or --prices';
  }

  function drawCharts() {
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
    document.getElementById('context').textContent = '';
    applyChartDefaults();
    renderSpend();
    renderTools();
    renderContext();
    renderDrift();
  }

  renderFrame();
  renderHeadline();
  renderSessions();
  renderPrices();
  drawCharts();
  // Canvas colours are fixed when drawn: draw again when the system switches light and dark.
  if (window.matchMedia) window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', drawCharts);
  document.documentElement.setAttribute('data-ready', 'true');
})();
