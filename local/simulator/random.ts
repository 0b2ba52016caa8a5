// Deterministic randomness and ids for the simulator: a seeded PRNG and SHA-256-derived UUIDs.
import { createHash } from 'node:crypto';

export type Rng = () => number;

/** mulberry32: a tiny seeded PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function digest(parts: readonly (string | number)[]): Buffer {
  return createHash('sha256').update(parts.join('\u001f')).digest();
}

/** A PRNG seeded from any key parts. */
export function rngFor(...parts: (string | number)[]): Rng {
  return mulberry32(digest(parts).readUInt32BE(0));
}

/** A UUID-formatted (version 4 layout) id derived from the key parts. */
export function deterministicUuid(...parts: (string | number)[]): string {
  const bytes = digest(parts).subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function pick<T>(rng: Rng, items: readonly T[]): T {
  const item = items[Math.floor(rng() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

export function round(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

export function between(rng: Rng, min: number, max: number, decimals: number): number {
  return round(min + rng() * (max - min), decimals);
}

export function shuffle<T>(rng: Rng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rng() * (i + 1));
    const a = out[i] as T;
    out[i] = out[j] as T;
    out[j] = a;
  }
  return out;
}
