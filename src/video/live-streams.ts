// The camera view's streams: prepared (a UDP port of ours where the viewer's RTCP reports arrive,
// and our SSRC), started, stopped. ffmpeg sends plain RTP to relays of ours, which send it on to the
// viewer as SRTP from that port (so the viewer's keys never stand in ffmpeg's command line): an
// encoded stream is one ffmpeg (encoded-stream.ts), a copied clip two in turn (copied-stream.ts).
// A stream also ends when its ffmpeg ends by itself (the clip cannot be read, a crash) or when the
// viewer falls silent (viewer-watch.ts); `ended` says so, so the view can tell HomeKit. A second
// start of one stream replaces the first: its ffmpeg and its watch end before the new one begins.
import { randomInt } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';

import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import type { LiveAudioTarget, LiveSource, LiveTarget } from './live-args.js';
import { startCopiedStream, type CopyPlan, type StreamRun } from './copied-stream.js';
import { startEncodedStream } from './encoded-stream.js';
import { describeExit } from './ffmpeg-processes.js';
import type { RelayedRecording } from './hls-relay.js';
import { RtpRelay } from './rtp-relay.js';
import { ViewerWatch } from './viewer-watch.js';
import type { VideoRoom } from './video-room.js';

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

/** The sound the viewer selected, with the encoder that makes it (its relay comes from the session). */
export type LiveAudioSelection = Omit<LiveAudioTarget, 'relay'>;

/** What the viewer selected when it started the stream. */
export type LiveSelection = Omit<LiveTarget, 'address' | 'ipv6' | 'port' | 'srtpKey' | 'srtpSalt' | 'ssrc'> & { rtcpInterval: number };

/** A fitting clip: where its last frame is kept from, and its size. */
export type CopyFacts = Pick<CopyPlan, 'lastFrameAt' | 'width' | 'height'>;

/** The stream's source: a recording opened through the HLS relay (the stream closes it when it ends), or a still picture (JPEG). */
export type LiveInput = { kind: 'recording'; recording: RelayedRecording } | { kind: 'still'; image: Buffer };

interface Session {
  viewer: LiveViewer;
  ssrc: number;
  socket: Socket;
  port: number;
  /** Counts the starts of this stream: a start that finds a later one begun gives way to it. */
  starts: number;
  run?: StreamRun;
  /** The recording the running stream reads, closed with it. */
  recording?: RelayedRecording;
  soundRelay?: RtpRelay;
  watch?: ViewerWatch;
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
    const session: Session = { viewer, ssrc: randomInt(1, 2 ** 31), socket, port: 0, starts: 0, label, name };
    socket.on('message', (packet, from) => {
      session.watch?.heard(packet, from);
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
   * caller refuses the stream). A stream already started is ended first.
   */
  async start(sessionId: string, selection: LiveSelection, input: LiveInput, audio?: LiveAudioSelection, copy?: CopyFacts): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) {
      if (input.kind === 'recording') input.recording.close();
      throw new Error('the stream was not prepared');
    }
    const turn = ++session.starts;
    await this.retire(session);
    if (input.kind === 'recording') {
      if (session.starts === turn) session.recording = input.recording;
      else input.recording.close();
    }
    // The viewer closed, or started once more, while this start waited.
    const current = (): boolean => this.sessions.get(sessionId) === session && session.starts === turn;
    if (!current()) return;
    const { viewer } = session;
    const target: LiveTarget = { ...selection, address: viewer.address, ipv6: viewer.ipv6, port: viewer.port, srtpKey: viewer.srtpKey, srtpSalt: viewer.srtpSalt, ssrc: session.ssrc };
    let sound: LiveAudioTarget | undefined;
    if (audio !== undefined) {
      // The sound goes through a relay of its own, so that a mute can hold it back.
      const relay = await RtpRelay.open(session.socket, { address: viewer.address, ...viewer.audio, ssrc: session.ssrc + 1, payloadType: audio.payloadType, clockRate: audio.encoder === 'libopus' ? OPUS_CLOCK : audio.sampleRate });
      if (!current()) {
        relay.close();
        return;
      }
      relay.muted = this.muted;
      session.soundRelay = relay;
      sound = { ...audio, relay: await relay.nextSender() };
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
      run = await startCopiedStream(this.room, session.socket, target, { playlist: input.recording.playlist, ...copy, ...(sound === undefined ? {} : { audio: sound }) }, encoder, options);
    } else {
      const source: LiveSource = { kind: input.kind };
      run = await startEncodedStream(this.room, session.socket, target, source, encoder, options, input.kind === 'still' ? input.image : input.recording.playlist, sound);
    }
    if (!current()) {
      // The viewer closed, or started again, while the relay opened.
      await run.stop();
      return;
    }
    session.run = run;
    void run.exited.then((exit) => {
      if (this.sessions.get(sessionId) !== session || session.run !== run || exit.stopped) return;
      this.log.warn(`${session.label} ended: ${describeExit(exit)}.`);
      void this.close(sessionId, session);
      this.ended(sessionId);
    });
    session.watch = new ViewerWatch(viewer, selection.rtcpInterval, () => {
      if (!current()) return;
      this.log.info(`${session.label}: the viewer went away without closing the stream; it is ended.`);
      void this.close(sessionId, session);
      this.ended(sessionId);
    }, this.now);
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
    try {
      session.socket.close();
    } catch {
      // Already closed.
    }
    return this.retire(session);
  }

  /** Ends what a start of the session began: its watch, its sound's relay, its ffmpeg. */
  private async retire(session: Session): Promise<void> {
    session.watch?.stop();
    session.watch = undefined;
    session.soundRelay?.close();
    session.soundRelay = undefined;
    const { run, recording } = session;
    session.run = undefined;
    session.recording = undefined;
    await run?.stop();
    recording?.close();
  }
}
