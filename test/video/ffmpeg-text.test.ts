import { describe, expect, it } from 'vitest';

import { capabilityNames, ffmpegVersionOf, hostOnly, hostsOnly, protocolNames } from '../../src/video/ffmpeg-text.js';

describe('ffmpeg output is logged with every address cut to its host', () => {
  it('a signed playlist or segment link keeps only scheme and host', () => {
    const line = "[hls,applehttp @ 0x55] HTTP error 404 Not Found for https://cdn.example.com:8443/v/abc/seg7.ts?X-Signature=s3cr3t&Expires=9 and 'http://user:pw@10.0.0.2/p.m3u8'";
    const shown = hostsOnly(line);
    expect(shown).toBe("[hls,applehttp @ 0x55] HTTP error 404 Not Found for https://cdn.example.com:8443 and 'http://10.0.0.2'");
    expect(shown).not.toMatch(/s3cr3t|seg7|abc|user|pw@/);
  });

  it('other schemes (srtp, rtp, file) are cut too; text without an address is unchanged', () => {
    expect(hostsOnly('srtp://192.168.1.20:50000?rtcpport=50000&pkt_size=1316: Connection refused')).toBe('srtp://192.168.1.20:50000 Connection refused');
    expect(hostsOnly('file:///tmp/secret/x.ts missing')).toBe('[address] missing');
    expect(hostsOnly('Conversion failed!')).toBe('Conversion failed!');
    expect(hostOnly('not a url')).toBe('[address]');
  });
});

describe("ffmpeg's own lists are read", () => {
  it('the version from the first line, undefined for another program', () => {
    expect(ffmpegVersionOf('ffmpeg version 4.1 Copyright (c) 2000-2018\nbuilt with gcc')).toBe('4.1');
    expect(ffmpegVersionOf('ffmpeg version n6.1.1-1ubuntu Copyright')).toBe('n6.1.1-1ubuntu');
    expect(ffmpegVersionOf('GNU bash, version 5.2')).toBeUndefined();
  });

  it('encoder and format names after the rule; comma names split; the legend skipped', () => {
    const encoders = 'Encoders:\n V..... = Video\n A..... = Audio\n ------\n V..... libx264              libx264 H.264\n A..... aac                  AAC\n';
    expect([...capabilityNames(encoders)]).toEqual(['libx264', 'aac']);
    const demuxers = 'File formats:\n D. = Demuxing supported\n --\n D  hls,applehttp   Apple HTTP Live Streaming\n DE mp4             MP4\n';
    expect([...capabilityNames(demuxers)]).toEqual(['hls', 'applehttp', 'mp4']);
    expect([...protocolNames('Supported file protocols:\nInput:\n  hls\n  srtp\nOutput:\n  srtp\n')]).toEqual(['hls', 'srtp']);
  });
});
