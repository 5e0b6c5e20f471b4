// The camera view's streams: prepared (a UDP port of ours where the viewer's RTCP reports arrive,
// and our SSRC), started, stopped. An encoded stream is one ffmpeg that sends SRTP straight to the
// viewer; a copied clip goes through the relay (copied-stream.ts). A stream also ends when its
// ffmpeg ends by itself (the clip cannot be read, a crash) or when the viewer falls silent (no
// report for a moment: it went away without a stop); `ended` says so, so the view can tell HomeKit.
// ffmpeg reads the playlist; the plugin holds at most one packet of the video at a time.
import { randomInt } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';

import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { liveArgs, type LiveAudioTarget, type LiveSource, type LiveTarget } from './live-args.js';
import { startCopiedStream, type CopyPlan, type StreamRun } from './copied-stream.js';
import { describeExit } from './ffmpeg-processes.js';
import { RtpRelay } from './rtp-relay.js';
import type { VideoRoom } from './video-room.js';

/** Before its first report, a viewer has this long (a phone on a slow network). */
export const FIRST_REPORT_GRACE_MS = 5_000;
/** After that, this much silence means the viewer is gone (it reports every half second or so). */
export const SILENT_VIEWER_MS = 1_500;
const WATCH_EVERY_MS = 250;
/** Error lines of one stream's ffmpeg that reach the log (the rest only end up in its exit line). */
const LOGGED_ERROR_LINES = 3;
/** ffmpeg warnings that say nothing to a user (a JPEG still's full-range colours). */
const HARMLESS = /deprecated pixel format used/;
/** Opus's RTP clock runs at 48 kHz whatever its sample rate. */
const OPUS_CLOCK = 48_000;

/** Where the viewer wants the video, from its SetupEndpoints. */
export interface LiveViewer {
  address: string;
  ipv6: boolean;
  port: number;
  srtpKey: Buffer;
  srtpSalt: Buffer;
  /** Its audio port and keys (sound goes there when the clip has any). */
  audio: { port: number; srtpKey: Buffer; srtpSalt: Buffer };
}

/** The sound the viewer selected, with the encoder that makes it (our SSRC and its port and keys come from the session). */
export type LiveAudioSelection = Omit<LiveAudioTarget, 'port' | 'srtpKey' | 'srtpSalt' | 'ssrc'>;

/** What the viewer selected when it started the stream. */
export type LiveSelection = Omit<LiveTarget, 'address' | 'ipv6' | 'port' | 'srtpKey' | 'srtpSalt' | 'ssrc'> & { rtcpInterval: number };

/** A fitting clip: where its last frame is kept from, and its size. */
export type CopyFacts = Pick<CopyPlan, 'lastFrameAt' | 'width' | 'height'>;

/** The stream's source: a recording's playlist, or a still picture (JPEG). */
export type LiveInput = { kind: 'recording'; playlist: string } | { kind: 'still'; image: Buffer };

interface Session {
  viewer: LiveViewer;
  ssrc: number;
  socket: Socket;
  port: number;
  heardAt?: number;
  startedAt?: number;
  run?: StreamRun;
  soundRelay?: RtpRelay;
  watch?: NodeJS.Timeout;
  /** For the doorbell's log ("camera view: ..."), whose lines carry the doorbell's name. */
  label: string;
  name: string;
}

export class LiveStreams {
  private readonly sessions = new Map<string, Session>();
  private muted = false;

  constructor(
    private readonly room: VideoRoom,
    private readonly log: Logger,
    /** A stream ended without a stop from the viewer (already logged): tell HomeKit. */
    private readonly ended: (sessionId: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  get active(): number {
    return this.sessions.size;
  }

  /** Opens our return port and picks our SSRC (the sound's is the next one). `name`: the doorbell's, for ffmpeg's own log lines. */
  async prepare(sessionId: string, viewer: LiveViewer, name: string): Promise<{ port: number; ssrc: number }> {
    const label = 'camera view';
    await this.stop(sessionId);
    const socket = createSocket(viewer.ipv6 ? 'udp6' : 'udp4');
    const session: Session = { viewer, ssrc: randomInt(1, 2 ** 31), socket, port: 0, label, name };
    socket.on('message', () => {
      session.heardAt = this.now();
    });
    socket.on('error', (error) => {
      this.log.debug(`${label}: the return port failed (${errorText(error)}).`);
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    session.port = socket.address().port;
    this.sessions.set(sessionId, session);
    return { port: session.port, ssrc: session.ssrc };
  }

  /**
   * Starts ffmpeg for a prepared session: a recording that fits is copied (`copy` says from where
   * its last frame is kept), anything else encoded. Rejects when ffmpeg cannot be started (the
   * caller refuses the stream).
   */
  async start(sessionId: string, selection: LiveSelection, input: LiveInput, audio?: LiveAudioSelection, copy?: CopyFacts): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error('the stream was not prepared');
    const { viewer } = session;
    const target: LiveTarget = { ...selection, address: viewer.address, ipv6: viewer.ipv6, port: viewer.port, srtpKey: viewer.srtpKey, srtpSalt: viewer.srtpSalt, ssrc: session.ssrc };
    let sound: LiveAudioTarget | undefined;
    if (audio !== undefined) {
      // The sound goes through a relay of its own, so that a mute can hold it back.
      const relay = await RtpRelay.open(session.socket, { address: viewer.address, ...viewer.audio, ssrc: session.ssrc + 1, payloadType: audio.payloadType, clockRate: audio.encoder === 'libopus' ? OPUS_CLOCK : audio.sampleRate });
      relay.muted = this.muted;
      session.soundRelay = relay;
      if (this.sessions.get(sessionId) !== session) {
        relay.close();
        return;
      }
      sound = { ...audio, ...viewer.audio, ssrc: session.ssrc + 1, relayPort: relay.port };
    }
    const encoder = this.room.ffmpeg?.h264Encoder ?? 'libx264';
    let logged = 0;
    const options = {
      label: `${session.name} camera view`,
      onErrorLine: (line: string) => {
        if (!HARMLESS.test(line) && logged++ < LOGGED_ERROR_LINES) this.log.warn(`${session.label}: ffmpeg says: ${line}`);
      },
    };
    let run: StreamRun;
    if (input.kind === 'recording' && copy !== undefined) {
      run = await startCopiedStream(this.room, session.socket, target, { playlist: input.playlist, ...copy, ...(sound === undefined ? {} : { audio: sound }) }, encoder, options);
      if (this.sessions.get(sessionId) !== session) {
        // The viewer closed while the relay opened.
        await run.stop();
        return;
      }
    } else {
      const source: LiveSource = input.kind === 'recording' ? { kind: 'recording', playlist: input.playlist } : { kind: 'still' };
      const encoded = this.room.spawn(liveArgs(source, target, encoder, sound), { ...options, stdin: input.kind === 'still' ? 'pipe' : 'ignore' });
      if (input.kind === 'still' && encoded.stdin) {
        // A viewer gone before the picture was read: ffmpeg closed its input, nothing to do.
        encoded.stdin.on('error', () => undefined);
        encoded.stdin.end(input.image);
      }
      run = encoded;
    }
    session.run = run;
    session.startedAt = this.now();
    void run.exited.then((exit) => {
      if (this.sessions.get(sessionId) !== session || exit.stopped) return;
      this.log.warn(`${session.label} ended: ${describeExit(exit)}.`);
      void this.close(sessionId, session);
      this.ended(sessionId);
    });
    const silence = Math.max(SILENT_VIEWER_MS, 3 * selection.rtcpInterval * 1000);
    session.watch = setInterval(() => {
      const now = this.now();
      const quiet = session.heardAt === undefined ? now - (session.startedAt ?? now) > FIRST_REPORT_GRACE_MS : now - session.heardAt > silence;
      if (!quiet || this.sessions.get(sessionId) !== session) return;
      this.log.info(`${session.label}: the viewer went away without closing the stream; it is ended.`);
      void this.close(sessionId, session);
      this.ended(sessionId);
    }, WATCH_EVERY_MS);
    session.watch.unref();
  }

  /** Ends a stream (the viewer closed it); resolves once its ffmpeg has exited. */
  async stop(sessionId: string): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    await this.close(sessionId, session);
  }

  /** Ends every stream (shutdown). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((id) => this.stop(id)));
  }

  /** The viewer muted (or unmuted) the camera's microphone: the sound of every stream is held back (or sent again) at once. */
  setMuted(muted: boolean): void {
    this.muted = muted;
    for (const session of this.sessions.values()) if (session.soundRelay) session.soundRelay.muted = muted;
  }

  private close(sessionId: string, session: Session): Promise<unknown> {
    if (this.sessions.get(sessionId) === session) this.sessions.delete(sessionId);
    if (session.watch) clearInterval(session.watch);
    session.soundRelay?.close();
    try {
      session.socket.close();
    } catch {
      // Already closed.
    }
    return session.run?.stop() ?? Promise.resolve();
  }
}
