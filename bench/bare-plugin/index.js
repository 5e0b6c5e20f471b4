/* global Buffer, setTimeout, clearTimeout */
// The bare minimum the benchmarks compare the real plugin against: the same accessories, and one
// HTTP route that verifies the signature and calls updateCharacteristic. Nothing else: no dedupe,
// no ordering, no schema, no storage, no cloud. Plain JS so Homebridge loads it without a build.
//
// Config: { platform: "BenchBare", apiKey, port, locks: [{id, name}], doorbells: [{id, name}], camera }
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const PLUGIN = 'homebridge-bench-bare';
const PLATFORM = 'BenchBare';

export default (api) => {
  api.registerPlatform(PLUGIN, PLATFORM, BarePlatform);
};

/** HMAC-SHA256 of `t.body` keyed by the API key, hex, compared in constant time. */
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

class BarePlatform {
  constructor(log, config, api) {
    this.log = log;
    this.config = config;
    this.api = api;
    this.cached = new Map();
    this.locks = new Map();
    this.doorbells = new Map();
    api.on('didFinishLaunching', () => {
      this.setUp();
      this.listen();
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
        // The same snapshot-only camera doorbell shape as the plugin, so memory compares like with like.
        const { hap } = this.api;
        const controller = new hap.DoorbellController({
          cameraStreamCount: 1,
          delegate: {
            handleSnapshotRequest: (_request, callback) => callback(undefined, Buffer.alloc(0)),
            prepareStream: (_request, callback) => callback(new Error('snapshot only')),
            handleStreamRequest: (_request, callback) => callback(new Error('snapshot only')),
          },
          streamingOptions: {
            supportedCryptoSuites: [hap.SRTPCryptoSuites.AES_CM_128_HMAC_SHA1_80],
            video: {
              codec: { profiles: [hap.H264Profile.BASELINE, hap.H264Profile.MAIN], levels: [hap.H264Level.LEVEL3_1, hap.H264Level.LEVEL4_0] },
              resolutions: [[1280, 720, 30], [640, 360, 30], [320, 180, 15]],
            },
          },
          externalDoorbellService: bell,
          sensors: { motion },
        });
        accessory.configureController(controller);
      }
      this.doorbells.set(entry.id, { bell, motion, timer: undefined });
      if (isNew) fresh.push(accessory);
    }
    if (fresh.length > 0) this.api.registerPlatformAccessories(PLUGIN, PLATFORM, fresh);
  }

  listen() {
    const server = createServer((req, res) => {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        if (!verify(req.headers['x-svc-signature'], raw, this.config.apiKey)) {
          res.writeHead(401).end();
          return;
        }
        let body;
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          res.writeHead(400).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        this.apply(req.url ?? '', body);
      });
    });
    server.listen(this.config.port, '127.0.0.1', () => this.log.info(`bare listener on ${this.config.port}`));
    this.api.on('shutdown', () => server.close());
  }

  apply(url, body) {
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
