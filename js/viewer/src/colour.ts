// Colour maps as 256-entry RGB tables (from d3-scale-chromatic's
// interpolators; diverging maps flipped so that cold is blue) and the
// value → colour rule shared by the map, the image view and the colour bar.

import {
  interpolateViridis, interpolatePlasma, interpolateInferno, interpolateMagma, interpolateTurbo,
  interpolateCividis, interpolateRdBu, interpolateSpectral, interpolateRdYlBu, interpolateYlOrRd,
  interpolateBlues, interpolateGreens, interpolateGreys,
} from "d3-scale-chromatic";

const INTERPOLATORS: Record<string, { f: (t: number) => string; flip: boolean }> = {
  viridis: { f: interpolateViridis, flip: false },
  plasma: { f: interpolatePlasma, flip: false },
  inferno: { f: interpolateInferno, flip: false },
  magma: { f: interpolateMagma, flip: false },
  turbo: { f: interpolateTurbo, flip: false },
  cividis: { f: interpolateCividis, flip: false },
  coolwarm: { f: interpolateRdBu, flip: true },
  spectral: { f: interpolateSpectral, flip: true },
  rdylbu: { f: interpolateRdYlBu, flip: true },
  ylorrd: { f: interpolateYlOrRd, flip: false },
  blues: { f: interpolateBlues, flip: false },
  greens: { f: interpolateGreens, flip: false },
  greys: { f: interpolateGreys, flip: false },
};

export const COLOUR_MAPS = Object.keys(INTERPOLATORS);

function parseColour(c: string): [number, number, number] {
  const m = /rgb\((\d+),\s*(\d+),\s*(\d+)\)/.exec(c);
  if (m) return [Number(m[1]), Number(m[2]), Number(m[3])];
  const h = /#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})/i.exec(c);
  if (h) return [parseInt(h[1]!, 16), parseInt(h[2]!, 16), parseInt(h[3]!, 16)];
  return [0, 0, 0];
}

const tables = new Map<string, Uint8Array>();

/** 256 RGB triplets of a colour map. */
export function colourTable(name: string, reverse = false): Uint8Array {
  const key = `${name}:${reverse}`;
  const known = tables.get(key);
  if (known) return known;
  const spec = INTERPOLATORS[name] ?? INTERPOLATORS["viridis"]!;
  const t = new Uint8Array(256 * 3);
  for (let i = 0; i < 256; i++) {
    let x = i / 255;
    if (spec.flip !== reverse) x = 1 - x;
    const [r, g, b] = parseColour(spec.f(x));
    t.set([r, g, b], i * 3);
  }
  tables.set(key, t);
  return t;
}

export interface ColourScale {
  table: Uint8Array;
  min: number;
  max: number;
  /** 0 for a continuous scale, else the number of filled bands (contour mode). */
  bands: number;
}

/** Index into the table (0…255) of a value, or -1 for NaN (drawn transparent). */
export function colourIndex(s: ColourScale, v: number): number {
  if (Number.isNaN(v)) return -1;
  let t = s.max > s.min ? (v - s.min) / (s.max - s.min) : 0.5;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  if (s.bands > 0) t = (Math.min(Math.floor(t * s.bands), s.bands - 1) + 0.5) / s.bands;
  return Math.round(t * 255);
}

/** Finite min and max of the values (NaN skipped). */
export function finiteRange(values: ArrayLike<number>): { min: number; max: number } {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return Number.isFinite(min) ? { min, max } : { min: 0, max: 1 };
}

/** Five "nice" tick values between min and max. */
export function ticks(min: number, max: number, n = 5): number[] {
  if (!(max > min)) return [min];
  return Array.from({ length: n }, (_, i) => min + ((max - min) * i) / (n - 1));
}

export function formatValue(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(3);
  return Number(v.toPrecision(6)).toString();
}
