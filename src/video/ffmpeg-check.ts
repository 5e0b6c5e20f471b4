// Finds ffmpeg once at start (video.ffmpegPath, else `ffmpeg` on the PATH) and checks it can do the
// work: its version, an H.264 encoder, the HLS demuxer (the recordings are HLS) and SRTP (the camera
// view). Missing or unusable: one warning saying what ffmpeg is for and how to get it; the camera
// keeps its still pictures.
import { execFile } from 'node:child_process';

import { capabilityNames, ffmpegVersionOf, hostsOnly, protocolNames } from './ffmpeg-text.js';
import type { UiMessage } from '../util/ui-message.js';
import { ffmpegProblem } from './ffmpeg-problems.js';

/** How long each question to ffmpeg may take (a slow SD card on first start). */
const ASK_TIMEOUT_MS = 15_000;
/** Encoders of H.264 in the order they are preferred: software first (it runs everywhere ffmpeg runs). */
export const H264_ENCODERS: readonly string[] = ['libx264', 'h264_videotoolbox', 'h264_v4l2m2m', 'h264_omx', 'h264_vaapi', 'h264_qsv', 'h264_nvenc'];

export interface FfmpegInfo {
  /** What is started: the configured path, or "ffmpeg" (found on the PATH). */
  path: string;
  version: string;
  /** The H.264 encoder the plugin uses. */
  h264Encoder: string;
  encoders: ReadonlySet<string>;
  muxers: ReadonlySet<string>;
  demuxers: ReadonlySet<string>;
  protocols: ReadonlySet<string>;
}

export type FfmpegCheck =
  | { ok: true; info: FfmpegInfo }
  /** `problem`: what is wrong (never a command line); `detail`: what ffmpeg said, for the log. */
  | { ok: false; path: string; configured: boolean; problem: UiMessage; detail?: string };

/** Runs ffmpeg with `args` and answers its standard output (and error output, which -version and lists do not use). */
export type AskFfmpeg = (path: string, args: readonly string[]) => Promise<string>;

export const askFfmpeg: AskFfmpeg = (path, args) =>
  new Promise((resolve, reject) => {
    execFile(path, ['-hide_banner', ...args], { timeout: ASK_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024, windowsHide: true }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(error as Error, { stderr }));
      else resolve(stdout);
    });
  });

/** Checks the ffmpeg of `configuredPath` (or the PATH's). Never rejects. */
export async function checkFfmpeg(configuredPath: string | undefined, ask: AskFfmpeg = askFfmpeg): Promise<FfmpegCheck> {
  const configured = configuredPath !== undefined && configuredPath !== '';
  const path = configured ? configuredPath : 'ffmpeg';
  const fail = (problem: UiMessage, detail?: string): FfmpegCheck => ({ ok: false, path, configured, problem, ...(detail === undefined ? {} : { detail }) });
  let version: string | undefined;
  try {
    version = ffmpegVersionOf(await ask(path, ['-version']));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT') return fail(configured ? ffmpegProblem('videoProblem.noProgram', { path }) : ffmpegProblem('videoProblem.notOnPath'));
    if (code === 'EACCES') return fail(ffmpegProblem('videoProblem.notAllowed', { path }));
    return fail(ffmpegProblem('videoProblem.noVersion', { path }), failureWords(error));
  }
  if (version === undefined) return fail(ffmpegProblem('videoProblem.notFfmpeg', { path }));
  try {
    // One question at a time: on a small machine four ffmpeg at once take every core from the rest of start-up.
    const encoders = capabilityNames(await ask(path, ['-encoders']));
    const demuxers = capabilityNames(await ask(path, ['-demuxers']));
    const muxers = capabilityNames(await ask(path, ['-muxers']));
    const protocols = protocolNames(await ask(path, ['-protocols']));
    const h264Encoder = H264_ENCODERS.find((name) => encoders.has(name));
    if (h264Encoder === undefined) return fail(ffmpegProblem('videoProblem.noH264', { version, path }));
    if (!demuxers.has('hls')) return fail(ffmpegProblem('videoProblem.noHls', { version, path }));
    // It reads recordings from the plugin's own relay (plain http on this machine) and sends plain
    // RTP to the plugin, which protects it as SRTP: ffmpeg's own srtp is not needed.
    if (!protocols.has('http')) return fail(ffmpegProblem('videoProblem.noHttp', { version, path }));
    if (!protocols.has('rtp')) return fail(ffmpegProblem('videoProblem.noRtp', { version, path }));
    return { ok: true, info: { path, version, h264Encoder, encoders, muxers, demuxers, protocols } };
  } catch (error) {
    return fail(ffmpegProblem('videoProblem.noList', { version, path }), failureWords(error));
  }
}

/**
 * Why a question failed, without the command line (execFile's message starts with it): the exit
 * code or signal and the program's first error line.
 */
function failureWords(error: unknown): string {
  const { code, signal, killed, stderr } = error as { code?: unknown; signal?: unknown; killed?: unknown; stderr?: unknown };
  const said = typeof stderr === 'string' ? hostsOnly(stderr.trim().split('\n')[0] ?? '').slice(0, 200) : '';
  const how = killed === true ? 'no answer in time' : typeof code === 'number' ? `exit code ${code}` : typeof signal === 'string' ? `ended by ${signal}` : typeof code === 'string' ? code : 'it failed';
  return said === '' ? how : `${how}: ${said}`;
}

/** The one warning for an ffmpeg that is missing or unusable: what it is for and how to get it. */
export function ffmpegWarning(check: Extract<FfmpegCheck, { ok: false }>): string {
  return [
    `Doorbell video is off: ${check.problem.text}${check.detail === undefined ? '' : ` (${check.detail})`}.`,
    'ffmpeg plays the doorbell recordings in the Apple Home camera view and turns them into HomeKit Secure Video clips; without it the camera shows the latest still picture and everything else works.',
    'To install it: on a Raspberry Pi or Debian/Ubuntu "sudo apt install ffmpeg"; the official Homebridge Docker image and Raspberry Pi image already have it;',
    'on macOS "brew install ffmpeg".',
    check.configured ? 'Or correct video.ffmpegPath in the plugin settings (Doorbell video).' : 'Or set video.ffmpegPath in the plugin settings (Doorbell video) to the full path of an ffmpeg.',
    'Then restart Homebridge.',
  ].join(' ');
}
