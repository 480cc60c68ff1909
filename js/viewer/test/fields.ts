// Test data of the viewer's browser tests: a global 2° regular_ll grid with
// smooth fields on it, MARS metadata for them, and the .tgm file most tests
// open (three steps of "2t", then one message with two levels of "z").

import { encode } from "@tensogram/tensogram";

export const NLAT = 91;
export const NLON = 180;
export const AREA = [90, -180, -90, 178];
/** The steps of "2t" in makeTgm()'s file. */
export const STEPS = [0, 6, 12];

/** A smooth field on the grid: warm at the equator, a wave that moves with the step. */
export function field(step: number, shift = 0): Float32Array {
  const v = new Float32Array(NLAT * NLON);
  for (let i = 0; i < NLAT; i++) {
    const lat = ((90 - 2 * i) * Math.PI) / 180;
    for (let j = 0; j < NLON; j++) {
      const lon = ((-180 + 2 * j) * Math.PI) / 180;
      v[i * NLON + j] = 250 + 45 * Math.cos(lat) ** 2 + 8 * Math.sin(2 * lon + step / 4) * Math.cos(lat) + step + shift;
    }
  }
  return v;
}

/** MARS keys of a forecast field on the grid, with `extra` on top. */
export function mars(extra: Record<string, unknown>) {
  return { class: "od", type: "fc", date: 20260404, time: 1200, grid: "regular_ll", area: AREA, ...extra };
}

/** The byte strings one after the other: messages into a file. */
export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Messages 0–2: "2t" at each of STEPS (zstd); message 3: "z" on 500 and 850 hPa. */
export function makeTgm(): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const step of STEPS) {
    parts.push(encode({ base: [{ mars: mars({ param: "2t", levtype: "sfc", step }), units: "K" }] }, [
      { descriptor: { shape: [NLAT, NLON], dtype: "float32", compression: "zstd", zstd_level: 3 }, data: field(step) },
    ]));
  }
  parts.push(encode(
    { base: [500, 850].map((levelist) => ({ mars: mars({ param: "z", levtype: "pl", levelist, step: 0 }) })) },
    [0, 1].map((k) => ({ descriptor: { shape: [NLAT, NLON], dtype: "float32" as const }, data: field(0, 1000 * (k + 1)) })),
  ));
  return concat(parts);
}
