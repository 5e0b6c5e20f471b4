/* global homebridge, Hls, window, document, localStorage, setTimeout, clearTimeout */
// The Lock Access settings page. Runs inside the Homebridge UI's iframe with `window.homebridge`
// injected. Everything shown comes from our server (homebridge-ui/server.js), which never returns
// a secret; user-supplied text is always set with textContent, never parsed as HTML.
(() => {
  'use strict';

  const PLATFORM = 'LockAccess';
  const POLL_MS = 3000;
  const SECRETS = ['apiKey', 'clientSecret'];
  const REDIRECT_KEY = 'lock-access-redirect-uri';
  const DEFAULT_REDIRECT = 'https://localhost/lock-access/linked';

  /** The plugin's config block, secrets included: held in memory only, never written into the page. */
  let block = { platform: PLATFORM, name: 'Lock Access' };
  /** Devices the service listed after "Find my devices". */
  let discovered = { locks: [], doorbells: [] };
  let pluginDevices = [];
  /** People the event log names (from /people), newest first. */
  let seenPeople = [];
  /** The event log as last fetched, newest first: kept to re-filter it by person. */
  let lastEvents = [];
  let lastStatusJson = '';
  let lastEventsJson = '';
  let lastMatterJson = '';
  let lastDevicesKey = '';
  let lastPeopleKey = '';
  let pollTimer;
  let hls;

  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs ?? {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = value;
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children) if (child !== undefined && child !== null) node.append(child);
    return node;
  }

  function when(epochMs) {
    if (epochMs === undefined || epochMs === null) return 'never';
    const date = new Date(epochMs);
    return Number.isNaN(date.getTime()) ? 'never' : date.toLocaleString();
  }

  function say(target, message, kind) {
    const box = $(target);
    box.textContent = message;
    box.className = `mt-2 small text-${kind === 'error' ? 'danger' : kind === 'ok' ? 'success' : 'body'}`;
  }

  // ------------------------------------------------------------------ config

  function getPath(obj, path) {
    return path.split('.').reduce((value, key) => (value && typeof value === 'object' ? value[key] : undefined), obj);
  }

  function setPath(obj, path, value) {
    const keys = path.split('.');
    let target = obj;
    for (const key of keys.slice(0, -1)) {
      if (!target[key] || typeof target[key] !== 'object') target[key] = {};
      target = target[key];
    }
    const last = keys[keys.length - 1];
    if (value === undefined || value === '') Reflect.deleteProperty(target, last);
    else target[last] = value;
  }

  async function pushConfig() {
    await homebridge.updatePluginConfig([block]);
  }

  function fillAccountForm() {
    for (const input of document.querySelectorAll('[data-field]')) {
      const value = getPath(block, input.dataset.field);
      if (input.dataset.type === 'boolean') input.checked = value === undefined ? input.dataset.default === 'true' : Boolean(value);
      else input.value = value === undefined ? '' : String(value);
    }
    for (const input of document.querySelectorAll('[data-secret]')) {
      const saved = typeof block[input.dataset.secret] === 'string' && block[input.dataset.secret] !== '';
      input.value = '';
      input.placeholder = saved ? 'Saved (leave empty to keep it)' : 'Not set';
    }
    $('redirectUri').value = localStorage.getItem(REDIRECT_KEY) || DEFAULT_REDIRECT;
  }

  function wireAccountForm() {
    for (const input of document.querySelectorAll('[data-field]')) {
      input.addEventListener('change', async () => {
        let value;
        if (input.dataset.type === 'boolean') value = input.checked;
        else if (input.dataset.type === 'number') value = input.value === '' ? undefined : Number(input.value);
        else value = input.value.trim();
        setPath(block, input.dataset.field, value);
        await pushConfig();
      });
    }
    for (const input of document.querySelectorAll('[data-secret]')) {
      input.addEventListener('change', async () => {
        // Empty keeps the saved secret; only a typed value replaces it.
        const value = input.value.trim();
        if (value !== '') block[input.dataset.secret] = value;
        await pushConfig();
      });
    }
    $('redirectUri').addEventListener('change', () => localStorage.setItem(REDIRECT_KEY, $('redirectUri').value.trim()));
  }

  /** What the server needs to reach the service: the current (maybe unsaved) account fields. */
  function account() {
    const fields = { clientId: block.clientId, baseUrl: block.baseUrl, authUrl: block.authUrl, publicUrl: getPath(block, 'webhook.publicUrl') };
    for (const key of SECRETS) fields[key] = block[key];
    for (const key of Object.keys(fields)) if (typeof fields[key] !== 'string' || fields[key] === '') Reflect.deleteProperty(fields, key);
    return fields;
  }

  async function call(path, body, resultBox) {
    try {
      return await homebridge.request(path, body);
    } catch (error) {
      const message = (error && error.message) || String(error);
      if (resultBox) say(resultBox, message, 'error');
      else homebridge.toast.error(message, 'Lock Access');
      return undefined;
    }
  }

  async function busy(button, fn) {
    button.disabled = true;
    try {
      await fn();
    } finally {
      button.disabled = false;
    }
  }

  // ------------------------------------------------------------------ account actions

  function wireAccountActions() {
    $('oauth-start').addEventListener('click', (event) => busy(event.currentTarget, async () => {
      const redirectUri = $('redirectUri').value.trim();
      localStorage.setItem(REDIRECT_KEY, redirectUri);
      const answer = await call('/oauth/start', { account: account(), redirectUri }, 'account-result');
      if (!answer) return;
      const link = el('a', { href: answer.url, target: '_blank', rel: 'noopener', id: 'oauth-url', text: 'Sign in to Lock Access' });
      $('oauth-link').replaceChildren('If no new tab opened: ', link, '. Then paste the address you end up on below.');
      window.open(answer.url, '_blank', 'noopener');
      say('account-result', 'Allow access on the Lock Access page, then paste the address you end up on.', 'info');
    }));

    $('oauth-finish').addEventListener('click', (event) => busy(event.currentTarget, async () => {
      const answer = await call('/oauth/finish', { account: account(), redirectUrl: $('redirectUrl').value }, 'account-result');
      if (!answer) return;
      $('redirectUrl').value = '';
      $('oauth-link').replaceChildren();
      say('account-result', answer.message, 'ok');
      homebridge.toast.success('Account linked', 'Lock Access');
      await refresh();
    }));

    $('link-token').addEventListener('click', (event) => busy(event.currentTarget, async () => {
      const answer = await call('/link/refresh-token', { account: account(), refreshToken: $('refreshToken').value }, 'account-result');
      $('refreshToken').value = '';
      if (!answer) return;
      say('account-result', answer.message, 'ok');
      homebridge.toast.success('Account linked', 'Lock Access');
      await refresh();
    }));

    $('test-connection').addEventListener('click', (event) => busy(event.currentTarget, async () => {
      say('account-result', 'Testing…', 'info');
      const answer = await call('/test-connection', { account: account() }, 'account-result');
      if (answer) say('account-result', answer.message, answer.ok ? 'ok' : 'error');
    }));

    // Two clicks instead of a dialog: a dialog inside the settings iframe is easy to miss.
    let unlinkArmed;
    $('unlink').addEventListener('click', (event) => {
      const button = event.currentTarget;
      if (!unlinkArmed) {
        button.textContent = 'Click again to unlink';
        unlinkArmed = setTimeout(() => {
          unlinkArmed = undefined;
          button.textContent = 'Unlink account';
        }, 5000);
        return;
      }
      clearTimeout(unlinkArmed);
      unlinkArmed = undefined;
      button.textContent = 'Unlink account';
      void busy(button, async () => {
        say('account-result', 'Deleting the webhook registrations and the stored tokens…', 'info');
        const answer = await call('/unlink', { account: account() }, 'account-result');
        if (!answer) return;
        // Registrations the unlink could not delete are named, each with its reason.
        const left = answer.left ?? [];
        say('account-result', answer.message, left.length > 0 ? 'error' : 'ok');
        if (left.length > 0) {
          $('account-result').append(el('ul', { class: 'mb-0 ps-3', id: 'unlink-left' },
            ...left.map((row) => el('li', { 'data-kind': row.kind, 'data-id': row.id, text: `${row.scope}: ${row.error}` }))));
        }
        await refresh();
      });
    });

    $('save').addEventListener('click', (event) => busy(event.currentTarget, async () => {
      await pushConfig();
      await homebridge.savePluginConfig();
      homebridge.toast.success('Settings saved. Restart Homebridge to apply them.', 'Lock Access');
      fillAccountForm();
    }));
  }

  // ------------------------------------------------------------------ status

  const LINK_WORDS = {
    linked: ['Linked', 'bg-success'],
    unlinked: ['Not linked', 'bg-secondary'],
    reauthorizationNeeded: ['Link again', 'bg-danger'],
    notConfigured: ['Not configured', 'bg-secondary'],
  };

  // Why callbacks were refused, in words; the cause to fix comes first.
  const REJECTION_WORDS = {
    'stale-timestamp': 'Signature time too far off (check this machine\'s clock)',
    'bad-signature': 'Signature does not match the API key',
    'bad-token': 'Wrong webhook token (old registration?)',
    'missing-token': 'No webhook token',
    'missing-signature': 'No signature',
    'malformed-signature': 'Unreadable signature',
  };

  function offsetWords(ms) {
    const minutes = Math.round(Math.abs(ms) / 60000);
    const size = minutes >= 120 ? `${Math.round(minutes / 60)} hours` : minutes >= 1 ? `${minutes} min` : `${Math.round(Math.abs(ms) / 1000)} s`;
    return `${size} ${ms >= 0 ? 'ahead of' : 'behind'}`;
  }

  function renderStatus(status) {
    const [words, colour] = LINK_WORDS[status.link.state] ?? [status.link.state, 'bg-secondary'];
    const badge = $('link-badge');
    badge.textContent = words;
    badge.className = `badge ${colour}`;
    badge.dataset.state = status.link.state;
    $('link-message').textContent = status.link.message;

    const plugin = status.plugin;
    $('plugin-running').textContent = !plugin
      ? 'The plugin has not run yet: save the settings and restart Homebridge.'
      : status.pluginRunning
        ? `The plugin is running (status from ${when(plugin.updatedAt)}).`
        : `The plugin is not running; this is its status from ${when(plugin.updatedAt)}.`;
    $('status-updated').textContent = `Refreshed ${new Date().toLocaleTimeString()}`;

    const check = plugin?.selfCheck;
    $('self-check').replaceChildren(
      !check
        ? 'Not checked yet.'
        : el('span', { class: check.state === 'ok' ? 'text-success' : check.state === 'failed' ? 'text-danger' : '', 'data-state': check.state },
          `${check.state === 'ok' ? 'OK' : check.state === 'failed' ? 'Failed' : 'Checking'}: ${check.message}${check.url && !check.message.includes(check.url) ? ` (${check.url})` : ''}${check.checkedAt ? `, ${when(check.checkedAt)}` : ''}`),
    );

    const receiver = plugin?.receiver;
    $('receiver').textContent = !receiver
      ? 'Not started yet.'
      : `${receiver.listening ? `Listening${receiver.listenAddress ? ` on ${receiver.listenAddress}` : ''}` : 'Not listening'}; ${receiver.accepted} accepted, ${receiver.duplicates} duplicates dropped.`;
    const rejected = Object.entries(receiver?.rejected ?? {});
    const lastRejection = receiver?.lastRejection;
    $('rejected').replaceChildren(
      rejected.length === 0
        ? 'None.'
        : el('ul', { class: 'mb-0 ps-3' }, ...rejected.map(([reason, count]) => el('li', { 'data-reason': reason, text: `${REJECTION_WORDS[reason] ?? reason}: ${count}` }))),
      ...(lastRejection?.clockOffsetMs === undefined
        ? []
        : [el('div', { class: 'text-danger', id: 'clock-offset', text: `This machine's clock is ${offsetWords(lastRejection.clockOffsetMs)} the service's (${when(lastRejection.at)}): callbacks are refused and lost. Set up time sync (NTP) on this machine.` })]),
    );

    const names = new Map((plugin?.devices ?? []).map((d) => [`${d.kind}:${d.id}`, d.name]));
    const regBody = $('registrations').querySelector('tbody');
    const regs = plugin?.registrations ?? [];
    regBody.replaceChildren(
      ...(regs.length === 0
        ? [el('tr', {}, el('td', { colspan: 4, class: 'text-muted', text: 'None yet.' }))]
        : regs.map((r) => el('tr', { 'data-kind': r.kind, 'data-id': r.id },
          el('td', { text: r.kind === 'user' ? 'Your account (user)' : `${r.kind === 'lock' ? 'Lock' : 'Doorbell'} ${r.name ?? names.get(`${r.kind}:${r.id}`) ?? r.id}` }),
          el('td', { class: r.state === 'registered' ? 'text-success' : r.state === 'failed' ? 'text-danger' : '', text: r.state }),
          el('td', { text: r.lastSuccessAt ? when(Date.parse(r.lastSuccessAt)) : 'never' }),
          el('td', { class: 'text-danger', text: r.lastError ?? '' })))),
    );

    const lastBody = $('last-callbacks').querySelector('tbody');
    const last = Object.values(receiver?.lastCallbacks ?? {});
    lastBody.replaceChildren(
      ...(last.length === 0
        ? [el('tr', {}, el('td', { colspan: 2, class: 'text-muted', text: 'No callback received yet.' }))]
        : last.map((c) => el('tr', { 'data-device': `${c.deviceKind}:${c.deviceId}` },
          el('td', { text: c.deviceKind === 'user' ? 'Your account' : names.get(`${c.deviceKind}:${c.deviceId}`) ?? `${c.deviceKind} ${c.deviceId}` }),
          el('td', { text: when(c.at) })))),
    );

    pluginDevices = plugin?.devices ?? [];
    renderDevices();
  }

  // ------------------------------------------------------------------ devices

  function entryFor(kind, id, create) {
    const listKey = kind === 'lock' ? 'locks' : 'doorbells';
    if (!Array.isArray(block[listKey])) block[listKey] = [];
    let entry = block[listKey].find((e) => e.id === id);
    if (!entry && create) {
      entry = { id };
      block[listKey].push(entry);
    }
    return entry;
  }

  async function changeDevice(kind, id, key, value) {
    const entry = entryFor(kind, id, true);
    if (value === undefined || value === '' || value === false) Reflect.deleteProperty(entry, key);
    else entry[key] = value;
    await pushConfig();
    say('devices-result', 'Changed: click "Save settings" (or Save below), then restart Homebridge.', 'info');
  }

  function allDevices() {
    const byKey = new Map();
    const add = (kind, id, name, source) => {
      const key = `${kind}:${id}`;
      const known = byKey.get(key);
      if (known) known.sources.add(source);
      else byKey.set(key, { kind, id, serviceName: name, sources: new Set([source]) });
      if (name && !byKey.get(key).serviceName) byKey.get(key).serviceName = name;
    };
    for (const e of block.locks ?? []) add('lock', e.id, undefined, 'config');
    for (const e of block.doorbells ?? []) add('doorbell', e.id, undefined, 'config');
    for (const d of pluginDevices) add(d.kind, d.id, d.source === 'config' ? undefined : d.name, 'plugin');
    for (const d of discovered.locks) add('lock', d.id, d.name, 'service');
    for (const d of discovered.doorbells) add('doorbell', d.id, d.name, 'service');
    return [...byKey.values()].sort((a, b) => (a.kind === b.kind ? a.id.localeCompare(b.id) : a.kind === 'lock' ? -1 : 1));
  }

  function renderDevices() {
    const devices = allDevices();
    const key = JSON.stringify(devices.map((d) => [d.kind, d.id, d.serviceName]));
    // Redraw only when the list changes, so typing in a name field is never interrupted.
    if (key === lastDevicesKey) return;
    lastDevicesKey = key;
    $('devices-empty').hidden = devices.length > 0;
    $('devices').querySelector('tbody').replaceChildren(...devices.map((d) => {
      const entry = entryFor(d.kind, d.id, false) ?? {};
      const options = d.kind === 'lock'
        ? el('div', {},
          el('label', { class: 'form-check-label d-block' },
            el('input', { type: 'checkbox', class: 'form-check-input me-1', 'data-option': 'doorSensor', checked: entry.doorSensor === true,
              onchange: (e) => changeDevice('lock', d.id, 'doorSensor', e.currentTarget.checked) }), 'Door sensor'),
          el('label', { class: 'form-check-label d-block', title: 'For a lock already in HomeKit on its own: no lock here, only its door sensor, batteries and person triggers' },
            el('input', { type: 'checkbox', class: 'form-check-input me-1', 'data-option': 'doorSensorOnly', checked: entry.doorSensorOnly === true,
              onchange: (e) => changeDevice('lock', d.id, 'doorSensorOnly', e.currentTarget.checked) }), 'Door sensor only'))
        : el('label', {},
          'Motion stays on for ',
          el('input', { type: 'number', min: 1, max: 3600, class: 'form-control form-control-sm d-inline-block la-seconds', 'data-option': 'motionTimeoutSeconds',
            value: entry.motionTimeoutSeconds ?? '', placeholder: '30',
            onchange: (e) => changeDevice('doorbell', d.id, 'motionTimeoutSeconds', e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value)) }),
          ' s');
      return el('tr', { 'data-kind': d.kind, 'data-id': d.id },
        el('td', {}, el('div', { text: `${d.kind === 'lock' ? 'Lock' : 'Doorbell'}${d.serviceName ? `: ${d.serviceName}` : ''}` }), el('div', { class: 'text-muted', text: d.id })),
        el('td', {}, el('input', { type: 'text', class: 'form-control form-control-sm', 'data-option': 'name', value: entry.name ?? '', placeholder: d.serviceName ?? d.id,
          'aria-label': `Name in Home for ${d.serviceName ?? d.id}`,
          onchange: (e) => changeDevice(d.kind, d.id, 'name', e.currentTarget.value.trim()) })),
        el('td', {}, options),
        el('td', {}, el('input', { type: 'checkbox', class: 'form-check-input', 'data-option': 'hidden', checked: entry.hidden === true, title: 'Leave this device out of HomeKit',
          'aria-label': `Hide ${d.serviceName ?? d.id} from HomeKit`,
          onchange: (e) => changeDevice(d.kind, d.id, 'hidden', e.currentTarget.checked) })));
    }));
  }

  function wireDevices() {
    $('discover').addEventListener('click', (event) => busy(event.currentTarget, async () => {
      const answer = await call('/discover', { account: account() }, 'devices-result');
      if (!answer) return;
      discovered = answer;
      say('devices-result', `Found ${answer.locks.length} lock(s) and ${answer.doorbells.length} doorbell(s).`, 'ok');
      renderDevices();
    }));
  }

  // ------------------------------------------------------------------ people (automation triggers)

  function configuredPeople() {
    if (!Array.isArray(block.people)) block.people = [];
    return block.people;
  }

  /** Everyone seen in the event log, then configured people the log no longer names (so they can be switched off). */
  function allPeople() {
    const rows = seenPeople.map((p) => ({ userId: p.userId, name: p.name, lastSeen: p.lastSeen }));
    for (const p of configuredPeople()) {
      if (!rows.some((r) => r.userId === p.userId)) rows.push({ userId: p.userId, name: p.name, lastSeen: undefined });
    }
    return rows;
  }

  async function setTrigger(person, on) {
    const people = configuredPeople();
    const index = people.findIndex((p) => p.userId === person.userId);
    if (on && index < 0) people.push(person.name ? { userId: person.userId, name: person.name } : { userId: person.userId });
    if (!on && index >= 0) people.splice(index, 1);
    if (people.length === 0) Reflect.deleteProperty(block, 'people');
    await pushConfig();
    say('people-result', `${on ? 'Trigger on' : 'Trigger off'} for ${person.name || person.userId}: click "Save settings", then restart Homebridge.`, 'info');
  }

  function renderPeople() {
    const people = allPeople();
    const key = JSON.stringify([people, configuredPeople().map((p) => p.userId)]);
    if (key === lastPeopleKey) return;
    lastPeopleKey = key;
    const configured = new Set(configuredPeople().map((p) => p.userId));
    $('people-empty').hidden = people.length > 0;
    $('people').querySelector('tbody').replaceChildren(...people.map((p) => {
      const label = p.name || p.userId;
      return el('tr', { 'data-user': p.userId },
        el('td', {}, el('div', { text: label }), el('div', { class: 'text-muted', text: p.userId })),
        el('td', { class: 'text-nowrap', text: p.lastSeen === undefined ? 'not in the event log' : when(p.lastSeen) }),
        el('td', {}, el('div', { class: 'form-check form-switch mb-0' },
          el('input', { type: 'checkbox', role: 'switch', class: 'form-check-input', id: `trigger-${p.userId}`, 'data-trigger': p.userId,
            checked: configured.has(p.userId), 'aria-label': `Automation trigger for ${label}`,
            onchange: (e) => setTrigger(p, e.currentTarget.checked) }))));
    }));
    // The event log's person filter offers the same people.
    const select = $('events-person');
    const chosen = select.value;
    select.replaceChildren(el('option', { value: '', text: 'everyone' }), ...people.map((p) => el('option', { value: p.userId, text: p.name || p.userId })));
    select.value = people.some((p) => p.userId === chosen) ? chosen : '';
  }

  // ------------------------------------------------------------------ event log and player

  function renderEvents(all) {
    lastEvents = all;
    const person = $('events-person').value;
    const entries = person === '' ? all : all.filter((e) => e.userId === person);
    $('events-empty').hidden = entries.length > 0;
    $('events-empty').textContent = all.length > 0 ? 'No events of this person in the log.' : 'No events yet.';
    $('events').querySelector('tbody').replaceChildren(...entries.map((e) => {
      const what = el('td', {}, el('div', { text: e.text }));
      if (e.imageUrl) {
        const img = el('img', { src: e.imageUrl, alt: `Still image: ${e.text}`, class: 'la-still mt-1' });
        // The service sends the same still as SecureURL (https) and Url (http); the plugin keeps the
        // https one. If it does not load (e.g. a certificate problem), try the plain address once.
        img.addEventListener('error', () => {
          if (img.src.startsWith('https:')) img.src = `http:${img.src.slice('https:'.length)}`;
        });
        what.append(img);
      }
      const action = e.deviceKind === 'doorbell' && e.dvrId
        ? el('button', { type: 'button', class: 'btn btn-sm btn-outline-primary', 'data-dvr': e.dvrId, text: 'Play recording',
          onclick: (event) => busy(event.currentTarget, () => play(e)) })
        : undefined;
      return el('tr', { 'data-kind': e.kind, 'data-device': `${e.deviceKind}:${e.deviceId}`, 'data-user': e.userId },
        el('td', { class: 'text-nowrap', text: when(e.at) }),
        el('td', { text: e.deviceName }),
        what,
        el('td', {}, action));
    }));
  }

  async function play(entry) {
    const box = $('player-box');
    const video = $('player');
    box.hidden = false;
    $('player-status').textContent = `Looking up the recording of ${entry.deviceName}…`;
    const answer = await call('/video', { account: account(), doorbellId: entry.deviceId, dvrId: entry.dvrId }, 'player-status');
    if (!answer) return;
    if (hls) {
      hls.destroy();
      hls = undefined;
    }
    video.dataset.source = answer.url;
    video.onloadeddata = () => {
      $('player-status').textContent = `Playing the recording of ${entry.deviceName} (${when(entry.at)}).`;
      $('player-status').dataset.state = 'playing';
    };
    $('player-status').dataset.state = 'loading';
    if (typeof Hls !== 'undefined' && Hls.isSupported()) {
      hls = new Hls();
      hls.on(Hls.Events.ERROR, (_event, data) => {
        if (data.fatal) {
          $('player-status').textContent = `The recording could not be played (${data.details}).`;
          $('player-status').dataset.state = 'error';
        }
      });
      hls.loadSource(answer.url);
      hls.attachMedia(video);
    } else if (video.canPlayType('application/vnd.apple.mpegurl')) {
      video.src = answer.url;
    } else {
      $('player-status').textContent = 'This browser cannot play recordings.';
      return;
    }
    video.play().catch(() => undefined);
  }

  // ------------------------------------------------------------------ matter

  function renderMatter(info) {
    const [words, colour] = info.active ? ['On', 'bg-success'] : info.bridgeMatter ? ['Off for this plugin', 'bg-secondary'] : ['Off', 'bg-secondary'];
    const badge = $('matter-badge');
    badge.textContent = words;
    badge.className = `badge ${colour}`;
    badge.dataset.state = info.active ? 'on' : 'off';
    $('matter-message').textContent = info.message;
    const pairing = info.active && (info.manualPairingCode || info.qrCode);
    $('matter-pairing').hidden = !pairing;
    $('matter-code').textContent = info.manualPairingCode ?? '';
    $('matter-qr').textContent = info.qrCode ?? '';
    const tested = info.testedControllers ?? { tested: [], untested: [] };
    $('matter-tested').textContent = `Tested with ${tested.tested.join('; ')}. Not tried yet: ${tested.untested.join(', ')}.`;
  }

  // ------------------------------------------------------------------ polling

  async function refresh() {
    const [status, events, matter] = await Promise.all([
      homebridge.request('/status').catch(() => undefined),
      homebridge.request('/events').catch(() => undefined),
      homebridge.request('/matter').catch(() => undefined),
    ]);
    if (matter) {
      const json = JSON.stringify(matter);
      if (json !== lastMatterJson) {
        lastMatterJson = json;
        renderMatter(matter);
      }
    }
    if (status) {
      const json = JSON.stringify(status);
      if (json !== lastStatusJson) {
        lastStatusJson = json;
        renderStatus(status);
      }
    }
    if (events) {
      const json = JSON.stringify(events);
      if (json !== lastEventsJson) {
        lastEventsJson = json;
        // The people list changes only with the log.
        const people = await homebridge.request('/people').catch(() => undefined);
        if (people) seenPeople = people;
        renderPeople();
        renderEvents(events);
      }
    }
  }

  function poll() {
    clearTimeout(pollTimer);
    pollTimer = setTimeout(async () => {
      await refresh();
      poll();
    }, POLL_MS);
  }

  async function start() {
    const blocks = await homebridge.getPluginConfig();
    block = blocks.find((b) => b.platform === PLATFORM) ?? blocks[0] ?? block;
    block.platform = PLATFORM;
    fillAccountForm();
    wireAccountForm();
    wireAccountActions();
    wireDevices();
    renderDevices();
    renderPeople();
    $('events-person').addEventListener('change', () => renderEvents(lastEvents));
    await refresh();
    poll();
  }

  if (window.homebridge) {
    homebridge.addEventListener('ready', () => {
      void start();
    });
  }
})();
