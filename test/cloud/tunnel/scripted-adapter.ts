// A tunnel adapter whose every open() answers from a script: an origin, or a TunnelError. Opens
// and closes are written down, so a test reads the tunnel's whole life.
import { TunnelError, type TunnelAdapter, type TunnelProblem, type TunnelTarget } from '../../../src/cloud/tunnel/tunnel-adapter.js';

export type Scripted = { origin: string } | { fail: TunnelProblem; detail?: string } | { hold: Promise<string> };

export class ScriptedAdapter implements TunnelAdapter {
  readonly provider = 'ngrok';
  readonly calls: string[] = [];
  readonly targets: TunnelTarget[] = [];

  constructor(private readonly script: Scripted[]) {}

  open(target: TunnelTarget): Promise<string> {
    this.targets.push(target);
    const next = this.script.shift();
    this.calls.push('open');
    if (next === undefined) return Promise.reject(new TunnelError('other', 'script ran out'));
    if ('origin' in next) return Promise.resolve(next.origin);
    if ('hold' in next) return next.hold;
    return Promise.reject(new TunnelError(next.fail, next.detail ?? `scripted ${next.fail}`));
  }

  close(): Promise<void> {
    this.calls.push('close');
    return Promise.resolve();
  }
}
