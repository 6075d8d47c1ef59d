#!/usr/bin/env node
// Septa's test OpenID provider: panva's oidc-provider (OpenID Certified), run
// on loopback for the identity tests. Nothing here issues tokens by itself:
// every token comes out of oidc-provider's own endpoints; this file only
// configures it, adds the login page it leaves to the host, and a few
// test-control endpoints.
//
//   node idp.mjs --config FILE [--port 0]
//
// One HTTP server on 127.0.0.1 (port 0: any free port). When ready it prints
// exactly one line to stdout,
//   {"issuer":"http://127.0.0.1:<port>","pid":<pid>}
// and everything else (request log, oidc-provider's notices) goes to stderr.
// A bad config file: a message on stderr and exit code 2. SIGTERM/SIGINT: the
// server closes and the process exits 0. The config format is in README.md.
//
// Protocol endpoints (oidc-provider's defaults; the discovery document
// /.well-known/openid-configuration names them): /auth, /token, /jwks, /me
// (userinfo), /device/auth (device authorization), /device (user code page),
// /token/revocation, /token/introspection, /session/end (RP-initiated logout).
//
// The login page (ours, oidc-provider leaves it to its host):
//   GET  /interaction/<uid>        a form: input[name=login] (user id or
//                                  email), input[name=password],
//                                  button[type=submit]. Consent is given
//                                  automatically (no page).
//   POST /interaction/<uid>        login=..&password=.. (urlencoded): a wrong
//                                  one shows the form again with an error
//                                  (status 200, class "error"); a user
//                                  without a password takes any.
//   GET  /interaction/<uid>/abort  ends the interaction with access_denied.
//
// Test-control endpoints, loopback only, no authentication, JSON in and out;
// not counted in /_test/requests and never refused by /_test/down:
//   POST /_test/rotate-keys        {"keep_old": bool} (default false): a new
//        key set (RS256, ES256, EdDSA, new kids) signs from now on; keep_old
//        leaves the previous keys published in the JWKS, otherwise they are
//        gone. Sessions, grants, codes and refresh tokens survive (a new
//        Provider instance over the same storage). Answers
//        {"kids":[every kid now in the JWKS], "signing":{"RS256":kid,...}}.
//   GET  /_test/keys               {"kids":[...], "signing":{...}} as above.
//   POST /_test/users/<id>/groups  {"groups":[...]}: the user's groups from now
//        on (the next ID token, userinfo or refresh shows them). Answers the
//        user's claims.
//   POST /_test/down               {"mode":"503"|"hang"|"reset"} (default
//        503): every other request gets 503 / is held unanswered until
//        /_test/up (then served) / has its connection reset.
//   POST /_test/up                 serves again.
//   GET  /_test/requests           {"<path>": count, ...}: requests per path
//        (query left out) since start or the last reset, 503s included.
//   POST /_test/requests/reset     zeroes those counts.

import * as crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import { parseArgs } from 'node:util';

// oidc-provider prints its notices with console.info, i.e. to stdout, which
// is reserved for the ready line: everything the process logs goes to stderr.
for (const level of ['log', 'info', 'debug']) {
  console[level] = (...args) => console.error(...args);
}
const { default: Provider, errors } = await import('oidc-provider');

const ALGS = ['RS256', 'ES256', 'EdDSA'];
const TTL_KEYS = new Set([
  'AccessToken', 'AuthorizationCode', 'ClientCredentials', 'DeviceCode', 'Grant', 'IdToken', 'Interaction',
  'RefreshToken', 'Session',
]);
const HARNESS_CLIENT_FIELDS = ['ci_claims', 'alg', 'default_resource', 'refresh_tokens'];
const DEFAULT_RS_SCOPE = 'read write';

function log(...args) {
  console.error('idp:', ...args);
}

class ConfigError extends Error {}

function fail(message) {
  throw new ConfigError(message);
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isStringArray = (v) => Array.isArray(v) && v.every((x) => typeof x === 'string');

// An absolute URI, as RFC 8707 requires of a resource indicator (and
// oidc-provider enforces).
function absoluteUri(s) {
  return URL.parse(s) !== null;
}

// The config file, checked; harness-only client fields split off.
function loadConfig(file) {
  let raw;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    fail(`cannot read ${file}: ${err.message}`);
  }
  if (!isObject(raw)) fail('the config must be a JSON object');
  const known = new Set(['clients', 'audiences', 'users', 'ttl', 'access_token_ttl']);
  for (const key of Object.keys(raw)) {
    if (!known.has(key)) fail(`unknown top-level key "${key}" (known: ${[...known].join(', ')})`);
  }

  const accessTokenTtl = raw.access_token_ttl ?? 300;
  if (!Number.isSafeInteger(accessTokenTtl) || accessTokenTtl <= 0) fail('access_token_ttl must be a positive integer (seconds)');

  const ttl = raw.ttl ?? {};
  if (!isObject(ttl)) fail('ttl must be an object');
  for (const [key, value] of Object.entries(ttl)) {
    if (!TTL_KEYS.has(key)) fail(`ttl.${key}: unknown (known: ${[...TTL_KEYS].join(', ')})`);
    if (!Number.isSafeInteger(value) || value <= 0) fail(`ttl.${key} must be a positive integer (seconds)`);
  }

  // audiences: "name" (resource urn:name, aud name), "<absolute URI>" (both
  // the URI), or {"resource": URI, "audience"?: string, "scope"?: string}.
  const audiences = new Map();
  if (raw.audiences !== undefined && !Array.isArray(raw.audiences)) fail('audiences must be an array');
  for (const [i, entry] of (raw.audiences ?? []).entries()) {
    let rs;
    if (typeof entry === 'string' && entry) {
      rs = absoluteUri(entry)
        ? { resource: entry, audience: entry, scope: DEFAULT_RS_SCOPE }
        : { resource: `urn:${entry}`, audience: entry, scope: DEFAULT_RS_SCOPE };
    } else if (isObject(entry) && typeof entry.resource === 'string') {
      rs = { resource: entry.resource, audience: entry.audience ?? entry.resource, scope: entry.scope ?? DEFAULT_RS_SCOPE };
      for (const key of Object.keys(entry)) {
        if (!['resource', 'audience', 'scope'].includes(key)) fail(`audiences[${i}].${key}: unknown`);
      }
      if (typeof rs.audience !== 'string' || !rs.audience) fail(`audiences[${i}].audience must be a non-empty string`);
      if (typeof rs.scope !== 'string') fail(`audiences[${i}].scope must be a string`);
    } else {
      fail(`audiences[${i}] must be a non-empty string or an object with a "resource"`);
    }
    if (!absoluteUri(rs.resource) || rs.resource.includes('#')) {
      fail(`audiences[${i}]: resource "${rs.resource}" is not an absolute URI without fragment (RFC 8707)`);
    }
    if (audiences.has(rs.resource)) fail(`audiences[${i}]: resource "${rs.resource}" twice`);
    audiences.set(rs.resource, rs);
  }

  if (!Array.isArray(raw.clients) || raw.clients.length === 0) fail('clients must be a non-empty array');
  const clients = [];
  const harness = new Map();
  for (const [i, entry] of raw.clients.entries()) {
    const where = `clients[${i}]`;
    if (!isObject(entry)) fail(`${where} must be an object`);
    if (typeof entry.client_id !== 'string' || !entry.client_id) fail(`${where}.client_id must be a non-empty string`);
    if (harness.has(entry.client_id)) fail(`${where}: client_id "${entry.client_id}" twice`);
    if (!isStringArray(entry.grant_types) || entry.grant_types.length === 0) fail(`${where}.grant_types must be a non-empty array of strings`);
    const metadata = { ...entry };
    const extra = {};
    for (const field of HARNESS_CLIENT_FIELDS) {
      if (field in metadata) {
        extra[field] = metadata[field];
        delete metadata[field];
      }
    }
    extra.alg ??= 'RS256';
    if (!ALGS.includes(extra.alg)) fail(`${where}.alg must be one of ${ALGS.join(', ')}`);
    if (extra.ci_claims !== undefined) {
      if (!isObject(extra.ci_claims)) fail(`${where}.ci_claims must be an object`);
      for (const reserved of ['iss', 'aud', 'exp', 'iat', 'jti', 'client_id', 'scope', 'nbf', 'cnf']) {
        if (reserved in extra.ci_claims) fail(`${where}.ci_claims.${reserved}: set by the provider, not by the config`);
      }
    }
    if (extra.default_resource !== undefined && !audiences.has(extra.default_resource)) {
      fail(`${where}.default_resource "${extra.default_resource}" is not one of the audiences' resources`);
    }
    extra.refresh_tokens ??= 'offline_access';
    if (!['offline_access', 'always'].includes(extra.refresh_tokens)) fail(`${where}.refresh_tokens must be "offline_access" or "always"`);
    // A client with neither the code nor the implicit grant has no response
    // types (oidc-provider's default is ["code"], which it would refuse).
    if (metadata.response_types === undefined
        && !metadata.grant_types.includes('authorization_code') && !metadata.grant_types.includes('implicit')) {
      metadata.response_types = [];
    }
    clients.push(metadata);
    harness.set(entry.client_id, extra);
  }
  for (const [id, extra] of harness) {
    const cc = clients.find((c) => c.client_id === id).grant_types.includes('client_credentials');
    if (cc && audiences.size === 0 && !extra.default_resource) fail(`client ${id} has client_credentials but the config has no audiences`);
  }

  if (raw.users !== undefined && !Array.isArray(raw.users)) fail('users must be an array');
  const users = new Map();
  for (const [i, u] of (raw.users ?? []).entries()) {
    const where = `users[${i}]`;
    if (!isObject(u)) fail(`${where} must be an object`);
    for (const key of Object.keys(u)) {
      if (!['id', 'email', 'name', 'groups', 'password'].includes(key)) fail(`${where}.${key}: unknown`);
    }
    if (typeof u.id !== 'string' || !u.id) fail(`${where}.id must be a non-empty string`);
    if (users.has(u.id)) fail(`${where}: id "${u.id}" twice`);
    if (typeof u.email !== 'string') fail(`${where}.email must be a string`);
    if (u.name !== undefined && typeof u.name !== 'string') fail(`${where}.name must be a string`);
    if (!isStringArray(u.groups ?? [])) fail(`${where}.groups must be an array of strings`);
    if (u.password !== undefined && typeof u.password !== 'string') fail(`${where}.password must be a string`);
    users.set(u.id, { id: u.id, email: u.email, name: u.name ?? u.id, groups: [...(u.groups ?? [])], password: u.password });
  }

  return { accessTokenTtl, ttl, audiences, clients, harness, users };
}

// --- storage shared by every Provider instance (sessions, grants, codes and
// tokens survive a key rotation) ---------------------------------------------

const store = new Map(); // "<Model>:<id>" -> { payload, expiresAt }; plus index keys

function storeGet(key) {
  const entry = store.get(key);
  if (!entry) return undefined;
  if (entry.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
    store.delete(key);
    return undefined;
  }
  return entry.value;
}

function storeSet(key, value, expiresIn) {
  store.set(key, { value, expiresAt: typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : undefined });
}

class SharedAdapter {
  constructor(model) {
    this.model = model;
  }

  key(id) {
    return `${this.model}:${id}`;
  }

  async upsert(id, payload, expiresIn) {
    storeSet(this.key(id), payload, expiresIn);
    if (payload.grantId) {
      const grantKey = `grant:${payload.grantId}`;
      const members = storeGet(grantKey) ?? new Set();
      members.add(this.key(id));
      storeSet(grantKey, members);
    }
    if (payload.userCode) storeSet(`userCode:${payload.userCode}`, id, expiresIn);
    if (this.model === 'Session' && payload.uid) storeSet(`sessionUid:${payload.uid}`, id, expiresIn);
  }

  async find(id) {
    return storeGet(this.key(id));
  }

  async findByUserCode(userCode) {
    const id = storeGet(`userCode:${userCode}`);
    return id === undefined ? undefined : this.find(id);
  }

  async findByUid(uid) {
    const id = storeGet(`sessionUid:${uid}`);
    return id === undefined ? undefined : this.find(id);
  }

  async consume(id) {
    const payload = storeGet(this.key(id));
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id) {
    store.delete(this.key(id));
  }

  async revokeByGrantId(grantId) {
    const grantKey = `grant:${grantId}`;
    for (const key of storeGet(grantKey) ?? []) store.delete(key);
    store.delete(grantKey);
  }
}

// --- keys ---------------------------------------------------------------------

let keyGeneration = 0;

function newKeySet() {
  keyGeneration += 1;
  const tag = `${keyGeneration}-${crypto.randomBytes(4).toString('hex')}`;
  const jwk = (pair, alg, kid) => ({ ...pair.privateKey.export({ format: 'jwk' }), alg, use: 'sig', kid });
  return [
    jwk(crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }), 'RS256', `rs256-${tag}`),
    jwk(crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }), 'ES256', `es256-${tag}`),
    jwk(crypto.generateKeyPairSync('ed25519'), 'EdDSA', `eddsa-${tag}`),
  ];
}

// --- HTML (no outside references: the test machines have no network) ---------

const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title, body) {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>body{font-family:sans-serif;max-width:24rem;margin:2rem auto}.error{color:#b00}input,button{display:block;margin:.5rem 0}</style>
</head><body><h1>${esc(title)}</h1>
${body}
</body></html>`;
}

function loginPage(uid, clientId, { login = '', error } = {}) {
  return page('Sign in', `<p>Septa test identity provider, for client <code>${esc(clientId)}</code>.</p>
${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form method="post" action="/interaction/${esc(uid)}" autocomplete="off">
<label>Login <input type="text" name="login" value="${esc(login)}" autofocus></label>
<label>Password <input type="password" name="password"></label>
<button type="submit">Sign in</button>
</form>
<p><a href="/interaction/${esc(uid)}/abort">Cancel</a></p>`);
}

// --- the provider ----------------------------------------------------------

function buildProvider(issuer, cfg, jwks, cookieKeys) {
  const { harness, audiences, users, ttl, accessTokenTtl } = cfg;

  const configuration = {
    adapter: SharedAdapter,
    clients: structuredClone(cfg.clients),
    jwks: { keys: structuredClone(jwks) },
    cookies: { keys: cookieKeys },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      groups: ['groups'],
    },
    // ID tokens carry every claim of the granted scopes (email, groups, ...),
    // not only when no access token is issued.
    conformIdTokenClaims: false,
    async findAccount(ctx, sub) {
      const user = users.get(sub);
      if (!user) return undefined;
      return {
        accountId: sub,
        async claims() {
          return { sub, email: user.email, email_verified: true, name: user.name, groups: [...user.groups] };
        },
      };
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        allowedPolicy: async (ctx, client, token) => !(client.clientAuthMethod === 'none' && token.clientId !== ctx.oidc.client.clientId),
      },
      revocation: {
        enabled: true,
        allowedPolicy: async (ctx, client, token) => {
          if (token.clientId === client.clientId) return true;
          if (client.clientAuthMethod === 'none') return false;
          throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
        },
      },
      resourceIndicators: {
        enabled: true,
        // client_credentials without resource=: the client's default_resource,
        // else the first audience (such a token is always a JWT). Otherwise
        // no default: an authorization without resource gets an opaque
        // access token for userinfo, as usual.
        async defaultResource(ctx, client, oneOf) {
          if (oneOf) return oneOf;
          if (ctx.oidc.route === 'token' && ctx.oidc.params.grant_type === 'client_credentials') {
            return harness.get(client.clientId)?.default_resource ?? [...audiences.keys()][0];
          }
          return undefined;
        },
        // The resource named at authorization is the access token's, without
        // repeating it at the token endpoint.
        useGrantedResource: async () => true,
        async getResourceServerInfo(ctx, indicator, client) {
          const rs = audiences.get(indicator);
          if (!rs) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
          return {
            scope: rs.scope,
            audience: rs.audience,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: harness.get(client.clientId)?.alg ?? 'RS256' } },
          };
        },
      },
      deviceFlow: {
        enabled: true,
        async userCodeInputSource(ctx, form, out, err) {
          let msg = '<p>Enter the code shown on your device.</p>';
          if (err && (err.userCode || err.name === 'NoCodeError')) msg = '<p class="error" role="alert">The code is incorrect. Try again.</p>';
          else if (err && err.name === 'AbortedError') msg = '<p class="error" role="alert">The sign-in was aborted.</p>';
          else if (err) msg = `<p class="error" role="alert">Error: ${esc(err.message)}</p>`;
          ctx.type = 'html';
          ctx.body = page('Device sign-in', `${msg}\n${form}\n<button type="submit" form="op.deviceInputForm">Continue</button>`);
        },
        async userCodeConfirmSource(ctx, form, client, deviceInfo, userCode) {
          ctx.type = 'html';
          ctx.body = page('Confirm device', `<p>Client <code>${esc(client.clientId)}</code> shows the code <code id="user_code">${esc(userCode)}</code>.</p>
${form}
<button type="submit" form="op.deviceConfirmForm">Confirm</button>`);
        },
        async successSource(ctx) {
          ctx.type = 'html';
          ctx.body = page('Device signed in', '<p id="device-success">Your device is signed in; you can close this page.</p>');
        },
      },
      rpInitiatedLogout: {
        enabled: true,
        // oidc-provider always asks; browsers submit the question at once
        // (script), a fetch client posts the form's fields (xsrf, logout=yes).
        async logoutSource(ctx, form) {
          ctx.type = 'html';
          ctx.body = page('Sign out', `${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button>
<script>document.getElementById('op.logoutForm').requestSubmit(document.querySelector('button[name=logout]'));</script>`);
        },
        async postLogoutSuccessSource(ctx) {
          ctx.type = 'html';
          ctx.body = page('Signed out', '<p id="logout-success">You are signed out.</p>');
        },
      },
    },
    async extraTokenClaims(ctx, token) {
      // A CI client's client_credentials token: its ci_claims (sub below).
      if (token.kind === 'ClientCredentials') {
        const ci = harness.get(token.clientId)?.ci_claims;
        if (!ci) return undefined;
        const { sub, ...claims } = ci;
        return claims;
      }
      // A user's JWT access token (one for a resource): email and groups as
      // of its issue, when the grant has those scopes (RFC 9068 2.2.3.1).
      if (token.kind === 'AccessToken' && token.accountId && token.resourceServer) {
        const user = users.get(token.accountId);
        const grant = ctx?.oidc?.entities?.Grant ?? (token.grantId && await ctx.oidc.provider.Grant.find(token.grantId));
        if (!user || !grant) return undefined;
        const scopes = new Set((grant.getOIDCScope() ?? '').split(' '));
        const claims = {};
        if (scopes.has('email')) claims.email = user.email;
        if (scopes.has('groups')) claims.groups = [...user.groups];
        return claims;
      }
      return undefined;
    },
    formats: {
      customizers: {
        // oidc-provider sets sub = client_id in client_credentials tokens after
        // the extra claims; a CI token's sub is GitHub-like instead.
        jwt(ctx, token, jwt) {
          if (token.kind !== 'ClientCredentials') return;
          const ci = harness.get(token.clientId)?.ci_claims;
          if (!ci) return;
          if (ci.sub !== undefined) jwt.payload.sub = ci.sub;
          else if (ci.repository !== undefined && ci.ref !== undefined) jwt.payload.sub = `repo:${ci.repository}:ref:${ci.ref}`;
        },
      },
    },
    async issueRefreshToken(ctx, client, code) {
      if (!client.grantTypeAllowed('refresh_token')) return false;
      return harness.get(client.clientId)?.refresh_tokens === 'always' || code.scopes.has('offline_access');
    },
    // The code flow only (no implicit / hybrid).
    responseTypes: ['code'],
    clientBasedCORS(ctx, origin, client) {
      if (origin === 'null') return false;
      return client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin);
    },
    async renderError(ctx, out) {
      ctx.type = 'html';
      ctx.body = page('Error', Object.entries(out).map(([k, v]) => `<p class="error"><strong>${esc(k)}</strong>: ${esc(v)}</p>`).join('\n'));
    },
    interactions: {
      url: async (ctx, interaction) => `/interaction/${interaction.uid}`,
    },
    ttl: {
      AccessToken: () => ttl.AccessToken ?? accessTokenTtl,
      ClientCredentials: () => ttl.ClientCredentials ?? accessTokenTtl,
      AuthorizationCode: ttl.AuthorizationCode ?? 60,
      DeviceCode: ttl.DeviceCode ?? 600,
      Grant: ttl.Grant ?? 14 * 24 * 3600,
      IdToken: ttl.IdToken ?? 3600,
      Interaction: ttl.Interaction ?? 3600,
      RefreshToken: ttl.RefreshToken ?? 14 * 24 * 3600,
      Session: ttl.Session ?? 14 * 24 * 3600,
    },
  };

  const provider = new Provider(issuer, configuration);
  provider.on('server_error', (ctx, err) => log('server_error', ctx.method, ctx.path, err.stack ?? err));
  return provider;
}

// --- our interaction (login) pages -------------------------------------------

async function readBody(req, limit = 64 * 1024) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > limit) throw Object.assign(new Error('request body too large'), { status: 413 });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res, status, type, body) {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.setHeader('Cache-Control', 'no-store');
  res.end(body);
}

async function autoConsent(provider, req, res, details) {
  const { prompt: { details: missing }, params, session: { accountId } } = details;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId, clientId: params.client_id });
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  if (missing.missingResourceScopes) {
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes)) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
  }
  const grantId = await grant.save();
  const consent = details.grantId ? {} : { grantId };
  await provider.interactionFinished(req, res, { consent }, { mergeWithLastSubmission: true });
}

async function interaction(provider, users, req, res, uid, action) {
  let details;
  try {
    details = await provider.interactionDetails(req, res);
  } catch (err) {
    send(res, 400, 'text/html; charset=utf-8', page('Error', `<p class="error">${esc(err.message)}: start the sign-in again.</p>`));
    return;
  }
  if (details.uid !== uid) {
    send(res, 400, 'text/html; charset=utf-8', page('Error', '<p class="error">This sign-in is not the current one.</p>'));
    return;
  }
  const clientId = details.params.client_id;
  if (action === 'abort') {
    await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'End-User aborted interaction' }, { mergeWithLastSubmission: false });
    return;
  }
  if (details.prompt.name === 'consent') {
    await autoConsent(provider, req, res, details);
    return;
  }
  if (details.prompt.name !== 'login') {
    send(res, 400, 'text/html; charset=utf-8', page('Error', `<p class="error">unsupported prompt ${esc(details.prompt.name)}</p>`));
    return;
  }
  if (req.method === 'GET') {
    send(res, 200, 'text/html; charset=utf-8', loginPage(uid, clientId, { login: details.params.login_hint ?? '' }));
    return;
  }
  const form = new URLSearchParams(await readBody(req));
  const login = form.get('login') ?? '';
  const password = form.get('password') ?? '';
  const user = users.get(login) ?? [...users.values()].find((u) => u.email === login);
  if (!user || (user.password !== undefined && user.password !== password)) {
    send(res, 200, 'text/html; charset=utf-8', loginPage(uid, clientId, { login, error: 'Invalid login or password.' }));
    return;
  }
  await provider.interactionFinished(req, res, { login: { accountId: user.id } }, { mergeWithLastSubmission: false });
}

// --- main ----------------------------------------------------------------------

async function main() {
  let args;
  try {
    ({ values: args } = parseArgs({ options: { config: { type: 'string' }, port: { type: 'string', default: '0' } } }));
  } catch (err) {
    fail(`${err.message}\nusage: node idp.mjs --config FILE [--port 0]`);
  }
  if (!args.config) fail('usage: node idp.mjs --config FILE [--port 0]');
  const port = Number(args.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port ${args.port}: not a port number`);
  const cfg = loadConfig(args.config);

  const cookieKeys = [crypto.randomBytes(32).toString('base64url')];
  let signingKeys = newKeySet(); // sign new tokens
  let publishedKeys = signingKeys; // signing keys first: oidc-provider signs with the first fit
  let provider;
  let handler;
  let down = null; // null | '503' | 'hang' | 'reset'
  let held = []; // requests held while down in "hang" mode
  let counts = {};

  const keysInfo = () => ({
    kids: publishedKeys.map((k) => k.kid),
    signing: Object.fromEntries(signingKeys.map((k) => [k.alg, k.kid])),
  });

  async function install(issuer) {
    let next;
    try {
      next = buildProvider(issuer, cfg, publishedKeys, cookieKeys);
    } catch (err) {
      fail(`oidc-provider refuses the configuration: ${err.message}`);
    }
    // Static clients are checked when first used: check them now, so a bad
    // client fails at start (exit 2), not in the middle of a test.
    for (const c of cfg.clients) {
      try {
        await next.Client.find(c.client_id);
      } catch (err) {
        fail(`client ${c.client_id}: ${err.error_description ?? err.message}`);
      }
    }
    provider = next;
    handler = next.callback();
  }

  function json(res, status, body) {
    send(res, status, 'application/json', `${JSON.stringify(body)}\n`);
  }

  async function control(req, res, path) {
    let body = {};
    if (req.method === 'POST') {
      const text = await readBody(req);
      if (text.trim()) {
        try {
          body = JSON.parse(text);
        } catch {
          json(res, 400, { error: 'body is not JSON' });
          return;
        }
        if (!isObject(body)) {
          json(res, 400, { error: 'body must be a JSON object' });
          return;
        }
      }
    }
    const route = `${req.method} ${path}`;
    const groups = path.match(/^\/_test\/users\/([^/]+)\/groups$/);
    if (route === 'POST /_test/rotate-keys') {
      const fresh = newKeySet();
      const previous = publishedKeys;
      signingKeys = fresh;
      publishedKeys = body.keep_old === true ? [...fresh, ...previous] : fresh;
      await install(provider.issuer);
      log('keys rotated:', JSON.stringify(keysInfo()));
      json(res, 200, keysInfo());
    } else if (route === 'GET /_test/keys') {
      json(res, 200, keysInfo());
    } else if (groups && req.method === 'POST') {
      const user = cfg.users.get(decodeURIComponent(groups[1]));
      if (!user) {
        json(res, 404, { error: `no user ${groups[1]}` });
      } else if (!isStringArray(body.groups)) {
        json(res, 400, { error: 'body must be {"groups": [strings]}' });
      } else {
        user.groups = [...body.groups];
        log(`user ${user.id} groups:`, JSON.stringify(user.groups));
        json(res, 200, { sub: user.id, email: user.email, name: user.name, groups: user.groups });
      }
    } else if (route === 'POST /_test/down') {
      const mode = body.mode ?? '503';
      if (!['503', 'hang', 'reset'].includes(mode)) {
        json(res, 400, { error: 'mode must be "503", "hang" or "reset"' });
        return;
      }
      down = mode;
      log('down:', mode);
      json(res, 200, { down: mode });
    } else if (route === 'POST /_test/up') {
      down = null;
      const waiting = held;
      held = [];
      log('up');
      for (const resume of waiting) resume();
      json(res, 200, { down: null });
    } else if (route === 'GET /_test/requests') {
      json(res, 200, counts);
    } else if (route === 'POST /_test/requests/reset') {
      counts = {};
      json(res, 200, counts);
    } else {
      json(res, 404, { error: `no test endpoint ${route}` });
    }
  }

  async function serve(req, res) {
    const url = new URL(req.url, 'http://127.0.0.1');
    const path = url.pathname;
    if (path.startsWith('/_test/')) {
      await control(req, res, path);
      return;
    }
    counts[path] = (counts[path] ?? 0) + 1;
    res.on('finish', () => log(req.method, path, res.statusCode));
    if (down === 'reset') {
      req.socket.destroy();
      log(req.method, path, 'reset (down)');
      return;
    }
    if (down === 'hang') {
      await new Promise((resolve) => { held.push(resolve); });
    }
    if (down === '503') {
      json(res, 503, { error: 'temporarily_unavailable', error_description: 'the identity provider is down (test)' });
      return;
    }
    const m = path.match(/^\/interaction\/([^/]+)(\/abort)?$/);
    if (m && (req.method === 'GET' || (req.method === 'POST' && !m[2]))) {
      await interaction(provider, cfg.users, req, res, m[1], m[2] ? 'abort' : 'login');
      return;
    }
    handler(req, res);
  }

  const server = http.createServer((req, res) => {
    serve(req, res).catch((err) => {
      log('error', req.method, req.url, err.stack ?? err);
      if (!res.headersSent) json(res, err.status ?? 500, { error: 'server_error', error_description: err.message });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const issuer = `http://127.0.0.1:${server.address().port}`;
  await install(issuer);

  const stop = (signal) => {
    log(`${signal}: closing`);
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  log(`ready at ${issuer}; kids ${keysInfo().kids.join(' ')}`);
  process.stdout.write(`${JSON.stringify({ issuer, pid: process.pid })}\n`);
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    console.error(`idp: config error: ${err.message}`);
    process.exit(2);
  }
  console.error('idp: failed to start:', err.stack ?? err);
  process.exit(1);
});
