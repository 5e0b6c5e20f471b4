import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

import { CHROMIUM, launchBrowser } from '../settings-ui/host.js';
import { startSimulator } from './index.js';

const HLS_JS = fileURLToPath(new URL('../../node_modules/hls.js/dist/hls.min.js', import.meta.url));

interface Playback { ended?: boolean; timeout?: boolean; duration?: number; width?: number; height?: number; errors: string[] }

describe('spec Video event lookup: the recording plays in a browser with hls.js', () => {
  it.skipIf(!existsSync(CHROMIUM))('the playlist from videoevent plays to its end in headless Chromium (needs the Debian chromium package)', { timeout: 90_000 }, async () => {
    const sim = await startSimulator({ doorbells: [{ id: 'D1' }] });
    const browser = await launchBrowser();
    try {
      const lookup = await fetch(`${sim.baseUrl}/doorbells/D1/videoevent?dvrID=0b8f5b1e-1d3c-4a8e-9d76-3f1f6c1a2b3c`, {
        headers: { 'x-svc-api-key': sim.account.apiKey, 'x-svc-access-token': sim.mintAccessToken() },
      });
      const { url: playlistUrl } = await lookup.json() as { url: string };
      const page = await browser.newPage();
      await page.setContent('<video id="v" muted playsinline></video>');
      await page.addScriptTag({ path: HLS_JS });
      const playback = await page.evaluate(async (url: string) => {
        interface HlsData { type: string; details: string; fatal: boolean }
        interface HlsInstance { on(event: string, fn: (e: unknown, d: HlsData) => void): void; loadSource(u: string): void; attachMedia(v: HTMLVideoElement): void }
        const Hls = (window as unknown as { Hls: { new(): HlsInstance; Events: Record<string, string> } }).Hls;
        const video = document.getElementById('v') as HTMLVideoElement;
        return new Promise<Playback>((resolve) => {
          const errors: string[] = [];
          const hls = new Hls();
          hls.on(Hls.Events.ERROR ?? 'hlsError', (_e, d) => {
            errors.push(`${d.type}/${d.details}`);
            if (d.fatal) resolve({ errors });
          });
          hls.on(Hls.Events.MANIFEST_PARSED ?? 'hlsManifestParsed', () => { void video.play(); });
          hls.loadSource(url);
          hls.attachMedia(video);
          video.addEventListener('ended', () => { resolve({ ended: true, duration: video.currentTime, width: video.videoWidth, height: video.videoHeight, errors }); });
          setTimeout(() => { resolve({ timeout: true, errors }); }, 30_000);
        });
      }, playlistUrl);
      expect(playback.errors).toEqual([]);
      expect(playback).toMatchObject({ ended: true, width: 160, height: 120 });
      expect(playback.duration).toBeGreaterThanOrEqual(2.5);
    } finally {
      await browser.close();
      await sim.close();
    }
  });
});
