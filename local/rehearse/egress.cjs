/**
 * The rehearsal's network: preloaded (`--require`) into every rehearsed function and operator
 * command. `REHEARSAL_EGRESS` maps public origins (the stage file's read API, slack.com,
 * hooks.slack.com, the API's execute-api host) to the local peers that play them; a request to a
 * mapped origin goes to its peer, a request to any other non-loopback host fails at once, naming
 * it, so a call the rehearsal does not know about is caught rather than hanging.
 *
 * It patches what the bundles use: the global `fetch` (the read-API client, response_url answers)
 * and `https.request`/`http.request` (@slack/web-api through axios). AWS SDK calls never get here:
 * they go to `AWS_ENDPOINT_URL_*` (loopback).
 */
'use strict';
const http = require('node:http');
const https = require('node:https');

const routes = new Map(Object.entries(JSON.parse(process.env.REHEARSAL_EGRESS || '{}')));

function isLoopback(hostname) {
  return hostname === 'localhost' || hostname === '::1' || hostname === '[::1]' || /^127\./.test(hostname);
}

function blocked(url) {
  return new Error(`rehearsal: no network to ${url} (not a local peer; map it in REHEARSAL_EGRESS)`);
}

/** The local URL for `url`, the same URL when it is loopback, or undefined when it is not reachable here. */
function route(url) {
  const parsed = new URL(url);
  const target = routes.get(parsed.origin);
  if (target !== undefined) return new URL(`${parsed.pathname}${parsed.search}`, target).toString();
  return isLoopback(parsed.hostname) ? url : undefined;
}

const originalFetch = globalThis.fetch;
globalThis.fetch = async function rehearsalFetch(input, init) {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url;
  const local = route(url);
  if (local === undefined) throw new TypeError('fetch failed', { cause: blocked(url) });
  if (typeof input === 'string' || input instanceof URL) return originalFetch(local, init);
  return originalFetch(new Request(local, input), init);
};

/** (url | options, options?, callback?) as http(s).request takes them, as one URL and options. */
function normalize(protocol, args) {
  const callback = args.find((arg) => typeof arg === 'function');
  const options = args.find((arg) => arg && typeof arg === 'object' && !(arg instanceof URL)) ?? {};
  const given = args.find((arg) => typeof arg === 'string' || arg instanceof URL);
  if (given !== undefined) return { url: new URL(given), options, callback };
  const host = options.hostname || (options.host || 'localhost').replace(/:\d+$/, '');
  const port = options.port ? `:${options.port}` : '';
  const url = new URL(`${options.protocol || protocol}//${host.includes(':') ? `[${host}]` : host}${port}${options.path || '/'}`);
  return { url, options, callback };
}

function patch(module, protocol) {
  const originalRequest = module.request;
  module.request = function rehearsalRequest(...args) {
    const { url, options, callback } = normalize(protocol, args);
    const local = route(url.toString());
    if (local === undefined) {
      const request = originalRequest.call(module, 'http://127.0.0.1:9/', { method: 'GET' });
      request.destroy(blocked(url.toString()));
      return request;
    }
    if (local === url.toString()) return originalRequest.apply(module, args);
    const target = new URL(local);
    const { agent: _agent, agents: _agents, hostname: _h, host: _host, port: _p, protocol: _pr, path: _path, ...rest } = options;
    const next = {
      ...rest,
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      path: `${target.pathname}${target.search}`,
    };
    const client = target.protocol === 'https:' ? https : http;
    return (client === module ? originalRequest : client.request).call(client, next, callback);
  };
  module.get = function rehearsalGet(...args) {
    const request = module.request(...args);
    request.end();
    return request;
  };
}

patch(https, 'https:');
patch(http, 'http:');
