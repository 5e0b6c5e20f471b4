/* global Buffer, setTimeout, clearTimeout, URLSearchParams */
// The bare minimum the benchmarks compare the real plugin against: the same accessories, the same
// webhook registrations (one refresh grant, then one registration per lock and doorbell plus the
// user hook, each with a custom header token), and one HTTP route that checks the token and the
// signature and calls updateCharacteristic. Nothing else: no dedupe, no ordering, no schema, no
// storage, no retries. Plain JS so Homebridge loads it without a build.
// With `listener: "fastify"` the route runs on Fastify, set up as the plugin's listener is (no
// logger, no schema compilers, a raw-body route): the floor for a plugin whose listener must be
// Fastify. With `checks: true` as well it also does what any plugin on that listener must do for a
// callback (the throughput baseline): the signature with its time tolerance, a zod payload schema
// (zod/v3, as the plugin), and a duplicate filter (a bounded map of EventIDs), then the two HAP
// updates. Still no ordering, no storage, no event log, no status, no retries.
//
// Config: { platform: "BenchBare", apiKey, port, locks: [{id, name}], doorbells: [{id, name}], camera (true | "secure-video"), listener, checks,
//           cloud: { baseUrl, authUrl, clientId, clientSecret, refreshToken } (optional: no cloud calls without it) }
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, request } from 'node:http';

const PLUGIN = 'homebridge-bench-bare';
const PLATFORM = 'BenchBare';

export default (api) => {
  api.registerPlatform(PLUGIN, PLATFORM, BarePlatform);
};

/** HMAC-SHA256 of `t.body` keyed by the API key, hex, compared in constant time. */
const TOKEN_HEADER = 'x-bare-token';

/** One JSON (or form) request over node:http, as the plugin makes them; resolves with status, headers and parsed body. */
function call(url, method, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, 'content-length': Buffer.byteLength(body ?? '') } }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: json });
      });
    });
    req.on('error', reject);
    req.end(body ?? '');
  });
}

function sameText(got, want) {
  if (typeof got !== 'string') return false;
  const a = Buffer.from(got);
  const b = Buffer.from(want);
  return a.length === b.length && timingSafeEqual(a, b);
}

function verify(header, raw, apiKey) {
  if (typeof header !== 'string') return false;
  let t;
  const sigs = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return false;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') t = value;
    else if (key === 'v') sigs.push(value);
  }
  if (t === undefined || Math.abs(Date.now() / 1000 - Number(t.length === 13 ? Number(t) / 1000 : t)) > 300) return false;
  const expected = createHmac('sha256', apiKey).update(`${t}.`).update(raw).digest();
  return sigs.some((v) => {
    const got = Buffer.from(v, 'hex');
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}

/** The payload schemas the checked route applies: the lock operation and door shapes of the spec, and the doorbell's. */
async function payloadSchemas() {
  const { z } = await import('zod/v3');
  const user = z.object({ UserID: z.string(), FirstName: z.string().optional(), LastName: z.string().optional(), imageInfo: z.unknown().optional() }).passthrough();
  const lockBase = { LockID: z.string().min(1), EventID: z.string().optional(), Timestamp: z.unknown(), timeStamp: z.unknown(), Device: z.string().optional(), User: user.optional() };
  return {
    operation: z.object({ ...lockBase, EventType: z.enum(['operation', 'status']), Event: z.enum(['lock', 'unlock', 'onetouchlock']) }).passthrough(),
    door: z.object({ ...lockBase, EventType: z.literal('operation'), Event: z.enum(['open', 'closed', 'ajar', 'init', 'unknown']) }).passthrough(),
    doorbell: z.object({ DoorbellID: z.string().min(1), EventType: z.string(), EventID: z.string().optional(), Timestamp: z.unknown() }).passthrough(),
  };
}

/** Remembers EventIDs for a day, at most `max` of them, oldest dropped first. */
class SeenIds {
  constructor(max) {
    this.max = max;
    this.ids = new Map();
  }

  /** True when the id is new (and remembers it). */
  add(id, now) {
    const until = this.ids.get(id);
    if (until !== undefined && until > now) return false;
    this.ids.delete(id);
    this.ids.set(id, now + 86_400_000);
    if (this.ids.size > this.max) this.ids.delete(this.ids.keys().next().value);
    return true;
  }
}

class BarePlatform {
  constructor(log, config, api) {
    this.log = log;
    this.config = config;
    this.api = api;
    this.cached = new Map();
    this.locks = new Map();
    this.doorbells = new Map();
    this.token = randomBytes(24).toString('base64url');
    this.seen = new SeenIds(50_000);
    api.on('didFinishLaunching', () => {
      this.setUp();
      this.listen();
      this.register().then(
        (n) => this.log.info(`bare registrations done: ${n}`),
        (error) => this.log.error(`bare registrations failed: ${error.message}`),
      );
    });
  }

  configureAccessory(accessory) {
    this.cached.set(accessory.UUID, accessory);
  }

  accessoryFor(kind, entry, category) {
    const uuid = this.api.hap.uuid.generate(`${kind}:${entry.id}`);
    const cached = this.cached.get(uuid);
    if (cached) return { accessory: cached, fresh: false };
    return { accessory: new this.api.platformAccessory(entry.name, uuid, category), fresh: true };
  }

  setUp() {
    const { Service, Characteristic, Categories } = this.api.hap;
    const fresh = [];
    for (const entry of this.config.locks ?? []) {
      const { accessory, fresh: isNew } = this.accessoryFor('lock', entry, Categories.DOOR_LOCK);
      const lock = accessory.getService(Service.LockMechanism) ?? accessory.addService(Service.LockMechanism, entry.name);
      const door = accessory.getService(Service.ContactSensor) ?? accessory.addService(Service.ContactSensor, `${entry.name} Door`);
      const battery = accessory.getService(Service.Battery) ?? accessory.addService(Service.Battery, `${entry.name} Battery`);
      battery.updateCharacteristic(Characteristic.BatteryLevel, 100);
      this.locks.set(entry.id, { lock, door });
      if (isNew) fresh.push(accessory);
    }
    for (const entry of this.config.doorbells ?? []) {
      const { accessory, fresh: isNew } = this.accessoryFor('doorbell', entry, Categories.VIDEO_DOORBELL);
      const bell = accessory.getService(Service.Doorbell) ?? accessory.addService(Service.Doorbell, entry.name);
      const motion = accessory.getService(Service.MotionSensor) ?? accessory.addService(Service.MotionSensor, `${entry.name} Motion`);
      if (this.config.camera) {
        accessory.configureController(this.camera(accessory, bell, motion, entry.name));
      }
      this.doorbells.set(entry.id, { bell, motion, timer: undefined });
      if (isNew) fresh.push(accessory);
    }
    if (fresh.length > 0) this.api.registerPlatformAccessories(PLUGIN, PLATFORM, fresh);
  }

  /**
   * The doorbell's camera. `camera: true`: snapshot-only, as the plugin's without video, so memory
   * compares like with like. `camera: "secure-video"`: the shape of the plugin's camera with video
   * (two viewers, a recording's sound, Secure Video with its own trigger sensor), still with no
   * video behind it: what HAP itself holds for that surface.
   */
  camera(accessory, bell, motion, name) {
    const { hap } = this.api;
    const snapshotOnly = this.config.camera !== 'secure-video';
    const profiles = snapshotOnly ? [hap.H264Profile.BASELINE, hap.H264Profile.MAIN] : [hap.H264Profile.BASELINE, hap.H264Profile.MAIN, hap.H264Profile.HIGH];
    const levels = snapshotOnly ? [hap.H264Level.LEVEL3_1, hap.H264Level.LEVEL4_0] : [hap.H264Level.LEVEL3_1, hap.H264Level.LEVEL3_2, hap.H264Level.LEVEL4_0];
    const refuse = (_request, callback) => callback(new Error('no video'));
    const recording = snapshotOnly ? undefined : {
      options: {
        prebufferLength: 4000,
        mediaContainerConfiguration: [{ type: hap.MediaContainerType.FRAGMENTED_MP4, fragmentLength: 4000 }],
        video: { type: hap.VideoCodecType.H264, parameters: { profiles, levels }, resolutions: [[1280, 720, 30], [1280, 720, 15], [640, 360, 30], [640, 360, 15]] },
        audio: { codecs: [{ type: hap.AudioRecordingCodecType.AAC_LC, audioChannels: 1, samplerate: [hap.AudioRecordingSamplerate.KHZ_16, hap.AudioRecordingSamplerate.KHZ_24, hap.AudioRecordingSamplerate.KHZ_32] }] },
      },
      delegate: { updateRecordingActive() {}, updateRecordingConfiguration() {}, async *handleRecordingStreamRequest() {}, closeRecordingStream() {} },
    };
    const trigger = snapshotOnly ? motion : accessory.getServiceById(hap.Service.MotionSensor, 'recording') ?? accessory.addService(hap.Service.MotionSensor, `${name} Recording`, 'recording');
    return new hap.DoorbellController({
      cameraStreamCount: snapshotOnly ? 1 : 2,
      delegate: { handleSnapshotRequest: (_request, callback) => callback(undefined, Buffer.alloc(0)), prepareStream: refuse, handleStreamRequest: refuse },
      streamingOptions: {
        supportedCryptoSuites: [hap.SRTPCryptoSuites.AES_CM_128_HMAC_SHA1_80],
        video: { codec: { profiles, levels }, resolutions: [[1280, 720, 30], [640, 360, 30], [320, 180, 15]] },
        ...(snapshotOnly ? {} : { audio: { codecs: [{ type: hap.AudioStreamingCodecType.OPUS, samplerate: [hap.AudioStreamingSamplerate.KHZ_16, hap.AudioStreamingSamplerate.KHZ_24] }] } }),
      },
      externalDoorbellService: bell,
      sensors: { motion: trigger },
      ...(recording === undefined ? {} : { recording }),
    });
  }

  /** One refresh grant, then every registration in turn, each answer's fresh access token for the next. */
  async register() {
    const cloud = this.config.cloud;
    if (!cloud) return 0;
    const form = new URLSearchParams({ grant_type: 'refresh_token', client_id: cloud.clientId, client_secret: cloud.clientSecret, refresh_token: cloud.refreshToken }).toString();
    const grant = await call(`${cloud.authUrl}/access_token`, 'POST', { 'content-type': 'application/x-www-form-urlencoded' }, form);
    if (grant.status !== 200 || typeof grant.body?.access_token !== 'string') throw new Error(`token grant answered ${grant.status}`);
    let access = grant.body.access_token;
    const base = `http://127.0.0.1:${this.config.port}`;
    const hooks = [
      ...(this.config.locks ?? []).map((l) => ({ path: `/webhook/${encodeURIComponent(l.id)}`, url: `${base}/lock/${encodeURIComponent(l.id)}`, types: ['operation', 'configuration', 'battery', 'systemstatus', 'accessmgmt'] })),
      ...(this.config.doorbells ?? []).map((d) => ({ path: `/webhook/doorbell/${encodeURIComponent(d.id)}`, url: `${base}/doorbell/${encodeURIComponent(d.id)}`, types: ['motiondetected', 'videoavailable', 'buttonpush'] })),
      { path: '/webhook/user', url: `${base}/user`, types: ['lockmembership', 'lifecycle'] },
    ];
    for (const hook of hooks) {
      const body = JSON.stringify({ url: hook.url, method: 'POST', clientID: cloud.clientId, header: TOKEN_HEADER, token: this.token, notificationTypes: hook.types });
      const answer = await call(`${cloud.baseUrl}${hook.path}`, 'POST', { 'content-type': 'application/json', 'x-svc-api-key': this.config.apiKey, 'x-svc-access-token': access }, body);
      if (answer.status !== 200) throw new Error(`registration ${hook.path} answered ${answer.status}`);
      const fresh = answer.headers['x-svc-access-token'];
      if (typeof fresh === 'string') access = fresh;
    }
    return hooks.length;
  }

  listen() {
    if (this.config.listener === 'fastify') {
      this.listenFastify().catch((error) => this.log.error(`bare listener failed: ${error.message}`));
      return;
    }
    const server = createServer((req, res) => {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        const { status, body } = this.check(req.headers, Buffer.concat(chunks));
        if (status !== 200) {
          res.writeHead(status).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        this.apply(req.url ?? '', body);
      });
    });
    server.listen(this.config.port, '127.0.0.1', () => this.log.info(`bare listener on ${this.config.port}`));
    this.api.on('shutdown', () => server.close());
  }

  async listenFastify() {
    // Loaded only for this listener, so the node:http floor never carries it.
    const { default: Fastify } = await import('fastify');
    if (this.config.checks) this.schemas = await payloadSchemas();
    const none = () => () => () => true;
    const app = Fastify({ logger: false, schemaController: { compilersFactory: { buildValidator: none, buildSerializer: none } } });
    // Every content type as raw bytes for the signature (Fastify's own JSON parser would take
    // application/json first and leave no bytes to check).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    app.post('/*', (req, reply) => {
      const { status, body } = this.check(req.headers, Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
      if (status !== 200) return reply.code(status).send();
      reply.code(200).header('content-type', 'application/json').send('{"ok":true}');
      this.apply(req.url, body);
      return reply;
    });
    await app.listen({ port: this.config.port, host: '127.0.0.1' });
    this.log.info(`bare listener on ${this.config.port}`);
    this.api.on('shutdown', () => void app.close());
  }

  /** Checks the token and the signature and parses the body: the status to answer, and the event when 200. */
  check(headers, raw) {
    if (this.config.cloud && !sameText(headers[TOKEN_HEADER], this.token)) return { status: 401 };
    if (!verify(headers['x-svc-signature'], raw, this.config.apiKey)) return { status: 401 };
    let body;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return { status: 400 };
    }
    if (!this.schemas) return { status: 200, body };
    const schema = body?.DoorbellID !== undefined ? this.schemas.doorbell : ['open', 'closed', 'ajar', 'init', 'unknown'].includes(body?.Event) ? this.schemas.door : this.schemas.operation;
    const parsed = schema.safeParse(body);
    if (!parsed.success) return { status: 400 };
    if (typeof parsed.data.EventID === 'string' && !this.seen.add(parsed.data.EventID, Date.now())) return { status: 200 };
    return { status: 200, body: parsed.data };
  }

  apply(url, body) {
    // A duplicate is answered like a new one and changes nothing.
    if (body === undefined) return;
    const { Characteristic } = this.api.hap;
    const id = decodeURIComponent(url.split('/').pop() ?? '');
    if (url.includes('/lock/')) {
      const lock = this.locks.get(id);
      if (!lock) return;
      if (body.Event === 'lock' || body.Event === 'unlock' || body.Event === 'onetouchlock') {
        const value = body.Event === 'unlock' ? 0 : 1;
        lock.lock.updateCharacteristic(Characteristic.LockCurrentState, value);
        lock.lock.updateCharacteristic(Characteristic.LockTargetState, value);
      } else if (body.Event === 'open' || body.Event === 'ajar' || body.Event === 'closed') {
        lock.door.updateCharacteristic(Characteristic.ContactSensorState, body.Event === 'closed' ? 0 : 1);
      }
    } else if (url.includes('/doorbell/')) {
      const bell = this.doorbells.get(id);
      if (!bell) return;
      if (body.EventType === 'buttonpush') {
        bell.bell.updateCharacteristic(Characteristic.ProgrammableSwitchEvent, 0);
      } else if (body.EventType === 'doorbell_motion_detected') {
        bell.motion.updateCharacteristic(Characteristic.MotionDetected, true);
        clearTimeout(bell.timer);
        bell.timer = setTimeout(() => bell.motion.updateCharacteristic(Characteristic.MotionDetected, false), (this.config.motionTimeoutSeconds ?? 1) * 1000);
      }
    }
  }
}
