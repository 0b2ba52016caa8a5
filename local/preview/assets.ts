/**
 * The preview pages' stylesheet and script, served from the gateway (no external assets: the
 * preview works offline). The script only ever inserts HTML the server rendered and escaped.
 */
import { HOME_PATHS } from './home';
import { PREVIEW_PATHS } from './page';

export const PREVIEW_CSS = `
*{box-sizing:border-box}
[hidden]{display:none!important}
html,body{margin:0;height:100%}
body{font:15px/1.46668 -apple-system,BlinkMacSystemFont,"Segoe UI",Lato,"Helvetica Neue",Helvetica,Arial,sans-serif;color:#1d1c1d;background:#fff}
#app{display:flex;flex-direction:column;height:100vh}
.sidebar{width:240px;flex:none;background:#3f0e40;color:#cfc3cf;padding:12px 0;overflow-y:auto}
.workspace{color:#fff;font-weight:900;font-size:18px;padding:4px 16px 14px;border-bottom:1px solid #522653;margin-bottom:10px}
.section-title{padding:4px 16px;font-size:13px;opacity:.8}
.channels{list-style:none;margin:0;padding:0}
.channels button{all:unset;box-sizing:border-box;display:flex;align-items:center;justify-content:space-between;width:100%;padding:3px 16px;cursor:pointer;font-size:15px}
.channels button:hover{background:#350d36}
.channels button.selected{background:#1164a3;color:#fff}
.count{font-size:12px;opacity:.75}
.topbar{flex:none;display:flex;align-items:center;gap:12px;padding:8px 20px;background:#350d36;color:#fff;font-weight:900;font-size:16px}
.topbar-note{font-weight:400;font-size:12px;opacity:.7}
.topbar-tab{color:#fff;text-decoration:none;font-weight:400;font-size:14px;opacity:.8}
.topbar-tab.selected{font-weight:900;opacity:1}
.home{flex:1;overflow:auto;padding:16px 20px;max-width:900px}
.status{margin-left:auto;font-weight:400;font-size:12px;color:#e8dfe8}
.status.live::before{content:"●";color:#2bac76;margin-right:4px}
.status.down::before{content:"●";color:#e01e5a;margin-right:4px}
#timeline{flex:1;min-height:0;display:flex}
.messages{flex:1;padding:8px 0 24px;min-width:0;overflow-y:auto}
.empty{color:#616061;padding:20px}
.message{display:flex;gap:8px;padding:8px 20px}
.message:hover{background:#f8f8f8}
.avatar{width:36px;height:36px;flex:none;border-radius:4px;background:#2eb67d;color:#fff;font-weight:900;display:flex;align-items:center;justify-content:center}
.reply .avatar{width:28px;height:28px;font-size:13px}
.content{min-width:0;flex:1}
.meta{display:flex;align-items:baseline;gap:6px;flex-wrap:wrap}
.author{font-weight:900}
.app-badge{font-size:10px;font-weight:700;color:#616061;background:#e8e8e8;border-radius:2px;padding:0 3px}
.meta time,.edited{font-size:12px;color:#616061}
.channel{font-size:12px;color:#1264a3;background:#e8f5fa;border-radius:3px;padding:0 4px}
.body{overflow-wrap:anywhere}
.block{margin:4px 0}
.header{font-size:18px;font-weight:900;line-height:1.33}
.section{display:flex;gap:12px}
.section-body{flex:1;min-width:0}
.fields{display:grid;grid-template-columns:1fr 1fr;gap:8px 16px;margin-top:4px}
.context{display:flex;flex-wrap:wrap;gap:8px;font-size:12px;color:#616061}
.divider{border:0;border-top:1px solid #ddd;margin:10px 0}
.actions{display:flex;flex-wrap:wrap;gap:8px}
.button{display:inline-block;font:inherit;font-size:14px;font-weight:700;padding:3px 12px;border:1px solid #bbb;border-radius:4px;background:#fff;color:#1d1c1d;text-decoration:none;cursor:pointer}
.button.primary{background:#007a5a;border-color:#007a5a;color:#fff}
.button.danger{background:#e01e5a;border-color:#e01e5a;color:#fff}
.image,.unknown{color:#616061;font-style:italic}
.file{margin:6px 0 0;max-width:600px}.file img{display:block;max-width:100%;height:auto;border:1px solid #ddd;border-radius:8px}
.file-title{font-size:13px;color:#616061;margin-bottom:4px}.alt-text{font-size:12px;color:#616061;margin-top:4px}
a{color:#1264a3;text-decoration:none}
a:hover{text-decoration:underline}
code{font:12px Monaco,Menlo,Consolas,"Courier New",monospace;color:#e01e5a;background:#f6f6f6;border:1px solid #ddd;border-radius:3px;padding:1px 3px}
pre{font:12px/1.5 Monaco,Menlo,Consolas,"Courier New",monospace;background:#f8f8f8;border:1px solid #ddd;border-radius:4px;padding:8px;margin:4px 0;white-space:pre-wrap}
blockquote{margin:4px 0;padding-left:12px;border-left:4px solid #ddd}
.bullet{display:block;padding-left:1em;text-indent:-1em}
.mention{color:#1264a3;background:#e8f5fa;border-radius:3px;padding:0 2px}
.slack-date{font:inherit}
.thread{margin-top:4px}
.thread summary{list-style:none;display:inline-flex;gap:8px;align-items:center;cursor:pointer;padding:3px 6px;margin-left:-6px;border:1px solid transparent;border-radius:6px;font-size:13px}
.thread summary::-webkit-details-marker{display:none}
.thread summary:hover{border-color:#ddd;background:#fff}
.reply-count{color:#1264a3;font-weight:700}
.last-reply{color:#616061}
.toggle-hint{color:#616061;display:none}
.thread summary:hover .toggle-hint{display:inline}
.thread summary:hover .last-reply{display:none}
.replies{border-left:2px solid #e8e8e8;margin:4px 0 0 2px}
.replies .message{padding:6px 12px}
.ephemeral{background:#f8f8f8;border-left:3px solid #1264a3}
.only-you{font-size:12px;color:#616061;font-style:italic}
.chart{margin:6px 0;max-width:600px;padding:10px 12px 8px;border:1px solid #ddd;border-radius:8px}
.chart-title{font-weight:700;margin-bottom:4px}
.chart-svg{display:block;width:100%;height:auto}
.chart-svg text{font:11px -apple-system,BlinkMacSystemFont,"Segoe UI",Lato,Helvetica,Arial,sans-serif;fill:#616061}
.chart-svg .axis-label{fill:#1d1c1d;font-weight:700}
.chart-legend{list-style:none;display:flex;flex-wrap:wrap;gap:4px 14px;margin:6px 0 0;padding:0;font-size:13px}
.chart-legend li{display:flex;align-items:center;gap:6px}
.legend-note{color:#616061}
.data-table{margin:6px 0;max-width:100%;overflow-x:auto;border:1px solid #ddd;border-radius:8px}
.data-table table{border-collapse:collapse;width:100%;font-size:14px}
.data-table caption{caption-side:top;text-align:left;font-weight:700;padding:8px 10px 4px}
.data-table th,.data-table td{padding:5px 10px;border-top:1px solid #eee;text-align:left;vertical-align:top}
.data-table thead th{background:#f8f8f8;border-top:0;font-size:13px}
.data-table tbody th{font-weight:700}
.data-table .num{text-align:right;font-variant-numeric:tabular-nums}
.data-table td>div,.data-table th>div{margin:0}
.table-pager{display:flex;align-items:center;justify-content:flex-end;gap:8px;padding:6px 10px;border-top:1px solid #eee;font-size:13px;color:#616061}
.table-pager .button{font-size:12px;padding:1px 8px}
.button:disabled{opacity:.4;cursor:default}
.select{font:inherit;font-size:14px;padding:3px 8px;border:1px solid #bbb;border-radius:4px;background:#fff;color:#1d1c1d}
.composer{flex:none;display:flex;gap:8px;align-items:center;padding:10px 20px;border-top:1px solid #ddd;background:#fff}
.composer input{font:inherit;padding:6px 8px;border:1px solid #bbb;border-radius:6px}
.composer-channel{display:flex;align-items:center;gap:2px;color:#616061}
.composer-channel input{width:140px}
#composer-line{flex:1;min-width:0}
.composer-result{font-size:12px;color:#616061;min-width:6em}
.composer-result.failed{color:#e01e5a}
`;

/** One script for both pages: the messages (`#timeline`) and the app's Home tab (`#home`). */
export const PREVIEW_JS = `
(() => {
  'use strict';
  const timeline = document.getElementById('timeline');
  const home = document.getElementById('home');
  const root = timeline || home;
  const status = document.getElementById('status');
  const title = document.getElementById('title');
  let filter = '';
  let loading = false;
  let again = false;

  // Slack's <!date^…> tokens, written in the reader's time zone and locale (the server sends the
  // instant and the format; its fallback text shows until this runs).
  const DAY_MS = 86400000;
  function dayNumber(date) {
    return Math.floor((date.getTime() - date.getTimezoneOffset() * 60000) / DAY_MS);
  }
  function ordinal(day) {
    const tens = day % 100;
    const suffix = tens >= 11 && tens <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' })[day % 10] || 'th';
    return day + suffix;
  }
  function part(date, options) {
    return new Intl.DateTimeFormat(undefined, options).format(date);
  }
  function longDate(date) {
    return part(date, { month: 'long' }) + ' ' + ordinal(date.getDate()) + ', ' + date.getFullYear();
  }
  function shortDate(date) {
    return part(date, { month: 'short' }) + ' ' + date.getDate() + ', ' + date.getFullYear();
  }
  function pretty(date, plain) {
    const days = dayNumber(date) - dayNumber(new Date());
    return days === 0 ? 'today' : days === -1 ? 'yesterday' : days === 1 ? 'tomorrow' : plain(date);
  }
  function ago(date) {
    const seconds = Math.round((date.getTime() - Date.now()) / 1000);
    const units = [['year', 31536000], ['month', 2592000], ['day', 86400], ['hour', 3600], ['minute', 60]];
    const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
    for (const [unit, size] of units) if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
    return relative.format(seconds, 'second');
  }
  const DATE_TOKENS = {
    date_num: (d) => d.getFullYear() + '-' + String(d.getMonth() + 1).padStart(2, '0') + '-' + String(d.getDate()).padStart(2, '0'),
    date: longDate,
    date_short: shortDate,
    date_long: (d) => part(d, { weekday: 'long' }) + ', ' + longDate(d),
    date_pretty: (d) => pretty(d, longDate),
    date_short_pretty: (d) => pretty(d, shortDate),
    date_long_pretty: (d) => pretty(d, DATE_TOKENS.date_long),
    time: (d) => part(d, { hour: 'numeric', minute: '2-digit' }),
    time_secs: (d) => part(d, { hour: 'numeric', minute: '2-digit', second: '2-digit' }),
    ago,
  };
  function formatDates() {
    for (const time of root.querySelectorAll('time.slack-date')) {
      const date = new Date(time.getAttribute('datetime'));
      if (Number.isNaN(date.getTime())) continue;
      time.textContent = time.dataset.format.replace(/\\{(\\w+)\\}/g, (token, name) => (DATE_TOKENS[name] ? DATE_TOKENS[name](date) : token));
      time.title = date.toString();
    }
  }

  // Slack opens a channel at its newest message.
  function scrollToNewest() {
    const list = root.querySelector('.messages');
    if (list) list.scrollTop = list.scrollHeight;
  }

  function applyFilter() {
    for (const message of root.querySelectorAll('.messages > .message')) {
      message.hidden = filter !== '' && message.dataset.channel !== filter;
    }
    let name = filter;
    for (const button of root.querySelectorAll('.channels button')) {
      button.classList.toggle('selected', button.dataset.channel === filter);
      if (button.dataset.channel === filter && button.dataset.name) name = button.dataset.name;
    }
    title.textContent = filter === '' ? 'All messages' : '# ' + name;
  }

  // Data tables page in the browser, as Slack's do; the page a table shows survives a refresh.
  const tablePages = new Map();
  function tableKey(figure) {
    const message = figure.closest('.message');
    const body = figure.closest('.body');
    const index = body ? Array.prototype.indexOf.call(body.querySelectorAll('.data-table'), figure) : 0;
    return (message ? message.dataset.ts : '') + ':' + index;
  }
  function showTablePage(figure, wanted) {
    const size = Number(figure.dataset.pageSize) || 5;
    const rows = figure.querySelectorAll('tbody tr');
    const pages = Math.max(1, Math.ceil(rows.length / size));
    const page = Math.min(Math.max(wanted, 0), pages - 1);
    rows.forEach((row, i) => { row.hidden = i < page * size || i >= (page + 1) * size; });
    figure.dataset.page = String(page);
    const range = figure.querySelector('.table-range');
    if (range) range.textContent = (page * size + 1) + '–' + Math.min((page + 1) * size, rows.length) + ' of ' + rows.length;
    const prev = figure.querySelector('[data-table-page="prev"]');
    const next = figure.querySelector('[data-table-page="next"]');
    if (prev) prev.disabled = page === 0;
    if (next) next.disabled = page === pages - 1;
    tablePages.set(tableKey(figure), page);
  }

  async function refresh() {
    if (loading) { again = true; return; }
    loading = true;
    try {
      const open = new Set(Array.from(root.querySelectorAll('details.thread[open]'), (d) => d.dataset.ts));
      const list = root.querySelector('.messages');
      const atBottom = !list || list.scrollHeight - list.scrollTop - list.clientHeight < 40;
      const response = await fetch(timeline ? '${PREVIEW_PATHS.timeline}' : '${HOME_PATHS.view}', { cache: 'no-store' });
      if (!response.ok) throw new Error('HTTP ' + response.status);
      root.innerHTML = await response.text();
      for (const details of root.querySelectorAll('details.thread')) details.open = open.has(details.dataset.ts);
      for (const figure of root.querySelectorAll('.data-table')) {
        const page = tablePages.get(tableKey(figure));
        if (page) showTablePage(figure, page);
      }
      formatDates();
      if (timeline) applyFilter();
      if (timeline && atBottom) scrollToNewest();
    } catch (error) {
      status.textContent = 'update failed: ' + error.message;
    } finally {
      loading = false;
      if (again) { again = false; void refresh(); }
    }
  }

  const composer = document.getElementById('composer');
  const result = document.getElementById('composer-result') || status;

  function say(text, failed) {
    result.textContent = text;
    result.classList.toggle('failed', failed === true);
  }

  async function act(path, body) {
    try {
      const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const answer = await response.json().catch(() => ({}));
      if (!response.ok) { say(answer.error || 'HTTP ' + response.status, true); return false; }
      say(answer.status === 200 ? 'sent' : 'the bridge answered ' + answer.status, answer.status !== 200);
      return true;
    } catch (error) {
      say('not sent: ' + error.message, true);
      return false;
    }
  }

  root.addEventListener('click', (event) => {
    const pager = event.target.closest('button[data-table-page]');
    if (pager) {
      const figure = pager.closest('.data-table');
      showTablePage(figure, Number(figure.dataset.page) + (pager.dataset.tablePage === 'next' ? 1 : -1));
      return;
    }
    const action = event.target.closest('button[data-action-id]');
    if (action && home) {
      void act('${HOME_PATHS.click}', { actionId: action.dataset.actionId });
      return;
    }
    if (action && composer) {
      const message = action.closest('.message');
      if (message) void act('${PREVIEW_PATHS.click}', { channel: message.dataset.channel, ts: message.dataset.ts, actionId: action.dataset.actionId });
      return;
    }
    const button = event.target.closest('.channels button');
    if (!button) return;
    filter = button.dataset.channel;
    applyFilter();
    scrollToNewest();
    const channel = document.getElementById('composer-channel');
    if (channel && filter !== '') channel.value = button.dataset.name || filter;
  });

  // A channel picked in a Home tab select (conversations_select) goes to the app as Slack sends it.
  home?.addEventListener('change', (event) => {
    const select = event.target.closest('select[data-action-id]');
    if (!select || select.value === '') return;
    const block = select.closest('[data-block-id]');
    void act('${HOME_PATHS.click}', { actionId: select.dataset.actionId, blockId: block && block.dataset.blockId, selectedChannel: select.value });
  });

  if (composer) {
    composer.addEventListener('submit', async (event) => {
      event.preventDefault();
      const line = document.getElementById('composer-line');
      const channel = document.getElementById('composer-channel');
      if (await act('${PREVIEW_PATHS.command}', { channel: channel.value, line: line.value })) line.value = '';
    });
  }

  const events = new EventSource('${PREVIEW_PATHS.events}');
  events.addEventListener('open', () => { status.textContent = 'live'; status.className = 'status live'; void refresh(); });
  events.addEventListener('change', () => void refresh());
  events.addEventListener('error', () => { status.textContent = 'reconnecting…'; status.className = 'status down'; });
  formatDates();
  if (timeline) {
    applyFilter();
    scrollToNewest();
  } else {
    // Opening the tab: the local Slack sends the app a signed app_home_opened, as Slack does.
    void act('${HOME_PATHS.open}', {});
  }
})();
`;
