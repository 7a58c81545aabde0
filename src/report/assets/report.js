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
      var what = m[1] === 'unknown_price' ? 'no price for ' + m[2] : m[1] === 'above_price_limit' ? m[2] + ' above its priced prompt size' :
        m[1] === 'definition_unknown' ? 'a tool listed without its definition' : 'no model named';
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
    var chart = new Chart(canvas, config);
    charts.push(chart);
    if (config.plugins && config.plugins.indexOf(fitRowsPlugin) >= 0) fitRows(chart);
  }

  // ---- labels and rows of horizontal bar charts -------------------------------------------------
  var measureCtx = null;
  function textWidth(text, font) {
    if (!measureCtx) measureCtx = document.createElement('canvas').getContext('2d');
    measureCtx.font = font;
    return measureCtx.measureText(text).width;
  }
  /** `text` cut to `max` px with an ellipsis. */
  function ellipsis(text, max, font) {
    if (textWidth(text, font) <= max) return text;
    var lo = 0, hi = text.length;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (textWidth(text.slice(0, mid) + '…', font) <= max) lo = mid; else hi = mid - 1; }
    return text.slice(0, lo) + '…';
  }
  /**
   * A category label that fits in about 40 % of the chart's width: as is, or on up to three lines
   * split at spaces (a tool's "(namespace)" goes to the next line), each line cut with an ellipsis
   * if it is still too long. The tooltip keeps the whole label.
   */
  function fitLabel(scale, text) {
    text = String(text);
    var font = Chart.helpers.toFont(scale.options.ticks.font).string;
    var max = Math.max(90, scale.chart.width * 0.4);
    if (textWidth(text, font) <= max) return text;
    var words = text.split(' ');
    var lines = [words[0]];
    for (var i = 1; i < words.length; i++) {
      var joined = lines[lines.length - 1] + ' ' + words[i];
      if (lines.length === 3 || textWidth(joined, font) <= max) lines[lines.length - 1] = joined;
      else lines.push(words[i]);
    }
    lines = lines.map(function (l) { return ellipsis(l, max, font); });
    return lines.length === 1 ? lines[0] : lines;
  }
  /**
   * Makes the plot of a horizontal bar chart tall enough that its category labels do not overlap:
   * each row gets its label's lines plus a little air, on top of what the legend and the axis
   * take at this width; never lower than the height the stylesheet gives the plot.
   */
  function fitRows(chart) {
    var plot = chart.canvas.parentNode;
    if (!plot || !chart.scales.y) return;
    if (!plot.getAttribute('data-base-height')) plot.setAttribute('data-base-height', String(plot.clientHeight));
    var base = Number(plot.getAttribute('data-base-height'));
    var y = chart.scales.y;
    var lineHeight = Chart.helpers.toFont(y.options.ticks.font).lineHeight;
    var lines = y.ticks.reduce(function (m, t) { return Math.max(m, Array.isArray(t.label) ? t.label.length : 1); }, 1);
    var need = y.ticks.length * (lines * lineHeight + 6);
    var want = Math.max(base, Math.ceil(need + chart.height - y.height));
    if (Math.abs(want - plot.clientHeight) > 1) {
      plot.style.height = want + 'px';
      chart.resize();
    }
  }
  /** Rows fitted again when the chart is resized (a phone turned, a window narrowed). */
  var fitRowsPlugin = { id: 'fitRows', resize: function (chart) { requestAnimationFrame(function () { if (chart.canvas) fitRows(chart); }); } };

  function stackedBars(labels, series, valueFormat, horizontal, alwaysLegend) {
    return {
      type: 'bar',
      plugins: horizontal ? [fitRowsPlugin] : [],
      data: { labels: labels, datasets: series.map(function (s, i) { return { label: s.label, data: s.data, backgroundColor: s.colour || colour(i), borderWidth: 0, maxBarThickness: horizontal ? 28 : 48 }; }) },
      options: {
        indexAxis: horizontal ? 'y' : 'x',
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: { stacked: true, ticks: horizontal ? { callback: function (v) { return valueFormat(v); }, maxRotation: 0 } : { autoSkip: true, maxRotation: 0 }, grid: { display: !!horizontal } },
          y: { stacked: true, ticks: horizontal ? { autoSkip: false, callback: function (v, i) { return fitLabel(this, labels[i]); } } : { callback: function (v) { return valueFormat(v); } }, grid: { display: !horizontal } },
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

  // ---- usage and cost per day (or week, month, year) -----------------------------------------
  var DAY = 86400000;
  /** At most this many bars over time: days, else weeks, months or years. */
  var MAX_BARS = 31;
  function isoDay(t) { return new Date(t).toISOString().slice(0, 10); }
  function monday(t) { return t - ((new Date(t).getUTCDay() + 6) % 7) * DAY; }
  /**
   * The periods of the bars over time: every day (week from Monday, month, year) from the first
   * with observed usage to the last, gaps included, in the smallest unit that gives at most
   * MAX_BARS bars, so that bars stay readable over months.
   */
  function periods() {
    var seen = {};
    data.usage.forEach(function (r) { if (num(r.requests) > 0) seen[r.day] = true; });
    var list = Object.keys(seen).sort();
    if (!list.length) return { unit: 'day', labels: [], keyOf: function (d) { return d; } };
    var first = Date.parse(list[0] + 'T00:00:00Z');
    var last = Date.parse(list[list.length - 1] + 'T00:00:00Z');
    var units = [
      { unit: 'day', keyOf: function (d) { return d; }, start: function (t) { return t; }, next: function (t) { return t + DAY; } },
      { unit: 'week', keyOf: function (d) { return isoDay(monday(Date.parse(d + 'T00:00:00Z'))); }, start: monday, next: function (t) { return t + 7 * DAY; } },
      { unit: 'month', keyOf: function (d) { return d.slice(0, 7); }, start: function (t) { return Date.UTC(new Date(t).getUTCFullYear(), new Date(t).getUTCMonth(), 1); },
        next: function (t) { return Date.UTC(new Date(t).getUTCFullYear(), new Date(t).getUTCMonth() + 1, 1); } },
      { unit: 'year', keyOf: function (d) { return d.slice(0, 4); }, start: function (t) { return Date.UTC(new Date(t).getUTCFullYear(), 0, 1); },
        next: function (t) { return Date.UTC(new Date(t).getUTCFullYear() + 1, 0, 1); } },
    ];
    for (var u = 0; u < units.length; u++) {
      var unit = units[u];
      var labels = [];
      for (var t = unit.start(first); t <= last && labels.length <= MAX_BARS; t = unit.next(t)) labels.push(unit.keyOf(isoDay(t)));
      if (labels.length <= MAX_BARS || u === units.length - 1) return { unit: unit.unit, labels: labels, keyOf: unit.keyOf };
    }
  }
  function seriesByPeriod(value) {
    var p = periods();
    var labels = p.labels;
    var index = {};
    labels.forEach(function (d, i) { index[d] = i; });
    var by = {};
    data.usage.forEach(function (r) {
      var v = value(r);
      var at = index[p.keyOf(r.day)];
      if (v === null || v === 0 || at === undefined) return;
      var key = r.harness + ' · ' + (r.model || '(no model)');
      if (!by[key]) by[key] = { label: key, data: labels.map(function () { return 0; }), total: 0 };
      by[key].data[at] += v;
      by[key].total += v;
    });
    var series = Object.keys(by).map(function (k) { return by[k]; }).sort(function (a, b) { return b.total - a.total; });
    if (series.length > 9) {
      var rest = { label: 'other', data: labels.map(function () { return 0; }), colour: colour(7) };
      series.slice(8).forEach(function (s) { s.data.forEach(function (v, i) { rest.data[i] += v; }); });
      series = series.slice(0, 8).concat([rest]);
    }
    return { unit: p.unit, labels: labels, series: series };
  }
  /** Bars over time: the caption names the unit, the tooltip the period. */
  function barsOverTime(name, s, valueFormat, title) {
    document.querySelector('[data-chart="' + name + '"] figcaption b').textContent = title.replace('{unit}', s.unit);
    var config = stackedBars(s.labels, s.series, valueFormat, false, true);
    config.options.plugins.tooltip.callbacks.title = function (items) { return items.length ? (s.unit === 'week' ? 'week of ' : '') + items[0].label : ''; };
    return config;
  }
  function renderSpend() {
    draw('tokens-per-day', function () {
      var s = seriesByPeriod(function (r) { return num(r.tokens); });
      return s.series.length ? barsOverTime('tokens-per-day', s, fmtCompact, 'Tokens per {unit}') : null;
    }, 'No observed usage in this scope.');
    draw('cost-per-day', function () {
      var s = seriesByPeriod(function (r) { return r.cost_usd === null ? null : num(r.cost_usd); });
      return s.series.length ? barsOverTime('cost-per-day', s, fmtUsd, 'Cost per {unit} (USD)') : null;
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
    renderDefinitionCosts();
    draw('discovery', function () {
      // Turns, each step a subset of the step it names (of_step); calls without a turn id are
      // not placed in any step, and each step says how many sessions that leaves out.
      var steps = data.funnel || [];
      if (!steps.length || (num(steps[0].turns) === 0 && num(steps[0].not_placed) === 0)) return null;
      var config = stackedBars(steps.map(function (s) { return s.step + (num(s.not_placed) > 0 ? ' (+' + fmtInt(num(s.not_placed)) + ' sessions without turn ids)' : ''); }), [{ label: 'turns', data: steps.map(function (s) { return num(s.turns); }), colour: cssVar('--s3') }], fmtInt, true);
      config.options.plugins.tooltip.callbacks.afterLabel = function (c) {
        var s = steps[c.dataIndex];
        var lines = s.of_step ? ['of: ' + s.of_step] : [];
        if (num(s.not_placed) > 0) lines.push('not placed: ' + fmtInt(num(s.not_placed)) + ' session(s) without turn ids (' + (s.not_placed_harnesses || []).join(', ') + ')');
        return lines;
      };
      return config;
    }, 'No tool calls in this scope.');
  }
  function renderMcpTable() {
    var card = document.getElementById('mcp-table-card');
    // Servers seen only in tool calls have no lifecycle to show: the chart above has them.
    var rows = data.mcp.filter(function (r) { return r.state !== null && r.state !== undefined && r.state !== ''; });
    if (!rows.length) { card.hidden = true; return; }
    var cols = [['server', 'server'], ['state', 'state'], ['since', 'since', 'time'], ['connected_share', 'connected', 'pct'], ['reconnects', 'reconnects', 'int'], ['flapping_since', 'flapping since', 'time'],
      ['restarts', 'restarts', 'int'], ['restart_flags', 'restart flags', 'list'], ['model_visible', 'tools visible', 'int'], ['search_only', 'search only', 'int'], ['calls', 'calls', 'int'], ['error_share', 'errors', 'pct']];
    fillTable(document.getElementById('mcp-table'), cols, rows, false);
  }

  function renderDefinitionCosts() {
    var card = document.getElementById('definitions-card');
    var rows = data.definition_costs || [];
    if (!rows.length) { card.hidden = true; return; }
    var cols = [['tool', 'tool'], ['definition_tokens', 'tokens per request', 'int'], ['requests_while_visible', 'requests while visible', 'int'],
      ['definition_tokens_total', 'tokens in all', 'int'], ['definition_cost_usd', 'cost', 'usd'], ['calls', 'calls', 'int'], ['advice', 'advice']];
    fillTable(document.getElementById('definitions-table'), cols, rows, false);
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
      draw(name, function () { return contextChart(s); }, '');
    });
  }
  /** The smallest of 1, 1.5, 2, 3, 4, 5, 6, 8 × a power of ten that is at least v (v > 0). */
  function niceCeil(v) {
    var p = Math.pow(10, Math.floor(Math.log10(v)));
    var steps = [1, 1.5, 2, 3, 4, 5, 6, 8, 10];
    for (var i = 0; i < steps.length; i++) if (steps[i] * p >= v * (1 - 1e-9)) return steps[i] * p;
    return 10 * p;
  }
  function powerOfTen(v) { return v > 0 && Math.abs(Math.log10(v) - Math.round(Math.log10(v))) < 1e-9; }
  var TIME_UNITS = [['seconds', 1000, 120], ['minutes', 60000, 120], ['hours', 3600000, 48], ['days', 86400000, Infinity]];
  /**
   * One session's context over time against its threshold. The time axis is in seconds, minutes,
   * hours or days since the first figure, whichever keeps it under about a hundred; a session whose
   * figures are all at one instant (a compaction agent's single request) has no time axis, its
   * point in the middle. The threshold line is always drawn: when the session stays far below it
   * (peak under a quarter of the threshold), the token axis is logarithmic so that both read.
   */
  function contextChart(s) {
    var t0 = s.points[0][0];
    var span = s.points[s.points.length - 1][0] - t0;
    var peak = s.points.reduce(function (m, p) { return Math.max(m, p[1]); }, 0);
    var unit = TIME_UNITS[0];
    for (var u = 0; u < TIME_UNITS.length; u++) { unit = TIME_UNITS[u]; if (span / unit[1] <= unit[2]) break; }
    var at = function (t) { return span === 0 ? 0 : (t - t0) / unit[1]; };
    var xMax = span === 0 ? 1 : niceCeil(span / unit[1]);
    var xMin = span === 0 ? -1 : 0;
    var log = peak > 0 && peak < s.threshold_tokens * 0.25;
    var lowest = s.points.reduce(function (m, p) { return p[1] > 0 ? Math.min(m, p[1]) : m; }, Infinity);
    var xTitle = span === 0
      ? (s.points.length === 1 ? 'one request' : s.points.length + ' figures at one instant') + ', ' + new Date(t0).toISOString().slice(0, 16).replace('T', ' ') + ' UTC'
      : unit[0] + ' since the session started';
    var y = log
      ? { type: 'logarithmic', min: Math.pow(10, Math.floor(Math.log10(Math.min(lowest, peak)))), max: Math.pow(10, Math.ceil(Math.log10(s.threshold_tokens * 1.05))),
        title: { display: true, text: 'tokens, log scale' },
        grid: { color: function (c) { return c.tick && powerOfTen(c.tick.value) ? Chart.defaults.borderColor : 'transparent'; } },
        ticks: { autoSkip: false, callback: function (v) { return powerOfTen(v) ? fmtCompact(v) : ''; } } }
      : { beginAtZero: true, suggestedMax: Math.max(peak, s.threshold_tokens) * 1.1, ticks: { callback: function (v) { return fmtCompact(v); }, maxTicksLimit: 5 } };
    return {
      type: 'line',
      data: {
        datasets: [
          { label: 'context tokens', data: s.points.map(function (p) { return { x: at(p[0]), y: p[1] }; }), borderColor: colour(0), backgroundColor: colour(0),
            pointRadius: s.points.length > 60 ? 0 : s.points.length === 1 ? 4 : 2, borderWidth: 2, tension: 0 },
          { label: 'threshold', data: [{ x: xMin, y: s.threshold_tokens }, { x: xMax, y: s.threshold_tokens }], borderColor: colour(9), backgroundColor: colour(9), borderDash: [6, 4], borderWidth: 1.5, pointRadius: 0, pointHitRadius: 0 },
          // order -1: drawn over the context line where a breach is one of its points.
          { label: 'breach', type: 'scatter', order: -1, data: s.breach_points.map(function (p) { return { x: at(p[0]), y: p[1] }; }), borderColor: colour(9), backgroundColor: colour(9), pointRadius: 5, pointHoverRadius: 6 },
        ],
      },
      options: {
        parsing: false,
        interaction: { mode: 'nearest', intersect: false },
        scales: {
          x: { type: 'linear', min: xMin, max: xMax, title: { display: true, text: xTitle }, grid: { display: span !== 0 },
            ticks: { display: span !== 0, maxTicksLimit: 6, maxRotation: 0, callback: function (v) { return Number(v.toFixed(1)).toLocaleString('en-US'); } } },
          y: y,
        },
        plugins: {
          legend: { display: false },
          tooltip: {
            filter: function (c) { return c.dataset.label !== 'threshold'; },
            callbacks: {
              title: function (items) { return items.length && span !== 0 ? Number(items[0].parsed.x.toFixed(2)).toLocaleString('en-US') + ' ' + unit[0] : ''; },
              label: function (c) { return c.dataset.label + ': ' + fmtInt(c.parsed.y) + ' (' + fmtPct(c.parsed.y / s.window) + ' of the window)'; },
            },
          },
        },
      },
    };
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
  /**
   * cols: [key, header, type?, value?]; type int | pct | usd | duration (numbers, right-aligned),
   * id | text | time | list (text; a list wraps at its spaces). Each cell carries its column's
   * header (data-label) for the stacked layout of a table too wide for its box.
   */
  var TEXT_TYPES = { id: true, text: true, time: true, list: true };
  function fillTable(table, cols, rows, sortable) {
    table.textContent = '';
    var head = el('tr');
    cols.forEach(function (c, i) {
      var numeric = !!c[2] && !TEXT_TYPES[c[2]];
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
        var td = el('td', { className: type && !TEXT_TYPES[type] ? 'num' : type === 'id' || type === 'time' || type === 'list' ? type : '', text: text, 'data-label': c[1] });
        if (type === 'id' || (type === 'time' && text !== String(v))) td.title = String(v);
        if (type === 'list' && text) {
          // Each item unbroken ("claude-opus-4-5" never split at its hyphens), the list wrapping between them.
          var items = el('span');
          text.split(' ').forEach(function (item, k) { if (k) items.appendChild(document.createTextNode(' ')); items.appendChild(el('span', { className: 'item', text: item })); });
          td.textContent = '';
          td.appendChild(items);
        }
        if (type === 'usd' && (v === null || v === undefined)) { td.className += ' flag'; td.title = describeFlags(r.cost_flags); }
        td.setAttribute('data-value', v === null || v === undefined ? '' : String(v));
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    table.appendChild(body);
    fitTable(table.parentNode);
  }
  /**
   * A table wider than its box is shown stacked, a block of "header value" lines per row (a
   * sortable table keeps its headers as a row of sort buttons), rather than cut off or scrolled
   * sideways. Decided again whenever the box changes width.
   */
  function fitTable(wrap) {
    if (!wrap || !wrap.classList || !wrap.classList.contains('table-wrap')) return;
    wrap.classList.remove('stacked');
    if (wrap.scrollWidth > wrap.clientWidth) wrap.classList.add('stacked');
    if (!wrap.getAttribute('data-fitted') && window.ResizeObserver) {
      wrap.setAttribute('data-fitted', 'true');
      var width = wrap.clientWidth;
      new ResizeObserver(function () {
        if (wrap.clientWidth === width) return;
        width = wrap.clientWidth;
        fitTable(wrap);
      }).observe(wrap);
    }
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
      ['session_id', 'session', 'id'], ['harness', 'harness', 'text'], ['models', 'models', 'list'], ['started', 'start (UTC)', 'time'], ['duration_s', 'duration', 'duration'],
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
