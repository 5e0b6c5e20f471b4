// config.schema.json (the Homebridge UI form) and src/config.ts (the zod schema) must describe the same config.
import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';
import { zodToJsonSchema } from 'zod-to-json-schema';

import { configSchema } from '../src/config.js';

interface JsonNode {
  type?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  pattern?: string;
  required?: boolean | string[];
  properties?: Record<string, JsonNode>;
  items?: JsonNode;
}

interface Flat {
  type?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  pattern?: string;
  required: boolean;
}

/** Flattens a schema to path -> facts. `requiredOf` says how a node's required flag is spelled. */
function flatten(node: JsonNode, requiredOf: (parent: JsonNode, key: string, child: JsonNode) => boolean, prefix = '', out = new Map<string, Flat>()): Map<string, Flat> {
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    out.set(path, {
      type: child.type,
      default: child.default,
      enum: child.enum ?? (child.const === undefined ? undefined : [child.const]),
      minimum: child.minimum,
      maximum: child.maximum,
      minLength: child.minLength,
      pattern: child.pattern,
      required: requiredOf(node, key, child),
    });
    if (child.type === 'object') flatten(child, requiredOf, path, out);
    if (child.type === 'array' && child.items?.type === 'object') flatten(child.items, requiredOf, `${path}[]`, out);
  }
  return out;
}

const form = JSON.parse(readFileSync(new URL('../config.schema.json', import.meta.url), 'utf8')) as { pluginAlias: string; pluginType: string; singular: boolean; schema: JsonNode; layout: unknown };
const zodJson = zodToJsonSchema(configSchema(), { effectStrategy: 'input', pipeStrategy: 'input', $refStrategy: 'none' }) as JsonNode;

const fromForm = flatten(form.schema, (_parent, _key, child) => child.required === true);
const fromZod = flatten(zodJson, (parent, key) => Array.isArray(parent.required) && parent.required.includes(key));
// Homebridge writes `platform` itself; the form never shows it.
fromZod.delete('platform');

describe('config.schema.json and src/config.ts agree: the settings form cannot save what the plugin refuses', () => {
  it('declares the platform alias and type of the design', () => {
    expect(form.pluginAlias).toBe('LockAccess');
    expect(form.pluginType).toBe('platform');
    expect(form.singular).toBe(true);
  });

  it('has the same properties', () => {
    expect([...fromForm.keys()].sort()).toEqual([...fromZod.keys()].sort());
  });

  for (const [path, zodFacts] of fromZod) {
    it(`"${path}" has the same type, default, enum, bounds, length, pattern and required flag`, () => {
      const formFacts = fromForm.get(path);
      expect(formFacts, `${path} is missing from config.schema.json`).toBeDefined();
      expect(formFacts).toEqual(zodFacts);
    });
  }

  it('every property appears in the form layout', () => {
    const layout = JSON.stringify(form.layout);
    for (const [path, facts] of fromForm) {
      // Object containers are placed through their children.
      if (facts.type === 'object') continue;
      const key = path.replace(/\[\]/g, '[]');
      const inLayout = layout.includes(`"${key}"`) || layout.includes(`"key":"${key}"`);
      expect(inLayout, `${path} is not placed in the layout`).toBe(true);
    }
  });

  it('renders every secret as a password input', () => {
    const layout = form.layout as unknown[];
    const secrets = ['apiKey', 'clientSecret', 'refreshToken', 'accessToken', 'webhook.tunnel.authtoken'];
    const json = JSON.stringify(layout);
    for (const key of secrets) expect(json).toContain(`{"key":"${key}","type":"password"}`);
  });
});
